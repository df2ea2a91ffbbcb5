import { describe, expect, it } from 'vitest';
import { makeResult } from '../../test-support/fixtures/base.ts';
import { escapeMarkdown } from '../markdown.ts';
import {
  CSV_COLUMNS,
  csvField,
  exportFormatOfPath,
  formatFor,
  MARKDOWN_POINTS_HEADER,
  toCsv,
  toJson,
  toJsonl,
  toMarkdown,
} from './export.ts';
import { BenchResultSchema } from './schema.ts';

const result = makeResult();
const pointCount = result.points.length;

describe('fixture', () => {
  it('is a valid result with prefill and decode points, some profiled', () => {
    expect(() => BenchResultSchema.parse(result)).not.toThrow();
    expect(result.points.filter((p) => p.pass === 'prefill')).toHaveLength(5);
    expect(result.points.filter((p) => p.pass === 'decode')).toHaveLength(3);
    expect(result.points.some((p) => p.kernels.length > 0)).toBe(true);
    expect(makeResult()).toEqual(result);
  });
});

describe('JSON export', () => {
  it('round-trips the full record', () => {
    const text = toJson(result);
    expect(text).toContain('\n  "schemaVersion": 2,');
    expect(BenchResultSchema.parse(JSON.parse(text))).toEqual(result);
  });
});

describe('JSONL export', () => {
  it('writes one parseable line per point with the run context and raw samples', () => {
    const text = toJsonl(result);
    expect(text.endsWith('\n')).toBe(true);
    const lines = text.trimEnd().split('\n');
    expect(lines).toHaveLength(pointCount);
    lines.forEach((line, i) => {
      const row = JSON.parse(line);
      expect(row).toMatchObject({
        preset: 'smollm2-135m',
        adapter: 'Apple M2 Pro',
        createdAt: result.createdAt,
      });
      expect(row.samplesMs).toEqual(result.points[i].samplesMs);
      expect(row.medianMs).toBe(result.points[i].medianMs);
    });
  });

  it('names the adapter by vendor/architecture when the browser hides its description', () => {
    const r = makeResult();
    r.env.adapter.description = '';
    expect(JSON.parse(toJsonl(r).split('\n')[0]).adapter).toBe('apple/metal-3');
  });
});

describe('CSV export', () => {
  it('writes the header and one row per point, with unformatted numbers and empty nulls', () => {
    const r = makeResult();
    r.points[0].gpuMedianMs = null;
    const records = toCsv(r).split('\r\n');
    expect(records.pop()).toBe('');
    expect(records).toHaveLength(pointCount + 1);
    expect(records[0]).toBe(CSV_COLUMNS.join(','));
    const first = Object.fromEntries(records[1].split(',').map((v, i) => [CSV_COLUMNS[i], v]));
    const p = r.points[0];
    expect(first).toMatchObject({
      pass: 'prefill',
      tokens: '16',
      timebase: 'wall',
      medianMs: String(p.medianMs),
      wallMedianMs: String(p.wallMedianMs),
      ci95Lo: String(p.ci95Ms[0]),
      ci95Hi: String(p.ci95Ms[1]),
      highVariance: 'true',
      gpuMedianMs: '',
      ttftP50Ms: String(p.ttftMs?.p50),
      tpotP50Ms: '',
      bound: p.bound,
    });
    const decode = Object.fromEntries(
      records
        .at(-1)
        ?.split(',')
        .map((v, i) => [CSV_COLUMNS[i], v]) ?? [],
    );
    expect(decode.ttftP50Ms).toBe('');
    expect(decode.itlP99Ms).toBe(String(r.points.at(-1)?.itlMs?.p99));
  });

  it('quotes fields as RFC 4180 says and defuses spreadsheet formulas', () => {
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csvField(-1.5)).toBe('-1.5');
    expect(csvField(null)).toBe('');
  });
});

