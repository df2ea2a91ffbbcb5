import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseResultFile, ResultFileError } from './compare.ts';
import { toMarkdown } from './export.ts';

/**
 * Files written by version 0.1.0 before the schema moved to version 2, by its own CLI:
 *   npm run bench -- --preset ci-tiny --prefill 16,32 --depth 16 --gen 4 --reps 3
 *   npm run bench -- --suite kernels
 * (at commit b66d195, on SwiftShader). They must keep importing.
 */
const v1Quick = readFileSync(
  new URL('../../test-support/testdata/v1-ci-tiny-quick.json', import.meta.url),
  'utf8',
);
const v1Kernels = readFileSync(
  new URL('../../test-support/testdata/v1-kernels.json', import.meta.url),
  'utf8',
);

describe('schema version 1 files', () => {
  it('import as version 2, wall-placed, with per-point latency', () => {
    const raw = JSON.parse(v1Quick);
    const r = parseResultFile(v1Quick, 'v1.json');
    expect(r.schemaVersion).toBe(2);
    expect(r.points).toHaveLength(raw.points.length);
    for (const [i, p] of r.points.entries()) {
      const old = raw.points[i];
      expect(p.timebase).toBe('wall');
      expect(p.medianMs).toBe(old.medianMs);
      expect(p.wallMedianMs).toBe(old.medianMs);
      expect(p.wallSamplesMs).toEqual(old.samplesMs);
      expect(p.gpuSamplesMs).toBeNull();
    }
    const prefill = r.points.find((p) => p.pass === 'prefill');
    const decode = r.points.find((p) => p.pass === 'decode');
    expect(prefill?.ttftMs?.p50).toBeGreaterThan(0);
    expect(decode?.tpotMs?.p50).toBeGreaterThan(0);
    expect(r.warnings.some((w) => w.includes('pooled latency block was dropped'))).toBe(true);
    expect(r.peaks.emptyDispatchUs).toBe(raw.peaks.dispatchUs);
    expect(r.peaksAfter).toBeNull();
    // And the report renders from it.
    expect(toMarkdown(r)).toContain('| prefill | 16 | wall |');
  });

  it('keep their kernel points, placed by the GPU clock they were timed with', () => {
    const raw = JSON.parse(v1Kernels);
    const r = parseResultFile(v1Kernels, 'v1-kernels.json');
    expect(r.kernelPoints).toHaveLength(raw.kernelPoints.length);
    expect(r.kernelPoints?.every((k) => k.timebase === 'gpu')).toBe(true);
    expect(r.spec.suite).toBe('kernels');
  });

  it('turn an error string into {name, message}', () => {
    const raw = JSON.parse(v1Quick);
    raw.status = 'failed';
    raw.error = 'DeviceLostError: The GPU device was lost (driver reset). (2 finished points kept)';
    const r = parseResultFile(JSON.stringify(raw), 'lost.json');
    expect(r.error).toEqual({
      name: 'DeviceLostError',
      message: 'The GPU device was lost (driver reset). (2 finished points kept)',
    });
  });

  it('leave a version this build does not know to the version check', () => {
    const raw = JSON.parse(v1Quick);
    raw.schemaVersion = 7;
    expect(() => parseResultFile(JSON.stringify(raw), 'future.json')).toThrow(ResultFileError);
    expect(() => parseResultFile(JSON.stringify(raw), 'future.json')).toThrow(
      'future.json: schemaVersion 7 is not supported; this version reads schemaVersion 1 and 2',
    );
  });
});
