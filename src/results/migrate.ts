/**
 * Result files written by earlier versions, brought to the current schema before validation, so
 * saved runs keep importing. Each step takes one version to the next and says, in the result's
 * warnings, what it could not carry over; the data is untrusted, so a step only reshapes what is
 * there and leaves every check to the schema.
 */
import { percentiles } from '../stats.ts';
import { SCHEMA_VERSION } from './schema.ts';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const numbers = (v: unknown): number[] | null =>
  Array.isArray(v) && v.every((x) => typeof x === 'number') ? (v as number[]) : null;

/**
 * Version 1 → 2. What changed: every point records both clocks and the one that placed it; one
 * sample per repetition; latency per point instead of pooled; errors as {name, message}; the spec
 * and the roofs after the run recorded; the dependent-dispatch roof beside the empty one.
 * Version 1 timed and placed everything by the wall clock, so v1 points become wall-placed points.
 * What cannot be recovered: v1 decode samples were the steps of a generation, not one TPOT per
 * repetition, so the migrated TPOT/ITL percentiles of a decode point are those of its steps;
 * v1 measured only the empty-dispatch roof.
 */
function v1ToV2(r: Json): Json {
  const notes: string[] = [];
  const points = Array.isArray(r.points) ? r.points : [];
  const migratedPoints = points.map((p) => {
    if (!isObject(p)) return p;
    const samples = numbers(p.samplesMs) ?? [];
    const latency =
      samples.length === 0
        ? {}
        : p.pass === 'prefill'
          ? { ttftMs: percentiles(samples) }
          : { tpotMs: percentiles(samples), itlMs: percentiles(samples), itlSamplesMs: samples };
    // Version 1 counted compulsory bytes only.
    const kernels = Array.isArray(p.kernels)
      ? p.kernels.map((k) => (isObject(k) ? { ...k, bytesAsImplemented: k.bytes } : k))
      : p.kernels;
    return {
      ...p,
      kernels,
      bytesAsImplemented: p.bytes,
      timebase: 'wall',
      wallSamplesMs: samples,
      gpuSamplesMs: null,
      wallMedianMs: p.medianMs,
      ...latency,
    };
  });
  if (points.some((p) => isObject(p) && p.pass === 'decode')) {
    notes.push(
      'Migrated from schema version 1: decode samples there were the steps of a generation (not one TPOT per repetition), so TPOT and ITL percentiles are of those steps.',
    );
  }
  const kernelPoints = Array.isArray(r.kernelPoints)
    ? r.kernelPoints.map((k) =>
        isObject(k)
          ? {
              ...k,
              // v1 kernel times were GPU timestamps where the adapter had them.
              timebase: 'gpu',
              wallSamplesMs: k.samplesMs,
              gpuSamplesMs: k.samplesMs,
              wallMedianMs: k.medianMs,
              gpuMedianMs: k.medianMs,
            }
          : k,
      )
    : undefined;
  const peaks = isObject(r.peaks) ? { ...r.peaks, emptyDispatchUs: r.peaks.dispatchUs } : r.peaks;
  const env = isObject(r.env)
    ? {
        ...r.env,
        clocks: {
          gpu: 'GPU timestamps (timestamp-query), per kernel only in schema version 1',
          wall: 'performance.now() in the engine worker (schema version 1 placed every point by it)',
        },
      }
    : r.env;
  const error =
    typeof r.error === 'string'
      ? (() => {
          const m = /^(\w+Error): ([\s\S]*)$/.exec(r.error);
          if (m) return { name: m[1], message: m[2] };
          return { name: r.status === 'cancelled' ? 'CancelledError' : 'Error', message: r.error };
        })()
      : r.error;
  const suite = points.length === 0 && kernelPoints ? 'kernels' : 'custom';
  const { latency: _pooled, ...rest } = r;
  if (_pooled !== undefined)
    notes.push('Migrated from schema version 1: its pooled latency block was dropped.');
  return {
    ...rest,
    schemaVersion: 2,
    ...(error === undefined ? {} : { error }),
    spec: {
      suite,
      kv: {
        mode: (isObject(points[0]) && points[0].kvMode) || 'paged',
        pageSize: (isObject(points[0]) && points[0].pageSize) || 16,
      },
      autotune: isObject(r.tuning) ? r.tuning.enabled === true : false,
      workloads: [],
    },
    env,
    peaks,
    peaksAfter: null,
    points: migratedPoints,
    ...(kernelPoints ? { kernelPoints } : {}),
    warnings: [...(Array.isArray(r.warnings) ? r.warnings : []), ...notes],
  };
}

const STEPS: Record<number, (r: Json) => Json> = { 1: v1ToV2 };

/** The versions this build can read: the current one and every one with a migration step. */
export const READABLE_VERSIONS = [...Object.keys(STEPS).map(Number), SCHEMA_VERSION];

/** Brings a parsed file to SCHEMA_VERSION; anything not a known older version is returned as it is. */
export function migrateResult(data: unknown): unknown {
  let r = data;
  while (isObject(r) && typeof r.schemaVersion === 'number' && r.schemaVersion !== SCHEMA_VERSION) {
    const step = STEPS[r.schemaVersion];
    if (!step) break;
    r = step(r);
  }
  return r;
}
