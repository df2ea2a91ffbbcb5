import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

describe('npm run bench -- --help', () => {
  it('prints the help without building: dist/ is not rewritten', () => {
    const page = 'dist/index.html';
    const before = existsSync(page) ? statSync(page).mtimeMs : null;
    const out = execFileSync('npm', ['run', '--silent', 'bench', '--', '--help'], { encoding: 'utf8' });
    expect(out.startsWith('Usage: npm run bench -- [options]')).toBe(true);
    // A build (the script's old `npm run build --silent && …`) writes dist/index.html anew, or creates it.
    expect(existsSync(page) ? statSync(page).mtimeMs : null).toBe(before);
  });
});
