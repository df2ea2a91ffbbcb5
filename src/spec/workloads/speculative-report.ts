import { escapeMarkdown, fixed, markdownDelimiter, markdownRow } from '../../markdown.ts';
import type { SpecResult } from './speculative-result.ts';

/** Speculative decoding: the verify-K curve with its knee, then the runs against plain decode. */
export function speculativeTables(s: SpecResult): string[] {
  const curve = [
    `**Verify-K curve** (a verify pass of k tokens against one decode step at the same depth; knee = largest k at ≤ ${fixed(s.kneeRatio, 1)} decode steps: ${s.knee ?? 'none'}${s.kneeByDepth.length > 1 ? `; by depth ${s.kneeByDepth.map((d) => `${d.depth}: ${d.k ?? 'none'}`).join(', ')}` : ''})`,
    '',
    markdownRow([
      'k',
      'depth',
      'clock',
      'verify ms',
      'decode ms',
      'ratio',
      'chunks',
      'GFLOP/s',
      'GB/s',
      'FLOP/B',
      'bound',
      '% roof',
    ]),
    markdownDelimiter('rrlrrrrrrrlr'),
    ...s.verifyCurve.map((p) =>
      markdownRow([
        String(p.k),
        String(p.depth),
        p.timebase,
        fixed(p.verifyMs, 2),
        fixed(p.decodeMs, 2),
        fixed(p.ratio, 2),
        String(p.chunks),
        fixed(p.gflops, 2),
        fixed(p.gbps, 2),
        fixed(p.intensity, 2),
        p.bound,
        fixed(p.roofPct, 1),
      ]),
    ),
  ];
  if (s.runs.length === 0) return curve;
  const runs = [
    `**Speculative runs** (greedy; ${escapeMarkdown(s.clock)})`,
    '',
    markdownRow([
      'drafter',
      'prompts',
      'K',
      'acceptance',
      'mean accept len',
      'per position',
      'draft ms',
      'verify ms',
      'TPOT ms',
      'plain TPOT ms',
      'speedup',
      'predicted',
      'identical',
    ]),
    markdownDelimiter('llrrrlrrrrrrl'),
    ...s.runs.map((r) =>
      markdownRow([
        `${escapeMarkdown(r.label)}${r.synthetic ? ' **(synthetic)**' : ''}`,
        `${r.promptClass} ×${r.prompts}`,
        `${r.k}${r.adaptiveK ? ' (adaptive)' : ''}`,
        `${fixed(r.acceptanceRate * 100, 1)}%`,
        fixed(r.meanAcceptanceLength, 2),
        r.perPosition.map((v) => fixed(v, 2)).join(' '),
        fixed(r.draftMs, 2),
        fixed(r.verifyMs, 2),
        fixed(r.tpotMs, 2),
        fixed(r.baselineTpotMs, 2),
        `${fixed(r.speedup, 2)}×`,
        `${fixed(r.predictedSpeedup, 2)}×`,
        r.identical === null
          ? `n/a (sampled at T = ${r.temperature})`
          : r.identical
            ? 'yes'
            : `**no** (prompt ${r.firstMismatch?.prompt}, token ${r.firstMismatch?.index})`,
      ]),
    ),
    '',
    escapeMarkdown(s.formula),
  ];
  return [...curve, '', ...runs];
}
