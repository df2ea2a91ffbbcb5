import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { parseSafetensors } from '../src/model/safetensors.ts';
import { runCli } from './cli.ts';

/** Runs the verify CLI against the already built dist/. */
const verify = (args: string[]) => runCli('bench/verify.ts', args, 110_000);

test('verify CLI: preset prefill matches the reference, saves the model and logits, and reloads them', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'verify-'));
  const tokens = [1, 17, 42, 7, 99];
  const first = await verify([
    '--preset',
    'ci-tiny',
    '--tokens',
    tokens.join(','),
    '--save-model',
    join(dir, 'model'),
    '--save-logits',
    join(dir, 'logits.json'),
  ]);
  expect(first.code, first.stderr).toBe(0);
  expect(first.stdout).toMatch(/adapter: .+/);
  expect(first.stdout).toMatch(/max abs err: \d/);
  expect(first.stdout).toMatch(/PASS/);

  const saved = JSON.parse(readFileSync(join(dir, 'logits.json'), 'utf8'));
  expect(saved.tokens).toEqual(tokens);
  expect(saved.logits).toHaveLength(5);
  for (const row of saved.logits) expect(row).toHaveLength(509);

  const config = JSON.parse(readFileSync(join(dir, 'model', 'config.json'), 'utf8'));
  expect(config.architectures).toEqual(['LlamaForCausalLM']);
  const tensors = parseSafetensors(new Uint8Array(readFileSync(join(dir, 'model', 'model.safetensors'))));
  expect(tensors.get('model.embed_tokens.weight')?.shape).toEqual([509, 128]);

  // The saved folder loads back through the browser and gives the same GPU logits.
  const again = await verify([
    '--model',
    join(dir, 'model'),
    '--tokens',
    tokens.join(','),
    '--save-logits',
    join(dir, 'l2.json'),
  ]);
  expect(again.code, again.stderr).toBe(0);
  expect(JSON.parse(readFileSync(join(dir, 'l2.json'), 'utf8'))).toEqual(saved);
});

test('verify CLI: bad arguments exit 2 with a clear message', async () => {
  const unknown = await verify(['--preset', 'nope', '--tokens', '1']);
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain('unknown preset "nope"');
  const outside = await verify(['--preset', 'ci-tiny', '--tokens', '1,509']);
  expect(outside.code).toBe(2);
  expect(outside.stderr).toContain('token 509 is outside the vocabulary');
  const missing = await verify(['--model', '/nonexistent-dir', '--tokens', '1']);
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain('could not load the model');
});
