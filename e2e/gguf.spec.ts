import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { type ModelConfig, presetConfig } from '../src/model/config.ts';
import { type GgufType, writeGguf } from '../src/model/gguf-writer.ts';
import { randomWeights } from '../src/model/weights.ts';
import { NATIVE, runCli } from './cli.ts';

test('verify CLI: GGUF files (F32, F16, Q8_0, Q4_0) match the reference on the GPU; a truncated one exits 2', async () => {
  test.setTimeout(160_000);
  const dir = mkdtempSync(join(tmpdir(), 'gguf-'));
  // ci-tiny with an intermediate size of 352 instead of 344: Q8_0 and Q4_0 store rows as whole
  // blocks of 32, so every inner width must be a multiple of 32.
  const config: ModelConfig = { ...presetConfig('ci-tiny'), intermediateSize: 352 };
  const weights = randomWeights(config, 11);
  const types: GgufType[] = ['F32', 'F16', 'Q8_0', 'Q4_0'];
  for (const type of types) writeFileSync(join(dir, `${type}.gguf`), writeGguf(weights, { type }));
  const tokens = '1,17,42,7,99';

  // Side by side: measured on two cores, the four runs took 46–57 s together against 78 s one after
  // another in the browser (each was mostly start-up and pipeline compilation, which overlap well).
  // Natively (NATIVE): the GGUF reader and kernels are the subject, not the runtime.
  const runs = await Promise.all(
    types.map((type) => {
      const model = join(dir, `${type}.gguf`);
      const logits = join(dir, `${type}.json`);
      return runCli(
        'bench/verify.ts',
        [...NATIVE, '--model', model, '--tokens', tokens, '--save-logits', logits],
        140_000,
      );
    }),
  );
  for (const [i, run] of runs.entries()) {
    expect(run.code, `${types[i]}: ${run.stderr}`).toBe(0);
    expect(run.stdout).toContain(`model: ${types[i]}.gguf`);
    expect(run.stdout).toMatch(/PASS: GPU logits match the CPU reference/);
  }
  const logits = types.map(
    (t) => JSON.parse(readFileSync(join(dir, `${t}.json`), 'utf8')).logits as number[][],
  );
  for (const l of logits) {
    expect(l).toHaveLength(5);
    for (const row of l) expect(row).toHaveLength(509);
  }
  // The same weights quantized differently give different logits: each run computed with its file's weights.
  expect(logits[3]).not.toEqual(logits[0]);
  expect(logits[2]).not.toEqual(logits[3]);

  // A file cut short is bad input: exit 2, naming the file and the tensor that runs past its end.
  const q8 = readFileSync(join(dir, 'Q8_0.gguf'));
  writeFileSync(join(dir, 'cut.gguf'), q8.subarray(0, q8.length - 1000));
  const cut = await runCli('bench/verify.ts', [
    ...NATIVE,
    '--model',
    join(dir, 'cut.gguf'),
    '--tokens',
    tokens,
  ]);
  expect(cut.code).toBe(2);
  expect(cut.stderr).toMatch(
    /could not load the model: cut.gguf: tensor \S+'s data \(bytes \d+…\d+\) runs past the end of the \d+-byte file \(truncated, or its byte size disagrees with its shape\)/,
  );
});
