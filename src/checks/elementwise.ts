import { EmbeddingKernel, ResidualAddKernel, RopeKernel, SwigluKernel } from '../kernels/elementwise.ts';
import type { KernelContext } from '../kernels/kernel.ts';
import { argmaxRef, compare, embeddingRef, rmsNormRef, ropeRef, swigluRef } from '../kernels/reference.ts';
import { ArgmaxKernel, RmsNormKernel } from '../kernels/rowwise.ts';
import { DEFAULT_VARIANTS, type RmsNormVariant, variantName } from '../kernels/variants.ts';
import { presetConfig } from '../model/config.ts';
import { ropeTable } from '../model/rope.ts';
import { type KernelCase, seededData, TOLERANCES } from './case.ts';

/** out[l, :] = table[tokens[l], :] for `rows` tokens spread over a table of `vocab` rows. */
export function embeddingCase(ctx: KernelContext, s: { rows: number; d: number; vocab: number }): KernelCase {
  const kind = 'exact';
  const { rows, d, vocab } = s;
  return {
    op: 'embedding',
    variant: 'elementwise',
    shape: { rows, d, vocab },
    kind,
    bufferBytes: 4 * Math.max(vocab, rows) * d,
    async prepare(rig) {
      const table = seededData(vocab * d, 1);
      const tokens = Array.from({ length: rows }, (_, i) => (i * 7919 + 3) % vocab);
      const out = rig.output(rows * d);
      const kernel = await EmbeddingKernel.create(ctx);
      const call = rig.own(kernel.call({ tokens: rig.inputU32(tokens), table: rig.input(table), out, ...s }));
      return {
        setup: [],
        call,
        async check() {
          await rig.run(call);
          return compare(await rig.read(out, rows * d), embeddingRef(table, tokens, d), TOLERANCES[kind]);
        },
      };
    },
  };
}

export interface RmsNormSpec {
  rows: number;
  d: number;
  eps: number;
  /** Inputs are uniform in ±scale; near sqrt(3·eps) their mean square is about eps. */
  scale?: number;
  /**
   * The eps of the reference, when it is not the kernel's: a test proving that eps matters runs
   * the kernel with eps and expects the reference without it to disagree.
   */
  referenceEps?: number;
  variant?: RmsNormVariant;
}

/** HF LlamaRMSNorm over `rows` rows of width d. */
export function rmsNormCase(ctx: KernelContext, s: RmsNormSpec): KernelCase {
  const kind = 'elementwise';
  const { rows, d, eps } = s;
  const variant = s.variant ?? DEFAULT_VARIANTS.rmsnorm;
  return {
    op: 'rmsnorm',
    variant: variantName(variant),
    shape: { rows, d, eps },
    kind,
    bufferBytes: 4 * rows * d,
    async prepare(rig) {
      const x = seededData(rows * d, 2, s.scale ?? 1);
      const w = seededData(d, 3);
      const out = rig.output(rows * d);
      const kernel = await RmsNormKernel.create(ctx, variant);
      const call = rig.own(kernel.call({ x: rig.input(x), weight: rig.input(w), out, rows, d, eps }));
      return {
        setup: [],
        call,
        async check() {
          await rig.run(call);
          const want = rmsNormRef(x, w, rows, d, s.referenceEps ?? eps);
          return compare(await rig.read(out, rows * d), want, TOLERANCES[kind]);
        },
      };
    },
  };
}

export interface RopeSpec {
  rows: number;
  heads: number;
  headDim: number;
  /** Position of the first row; row l is at position start + l. */
  start: number;
  theta: number;
}

/**
 * cos and sin of pos · theta^(−2i/headDim) for positions 0 … positions−1, straight from the
 * formula in float64: independent of rope.ts, whose f32 table the GPU reads, so a wrong frequency
 * or a wrong theta in that table fails the check instead of being copied into the reference.
 */
function closedFormAngles(positions: number, headDim: number, theta: number) {
  const half = headDim / 2;
  const cos = new Float64Array(positions * half);
  const sin = new Float64Array(positions * half);
  for (let pos = 0; pos < positions; pos++) {
    for (let i = 0; i < half; i++) {
      const angle = pos * theta ** ((-2 * i) / headDim);
      cos[pos * half + i] = Math.cos(angle);
      sin[pos * half + i] = Math.sin(angle);
    }
  }
  return { cos, sin };
}

