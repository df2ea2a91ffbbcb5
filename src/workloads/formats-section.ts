import type { ModelConfig } from '../model/config.ts';
import { linearNames, linearShape } from '../model/weights.ts';
import { weightBytes } from '../quant/formats.ts';
import type { BenchResult, Point, Target } from '../results/schema.ts';
import {
  type FormatSummary,
  QUALITY_SLICES,
  type Quality,
  type TaskQuality,
} from '../spec/workloads/formats.ts';
import { WEIGHT_FORMATS, type WeightFormat } from '../weight-format.ts';

/**
 * The format sweep's table: for each format with a prefill and a decode point, the bytes its
 * linear weights take, one decode step's compulsory bytes (the cost model, scales included), its
 * TPOT and prefill time (wall clock, median) and both as ratios to f32's in the same run.
 */
export function formatSummary(points: readonly Point[], config: ModelConfig): FormatSummary[] {
  const rows: FormatSummary[] = [];
  const last = (format: WeightFormat, pass: Point['pass']) =>
    points.filter((p) => p.weightFormat === format && p.pass === pass).at(-1);
  const f32 = { decode: last('f32', 'decode'), prefill: last('f32', 'prefill') };
  for (const format of WEIGHT_FORMATS) {
    const decode = last(format, 'decode');
    const prefill = last(format, 'prefill');
    if (!decode?.tpotMs || !prefill?.ttftMs) continue;
    const tpotMs = decode.tpotMs.p50;
    const prefillMs = prefill.ttftMs.p50;
    rows.push({
      format,
      linearBytes: linearNames(config).reduce((n, name) => {
        const [N, K] = linearShape(config, name);
        return n + weightBytes(format, N, K);
      }, 0),
      decodeBytesPerToken: decode.bytes / decode.batch,
      tpotMs,
      tokensPerSec: tpotMs > 0 ? 1000 / tpotMs : 0,
      tpotRatio: f32.decode?.tpotMs ? tpotMs / f32.decode.tpotMs.p50 : null,
      prefillMs,
      prefillRatio: f32.prefill?.ttftMs ? prefillMs / f32.prefill.ttftMs.p50 : null,
    });
  }
  return rows;
}

/** One format's error on one slice against f32, or its task quality on a trained model's slice (the format sweep); nothing to place. */
export type QualityRecord =
  | { type: 'quality'; quality: Quality }
  | { type: 'taskQuality'; taskQuality: TaskQuality };

/**
 * The format sweep's TPOT ceilings, as ratios to f32's TPOT in the same run (the issue sets them on
 * smollm2-135m for the project's own formats; the GGUF types have none of their own).
 */
const TPOT_RATIO_MAX: Partial<Record<WeightFormat, number>> = { f16: 0.6, int8: 0.45, int4: 0.3 };

export function formatTargets(r: Omit<BenchResult, 'targets'>): Target[] {
  const out: Target[] = [];
  for (const f of r.formats ?? []) {
    const max = TPOT_RATIO_MAX[f.format];
    if (max === undefined || f.tpotRatio === null) continue;
    out.push({
      name: `decode TPOT, ${f.format} against f32 (${r.model.preset})`,
      target: `≤ ${max} × f32`,
      reached: `${f.tpotRatio.toFixed(2)} × (${f.tpotMs.toFixed(1)} ms against ${(f.tpotMs / f.tpotRatio).toFixed(1)} ms; ${(f.decodeBytesPerToken / 2 ** 20).toFixed(1)} MiB per token)`,
      met: f.tpotRatio <= max,
    });
  }
  const sweep = r.spec.workloads.find((w) => w.kind === 'formats');
  const tasks = r.taskQuality ?? [];
  if (tasks.length > 0) out.push(...taskTargets(tasks));
  if (sweep?.kind === 'formats' && sweep.quality && r.status === 'complete' && tasks.length === 0) {
    const formats = sweep.formats.filter((f) => f !== 'f32');
    const want = formats.length * QUALITY_SLICES.length;
    const have = new Set((r.quality ?? []).map((q) => `${q.format}:${q.slice}`)).size;
    out.push({
      name: 'error table, every format and slice',
      target: `${want} rows (${formats.join(', ')} × ${QUALITY_SLICES.join(', ')})`,
      reached: `${have} rows`,
      met: have === want,
    });
  }
  return out;
}

/** The targets for the trained model, at f32 on its held-out set: each slice's score at least this share. */
const TASK_TARGETS: readonly { slices: RegExp; what: string; min: number }[] = [
  { slices: /^add-2digit$/, what: 'two-digit addition, exact match', min: 0.9 },
  { slices: /^recall-(64|128|256|512)$/, what: 'recall at distances ≤ 512, exact match', min: 0.9 },
  { slices: /^json$/, what: 'JSON validity', min: 0.9 },
];

function taskTargets(rows: readonly TaskQuality[]): Target[] {
  const f32 = rows.filter((q) => q.format === 'f32');
  return TASK_TARGETS.flatMap((t) => {
    const hit = f32.filter((q) => t.slices.test(q.slice));
    if (hit.length === 0) return [];
    return [
      {
        name: `${t.what} at f32 (held-out set)`,
        target: `≥ ${t.min * 100}% on each slice`,
        reached: hit.map((q) => `${q.slice} ${(q.score * 100).toFixed(1)}% of ${q.cases}`).join(', '),
        met: hit.every((q) => q.score >= t.min),
      },
    ];
  });
}