describe('Markdown report', () => {
  const md = toMarkdown(result);

  it('has the points table with one row per point', () => {
    const lines = md.split('\n');
    const start = lines.indexOf(MARKDOWN_POINTS_HEADER);
    expect(MARKDOWN_POINTS_HEADER).toBe(
      '| pass | L/depth | clock | ms | tok/s | bound | % roof | predicted ms | GFLOP/s | GB/s | FLOP/B | wall ms | GPU ms |',
    );
    expect(start).toBeGreaterThan(0);
    const rows = lines.slice(start + 2, start + 2 + pointCount);
    expect(rows.every((row) => row.split(' | ').length === 13)).toBe(true);
    // The explaining columns first: time, speed, bound, % of roof, predicted.
    expect(rows[0]).toMatch(
      /^\| prefill \| 16 \| wall \| \d+\.\d+ ⚠ \| \d+\.\d+ \| (compute|bandwidth|overhead) \| \d+\.\d \| \d+\.\d+ \|/,
    );
    expect(rows[1]).not.toContain('⚠');
    expect(rows.at(-1)).toMatch(/^\| decode \| 1024 ×4 \| wall \|/);
  });

  it('states the roofs and ridge point, both clocks, per-point latencies and kernels', () => {
    expect(md).toContain(
      'FMA 2000.0 GFLOP/s, copy 200.0 GB/s, dispatch 8.0 µs (dependent, buffers bound; empty 3.0 µs), submit 40.0 µs; ridge point 10.0 FLOP/B',
    );
    expect(md).toContain('GPU timestamps: yes, quantized to 100 µs');
    expect(md).toContain('- **Clocks:** each point records both and says which placed it on the roofline.');
    expect(md).toContain(
      '| latency (wall clock) | L/depth | TTFT p50/p95/p99 ms | TPOT p50/p95/p99 ms | ITL p50/p95/p99 ms |',
    );
    expect(md).toMatch(/\| prefill \| 128 \| [\d.]+ \/ [\d.]+ \/ [\d.]+ \| – \| – \|/);
    expect(md).toMatch(
      /\| decode \| 512 \| – \| [\d.]+ \/ [\d.]+ \/ [\d.]+ \| [\d.]+ \/ [\d.]+ \/ [\d.]+ \|/,
    );
    expect(md).toContain('| kernel | pass L/depth | calls | ms | % of pass | GFLOP/s | GB/s |');
    expect(md).toMatch(/\| matmul \| prefill 256 \| 210 \| [\d.]+ \| 70\.0 \|/);
    expect(md).not.toContain('Fallback');
    expect(md).not.toContain('Status');
  });

  it('warns loudly about a fallback adapter and reports an unfinished run', () => {
    const r = makeResult({
      status: 'cancelled',
      error: { name: 'CancelledError', message: 'stopped by the user' },
      warnings: ['GPU was throttling'],
    });
    r.env.adapter.isFallbackAdapter = true;
    const text = toMarkdown(r);
    expect(text).toContain('**Fallback/software adapter**');
    expect(text).toContain('**Status: cancelled**: CancelledError: stopped by the user');
    expect(text).toContain('- GPU was throttling');
  });

  it('escapes strings from the file so they cannot break a table or inject markup', () => {
    const r = makeResult({ warnings: ['<img src=x onerror=alert(1)>'] });
    r.env.adapter.description = 'evil | cell\nnext line';
    r.points[4].kernels[0].name = 'a|b\n| x |';
    const text = toMarkdown(r);
    expect(text).toContain('**Adapter:** evil \\| cell next line');
    expect(text).toContain('| a\\|b \\| x \\| | prefill 256 |');
    expect(text).toContain('- \\<img src=x onerror=alert(1)\\>');
    expect(text).not.toContain('next line\n');
  });

  it('escapes Markdown punctuation and drops control characters', () => {
    expect(escapeMarkdown('[x](javascript:1) *b* `c` a\\b &amp;\u0007')).toBe(
      '\\[x\\](javascript:1) \\*b\\* \\`c\\` a\\\\b \\&amp;',
    );
    expect(escapeMarkdown('a\r\nb\tc')).toBe('a b c');
  });
});

describe('formatFor', () => {
  it('dispatches on the format', () => {
    expect(formatFor(result, 'json')).toBe(toJson(result));
    expect(formatFor(result, 'jsonl')).toBe(toJsonl(result));
    expect(formatFor(result, 'csv')).toBe(toCsv(result));
    expect(formatFor(result, 'md')).toBe(toMarkdown(result));
  });
});

describe('exportFormatOfPath', () => {
  it('reads every export format from the extension, in any case, and nothing else', () => {
    expect(exportFormatOfPath('results/small.csv')).toBe('csv');
    expect(exportFormatOfPath('out.JSONL')).toBe('jsonl');
    expect(exportFormatOfPath('a.b/run.md')).toBe('md');
    expect(exportFormatOfPath('C:\\runs\\x.json')).toBe('json');
    // Unknown, none, a dot-file, and a dot in a folder name only: no format.
    expect(exportFormatOfPath('results/small.txt')).toBeNull();
    expect(exportFormatOfPath('results/small')).toBeNull();
    expect(exportFormatOfPath('.csv')).toBeNull();
    expect(exportFormatOfPath('runs.d/small')).toBeNull();
  });
});

describe('the high-variance mark', () => {
  it('is explained under the points table when a point carries it, and only then', () => {
    const quiet = makeResult();
    for (const p of quiet.points) p.highVariance = false;
    expect(toMarkdown(quiet)).not.toContain('coefficient of variation');
    const noisy = makeResult();
    noisy.points[0].highVariance = true;
    const md = toMarkdown(noisy);
    expect(md).toContain(' ⚠ |');
    // By hand: HIGH_CV is 0.1, so the legend says 10%.
    expect(md).toContain(
      "⚠ after a median: its samples' coefficient of variation (standard deviation ÷ mean) is above 10%",
    );
  });
});