/** Rotate-half RoPE in place on x[rows, heads, headDim], with the model's table on the GPU. */
export function ropeCase(ctx: KernelContext, s: RopeSpec): KernelCase {
  const kind = 'elementwise';
  const { rows, heads, headDim, start, theta } = s;
  const width = heads * headDim;
  const maxSeqLen = start + rows;
  return {
    op: 'rope',
    variant: 'elementwise',
    shape: { rows, heads, headDim, start, theta },
    kind,
    bufferBytes: 4 * Math.max(rows * width, (maxSeqLen * headDim) / 2),
    async prepare(rig) {
      const x = seededData(rows * width, 4);
      const xBuf = rig.input(x);
      const positions = Array.from({ length: rows }, (_, i) => start + i);
      const table = ropeTable({ ...presetConfig('ci-tiny'), headDim, ropeTheta: theta, maxSeqLen });
      const kernel = await RopeKernel.create(ctx);
      const call = rig.own(
        kernel.call({
          x: xBuf,
          positions: rig.inputU32(positions),
          cos: rig.input(table.cos),
          sin: rig.input(table.sin),
          rows,
          heads,
          headDim,
        }),
      );
      return {
        setup: [],
        call,
        async check() {
          rig.write(xBuf, x); // RoPE rotates in place; a timed or earlier run rotated x already
          await rig.run(call);
          const want = Float64Array.from(x);
          ropeRef(want, positions, heads, headDim, closedFormAngles(maxSeqLen, headDim, theta));
          return compare(await rig.read(xBuf, rows * width), want, TOLERANCES[kind]);
        },
      };
    },
  };
}

/** x += y over n elements, in place. */
export function residualAddCase(ctx: KernelContext, s: { n: number }): KernelCase {
  const kind = 'exact';
  const { n } = s;
  return {
    op: 'residual_add',
    variant: 'elementwise',
    shape: { n },
    kind,
    bufferBytes: 4 * n,
    async prepare(rig) {
      const x = seededData(n, 5);
      const y = seededData(n, 6);
      const xBuf = rig.input(x);
      const call = rig.own((await ResidualAddKernel.create(ctx)).call({ x: xBuf, y: rig.input(y), n }));
      return {
        setup: [],
        call,
        async check() {
          rig.write(xBuf, x); // the add accumulates in place; restore x before the checked run
          await rig.run(call);
          // One f32 add is correctly rounded: the reference is the exact sum rounded to f32.
          const want = Float32Array.from(x, (v, i) => v + y[i]);
          return compare(await rig.read(xBuf, n), want, TOLERANCES[kind]);
        },
      };
    },
  };
}

/** silu(gate) · up over n elements. */
export function swigluCase(ctx: KernelContext, s: { n: number }): KernelCase {
  const kind = 'elementwise';
  const { n } = s;
  return {
    op: 'swiglu',
    variant: 'elementwise',
    shape: { n },
    kind,
    bufferBytes: 4 * n,
    async prepare(rig) {
      // Gates over ±12 reach both of silu's tails, where exp under- or overflows first.
      const gate = seededData(n, 7, 12);
      const up = seededData(n, 8);
      const out = rig.output(n);
      const kernel = await SwigluKernel.create(ctx);
      const call = rig.own(kernel.call({ gate: rig.input(gate), up: rig.input(up), out, n }));
      return {
        setup: [],
        call,
        async check() {
          await rig.run(call);
          return compare(await rig.read(out, n), swigluRef(gate, up), TOLERANCES[kind]);
        },
      };
    },
  };
}

/** Greedy sampling over rows of n logits, with planted ties that the lowest index must win. */
export function argmaxCase(ctx: KernelContext, s: { rows: number; n: number }): KernelCase {
  const kind = 'exact';
  const { rows, n } = s;
  return {
    op: 'argmax',
    variant: 'workgroup',
    shape: { rows, n },
    kind,
    bufferBytes: 4 * rows * n,
    async prepare(rig) {
      const x = seededData(rows * n, 9);
      // Row r gets its maximum at two indices; the lower one must win.
      for (let r = 0; r < rows; r++) {
        x[r * n + ((r * 31 + 5) % n)] = 2;
        x[r * n + ((r * 17 + n - 1) % n)] = 2;
      }
      const out = rig.output(rows);
      const call = rig.own((await ArgmaxKernel.create(ctx)).call({ x: rig.input(x), out, rows, n }));
      return {
        setup: [],
        call,
        async check() {
          await rig.run(call);
          return compare(await rig.readU32(out, rows), argmaxRef(x, rows, n), TOLERANCES[kind]);
        },
      };
    },
  };
}
