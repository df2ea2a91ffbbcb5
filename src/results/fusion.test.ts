import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { makeResult } from '../../test-support/fixtures/base.ts';
import { makeFusionResult } from '../../test-support/fixtures/fusion.ts';
import { formatMs } from '../markdown.ts';
import { evaluateTargets } from '../run/targets.ts';
import { FUSION_CAPTION } from '../spec/workloads/fusion.ts';
import { FUSION_TARGET, fusionTarget } from '../workloads/fusion-section.ts';
import { compareResults, comparisonToCsv, comparisonToMarkdown, parseResultFile } from './compare.ts';
import { toCsv, toJson, toMarkdown } from './export.ts';
import type { BenchResult } from './schema.ts';

const v1Quick = readFileSync(
  new URL('../../test-support/testdata/v1-ci-tiny-quick.json', import.meta.url),
  'utf8',
);
const peaks = { fmaGflops: 2000, copyGBps: 200, dispatchUs: 8, submitUs: 40 };
const layers = 30; // smollm2-135m, the fixtures' preset

describe('the fusion fixture', () => {
  const r = makeFusionResult();

  it('holds the table the summary builds from its points and recorded dispatches', () => {
    const rows = r.fusion ?? [];
    expect(rows.map((x) => x.graph)).toEqual(['fused', 'unfused']);
    const [fused, unfused] = rows;
    // 6 per layer fused (+ embedding, LM head, argmax); 16 unfused (+ the final norm too).
    expect([fused.decodeDispatches, fused.decodePerLayer]).toEqual([6 * layers + 3, 6]);
    expect([unfused.decodeDispatches, unfused.decodePerLayer]).toEqual([16 * layers + 4, 16]);
    const point = (graph: string, pass: string) => r.points.find((p) => p.graph === graph && p.pass === pass);
    expect(fused.tpotMs).toBe(point('fused', 'decode')?.tpotMs?.p50);
    expect(unfused.prefillMs).toBe(point('unfused', 'prefill')?.ttftMs?.p50);
    expect(fused.tpotRatio).toBeCloseTo(fused.tpotMs / unfused.tpotMs, 12);
    expect(unfused.tpotRatio).toBe(1);
  });
});

describe('fusion results on file', () => {
  it('round-trip through JSON and the import check, graph fields and table included', () => {
    const r = makeFusionResult();
    const back = parseResultFile(toJson(r), 'fusion.json');
    expect(back).toEqual(r);
    expect(back.spec.fuse).toBe(true);
    expect(back.model.graph).toBe('fused');
    expect(back.points.filter((p) => p.graph).map((p) => `${p.pass} ${p.graph}`)).toEqual([
      'prefill fused',
      'decode fused',
      'prefill unfused',
      'decode unfused',
    ]);
  });

  it('keeps files from before the fused graph loadable: every new field is optional', () => {
    const old = parseResultFile(v1Quick, 'v1.json');
    expect(old.fusion).toBeUndefined();
    expect(old.model.graph).toBeUndefined();
    expect(old.spec.fuse).toBeUndefined();
    expect(old.points.every((p) => p.graph === undefined)).toBe(true);
    expect(toMarkdown(old)).not.toContain('**Graph:**');
  });

  it('refuses a graph that is not one', () => {
    const r = JSON.parse(toJson(makeFusionResult())) as BenchResult;
    (r.points.at(-1) as { graph: string }).graph = 'half-fused';
    expect(() => parseResultFile(JSON.stringify(r), 'bad.json')).toThrow(/points\.\d+\.graph/);
  });
});

describe('the fusion table in the report', () => {
  it('shows each graph’s dispatches per layer, times and ratios, and names the graph rows of every point table', () => {
    const r = makeFusionResult();
    const md = toMarkdown(r);
    const [fused, unfused] = r.fusion ?? [];
    expect(md).toContain(`**${FUSION_CAPTION}**`);
    expect(md).toContain('- **Graph:** fused');
    const row = (name: string) => md.split('\n').find((l) => l.startsWith(`| ${name} | `));
    expect(row('fused')).toBe(
      `| fused | 6 | 6 | 183, 183 | ${formatMs(fused.prefillMs)} (L=256) | ${formatMs(fused.tpotMs)} (depth 128) | ${fused.prefillRatio?.toFixed(2)} | ${fused.tpotRatio?.toFixed(2)} |`,
    );
    expect(row('unfused')).toBe(
      `| unfused | 16 | 16 | 484, 484 | ${formatMs(unfused.prefillMs)} (L=256) | ${formatMs(unfused.tpotMs)} (depth 128) | 1.00 | 1.00 |`,
    );
    // The points table and the latency table name the fusion workload's points by graph.
    expect(md).toMatch(/\| decode fused \| 128 \| wall \|/);
    expect(md).toMatch(/\| prefill unfused \| 256 \|/);
    // CSV: a graph column, empty on the sweep's points.
    const csv = toCsv(r).split('\r\n');
    const graphAt = csv[0].split(',').indexOf('graph');
    expect(graphAt).toBeGreaterThan(0);
    expect(csv.slice(1, -1).map((l) => l.split(',')[graphAt])).toEqual([
      ...makeResult().points.map(() => ''),
      'fused',
      'fused',
      'unfused',
      'unfused',
    ]);
  });

  it('says when a run was built unfused, asked or not', () => {
    const base = makeFusionResult();
    expect(
      toMarkdown({
        ...base,
        spec: { ...base.spec, fuse: false },
        model: { ...base.model, graph: 'unfused' },
      }),
    ).toContain('- **Graph:** unfused (--no-fuse)');
    expect(toMarkdown({ ...base, model: { ...base.model, graph: 'unfused' } })).toContain(
      '- **Graph:** unfused (fused asked; the chosen kernel families do not take the fusions)',
    );
  });
});

