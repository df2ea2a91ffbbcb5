import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { expect, test } from '@playwright/test';

/** Whether anything answers HTTP on the port. */
async function answers(port: number): Promise<boolean> {
  try {
    await fetch(`http://127.0.0.1:${port}/index.html`);
    return true;
  } catch {
    return false;
  }
}

test('killing the npx that started the static server stops the server, not only npx (the port is free again)', async () => {
  const port = 4193;
  // As a user would: `npx tsx bench/serve.ts &` then `kill $!`, where $! is npx itself.
  const npx = spawn('npx', ['tsx', 'bench/serve.ts', '--port', String(port)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: npx.stdout }).on('line', (l) => l.startsWith('Serving') && resolve());
    npx.once('exit', (code) => reject(new Error(`the server exited (${code}) before serving`)));
  });
  expect(await answers(port)).toBe(true);
  npx.kill('SIGTERM');
  // The server watches the npm process above it every 500 ms.
  await expect.poll(() => answers(port), { timeout: 10_000 }).toBe(false);
});
