import type { KernelCall } from '../kernels/kernel.ts';
import { type Comparison, compare } from '../kernels/reference.ts';
import type { KernelRig } from '../kernels/rig.ts';

/**
 * The one tolerance table for every kernel check (browser tests, kernel suite, autotuner): numpy's
 * allclose, |gpu − ref| ≤ atol + rtol·|ref|, against a float64 reference. Keyed by what the op does
 * to its inputs, because that, not the op's name, bounds its rounding error.
 */
export const TOLERANCES = {
  /** Gathers, copies, argmax and a single f32 add: the GPU must produce the reference's f32 bits. */
  exact: { atol: 0, rtol: 0 },
  /** A few roundings per element (rmsnorm, rope, swiglu): errors stay near f32 epsilon. */
  elementwise: { atol: 1e-6, rtol: 1e-5 },
  /** Long f32 sums (matmul, gemv, attention) taken in another order than the reference's. */
  reduction: { atol: 1e-4, rtol: 1e-4 },
  /**
   * Reading an f16 or int8 KV pool, against a reference over the same stored values: what is left is
   * a value the GPU's conversion rounds the other way from the CPU's (one f16 ulp, 2⁻¹¹ relative, or
   * one int8 step, absmax / 127, in a row), weighed by its probability.
   */
  quantizedKv: { atol: 2e-3, rtol: 2e-3 },
  /**
   * A KV write into an f16 or int8 pool, decoded and compared with the CPU's store of the same rows:
   * a value whose conversion rounds the other way is one step off, at most 1/127 of its row's absmax,
   * and seeded rows lie in ±1 (rotated keys within ±√2 of it: one step is then below 0.0112).
   */
  quantizedKvWrite: { atol: 0.0112, rtol: 0 },
} as const;

export type OpKind = keyof typeof TOLERANCES;

/** Which rows `check()` compares: every row, or first, middle and last when the reference is costly. */
export type RowCheck = 'all' | 'sampled';

/**
 * One kernel at one shape, with everything needed to validate it and then time it. Inputs are
 * seeded, so a failure reproduces exactly. The FLOP and byte cost is not here: it belongs to the
 * cost model in measure/, and the kernel suite attaches it to the cases it times.
 */
export interface KernelCase {
  /** The kernel, as the tests name it (matmul, attention_prefill, …). */
  op: string;
  /** The family and parameters that run; for attention also the cache layout. */
  variant: string;
  shape: Record<string, number>;
  /** Selects the case's tolerance in TOLERANCES. */
  kind: OpKind;
  /** The largest single buffer the case allocates, so a caller can skip what a device cannot bind. */
  bufferBytes: number;
  /** Uploads the seeded inputs into `rig` and builds the calls (owned by the rig). */
  prepare(rig: KernelRig): Promise<PreparedCase>;
}

export interface PreparedCase {
  /** Calls that build what `call` reads (the KV pool's kv-write); run them once, before `check`. */
  setup: KernelCall[];
  /**
   * The call to validate and time, or the calls of an op that is several dispatches (split-K decode
   * attention: its slices, then their merge), timed together in one pass.
   */
  call: KernelCall | readonly KernelCall[];
  /**
   * Runs `call` on the seeded inputs (restoring first any it overwrites in place) and compares its
   * output with the float64 reference. Mismatch indices are flat indices into the full output.
   */
  check(): Promise<Comparison>;
}

/** Seeded uniform data in [-scale, scale): an LCG, identical on every machine and run. */
export function seededData(n: number, seed: number, scale = 1): Float32Array<ArrayBuffer> {
  const out = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = ((s >>> 8) / 16777216) * 2 * scale - scale;
  }
  return out;
}

/** The rows `check()` compares out of `rows`. */
export function rowsToCheck(rows: number, which: RowCheck): number[] {
  if (which === 'all' || rows <= 8) return Array.from({ length: rows }, (_, i) => i);
  return [0, Math.floor(rows / 2), rows - 1];
}

/**
 * Compares the given rows (each `width` values) of a GPU output with the reference of each row,
 * computed only for those rows. Mismatch indices are mapped back to the full output.
 */
export function compareRows(
  got: Float32Array,
  rows: readonly number[],
  width: number,
  wantRow: (row: number) => ArrayLike<number>,
  tolerance: { atol: number; rtol: number },
): Comparison {
  const picked = new Float32Array(rows.length * width);
  const want = new Float64Array(rows.length * width);
  rows.forEach((r, i) => {
    picked.set(got.subarray(r * width, (r + 1) * width), i * width);
    want.set(wantRow(r), i * width);
  });
  const c = compare(picked, want, tolerance);
  const flat = (i: number) => rows[Math.floor(i / width)] * width + (i % width);
  return { ...c, mismatches: c.mismatches.map((m) => ({ ...m, index: flat(m.index) })) };
}
