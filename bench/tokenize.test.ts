import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { llamaPath } from '../test-support/llama-bundle.ts';

const repoRoot = resolve(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'tokenize-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI as a user would; resolves with its exit code and output instead of rejecting. */
function runTokenize(args: readonly string[]): Promise<Run> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'bench/tokenize.ts', ...args],
      { cwd: repoRoot },
      (error, stdout, stderr) => {
        done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

// Each case starts Node and tsx: about a second, several on a busy machine.
const CLI_TIMEOUT_MS = 60_000;

/** llama.cpp's vocab-only GGUF files: a header and no tensors. */
const vocab = (name: string) => llamaPath(`models/ggml-vocab-${name}.gguf`);

describe('npm run tokenize', () => {
  it(
    "prints llama-tokenize --ids' output, with its defaults: BOS, special tokens parsed, escapes processed",
    async () => {
      // As `llama-tokenize -m ggml-vocab-phi-3.gguf --ids -p '<|user|>\nhi<|end|>\x41'` prints it.
      const run = await runTokenize(['--model', vocab('phi-3'), '--text', '<|user|>\\nhi<|end|>\\x41']);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toBe('[1, 32010, 7251, 32007, 319]\n');
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'reads a file byte for byte and takes --no-bos, --no-parse-special and --no-escape',
    async () => {
      const file = join(dir, 'prompt.txt');
      writeFileSync(file, '<s>Hi\\n\n');
      const run = await runTokenize([
        '--model',
        vocab('llama-spm'),
        '--file',
        file,
        '--no-bos',
        '--no-parse-special',
        '--no-escape',
      ]);
      expect(run.code).toBe(0);
      // "▁<s>Hi\n" then the newline's byte token: as llama-tokenize with the same flags.
      expect(run.stdout).toBe('[529, 29879, 29958, 18567, 29905, 29876, 13]\n');
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'exits 2 naming the flag, or the file, at fault',
    async () => {
      const bad = await runTokenize(['--model', vocab('llama-spm'), '--txt', 'hi']);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/Unknown option '--txt'/);
      const both = await runTokenize(['--model', vocab('llama-spm')]);
      expect(both.code).toBe(2);
      expect(both.stderr).toMatch(/give --text or --file \(exactly one\)/);
      const missing = await runTokenize(['--model', join(dir, 'none.gguf'), '--text', 'hi']);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toMatch(/--model: ENOENT: no such file or directory/);
      const refused = await runTokenize(['--model', vocab('bert-bge'), '--text', 'hi']);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(
        /tokenizer\.ggml\.model "bert" is not a tokenizer this engine implements/,
      );
    },
    4 * CLI_TIMEOUT_MS,
  );
});