describe('comparing runs with fusion points', () => {
  it('joins a run and its --no-fuse twin point for point, and never a graph with the sweep’s point', () => {
    const a = makeFusionResult();
    const b = makeFusionResult({ spec: { ...a.spec, fuse: false }, model: { ...a.model, graph: 'unfused' } });
    const cmp = compareResults([
      { name: 'fused.json', result: a },
      { name: 'unfused.json', result: b },
    ]);
    expect(cmp.warnings).toEqual([]);
    expect(cmp.rows).toHaveLength(a.points.length);
    const decode128 = cmp.rows.filter((row) => row.key.pass === 'decode' && row.key.depth === 128);
    expect(decode128.map((row) => row.key.graph)).toEqual([null, 'fused', 'unfused']);
    const md = comparisonToMarkdown(cmp);
    expect(md).toContain('| decode fused | 128 |');
    expect(md).toContain('fused.json: Apple M2 Pro, Chrome 131, smollm2-135m, graph fused,');
    expect(md).toContain('unfused.json: Apple M2 Pro, Chrome 131, smollm2-135m, graph unfused (--no-fuse),');
    const csv = comparisonToCsv(cmp).split('\r\n');
    expect(
      csv.filter((l) => l.startsWith('smollm2-135m,decode,1,128,1,')).map((l) => l.split(',')[5]),
    ).toEqual(['', 'fused', 'unfused']);
  });
});

describe('the fusion target', () => {
  const r = makeFusionResult();
  const [fused, unfused] = r.fusion ?? [];

  it('is met at or under 0.70 × the unfused TPOT with ≤ 10 dispatches per layer, and says the figures', () => {
    const t = fusionTarget(r);
    expect(fused.tpotRatio).toBeLessThan(FUSION_TARGET.tpotRatioMax);
    expect(t).toEqual({
      name: 'fused against unfused decode step (smollm2-135m)',
      target: "TPOT ≤ 0.7 × the unfused graph's in the same run, and ≤ 10 dispatches per layer",
      reached: `${fused.tpotRatio?.toFixed(2)} × (${fused.tpotMs.toFixed(2)} against ${unfused.tpotMs.toFixed(2)} ms at depth 128, wall clock); 6 dispatches per layer against 16`,
      met: true,
    });
    expect(evaluateTargets(r, peaks).map((x) => x.name)).toContain(t?.name);
  });

  it('fails on either bound, exactly at the bound passes', () => {
    const withFused = (patch: Partial<typeof fused>) =>
      fusionTarget({ ...r, fusion: [{ ...fused, ...patch }, unfused] })?.met;
    expect(withFused({ tpotRatio: 0.7 })).toBe(true);
    expect(withFused({ tpotRatio: 0.71 })).toBe(false);
    expect(withFused({ decodePerLayer: 10 })).toBe(true);
    expect(withFused({ decodePerLayer: 11 })).toBe(false);
  });

  it('is not judged without both graphs, and absent where the workload did not run', () => {
    const alone = fusionTarget({ ...r, fusion: [unfused] });
    expect(alone?.met).toBeNull();
    expect(alone?.note).toMatch(/fused graph was not measured/);
    expect(fusionTarget(makeResult())).toBeNull();
  });

  it('leaves the whole-model targets to the sweep’s points, not the fusion workload’s', () => {
    const names = evaluateTargets(r, peaks).map((t) => t.name);
    // The sweep's shallowest decode is at depth 128 as the fusion points are, its longest prefill 256.
    expect(names).toContain('whole-model prefill at L = 256');
    const onlyFusion = evaluateTargets({ ...r, points: r.points.filter((p) => p.graph) }, peaks).map(
      (t) => t.name,
    );
    expect(onlyFusion.some((n) => n.startsWith('whole-model'))).toBe(false);
  });
});
