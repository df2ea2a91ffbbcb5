import { BufferPool, readBytes, readFloat32 } from '../../src/gpu/buffers.ts';
import type { Gpu } from '../../src/gpu/device.ts';
import { PipelineCache } from '../../src/gpu/pipelines.ts';
import { PagedAttentionDecodeKernel, PagedAttentionPrefillKernel } from '../../src/kernels/attention.ts';
import {
  EmbeddingKernel,
  ResidualAddKernel,
  RopeKernel,
  SwigluKernel,
} from '../../src/kernels/elementwise.ts';
import { GemvKernel } from '../../src/kernels/gemv.ts';
import { disposeCalls, encodeCall, type KernelCall, type KernelContext } from '../../src/kernels/kernel.ts';
import { KvWriteKernel } from '../../src/kernels/kv-write.ts';
import { MatmulKernel } from '../../src/kernels/matmul.ts';
import { ArgmaxKernel, RmsNormKernel } from '../../src/kernels/rowwise.ts';
import type {
  AttentionVariant,
  GemvVariant,
  MatmulVariant,
  RmsNormVariant,
} from '../../src/kernels/variants.ts';
import {
  argmaxRef,
  attentionRef,
  type Comparison,
  compare,
  embeddingRef,
  matmulRef,
  rmsNormRef,
  ropeRef,
  swigluRef,
} from '../../src/model/reference.ts';
import { ropeTable } from '../../src/model/rope.ts';
import { randomArray } from './random.ts';

/** What a kernel check returns to the Playwright test: the comparison, without the big arrays. */
export interface CheckResult extends Comparison {
  kernel: string;
  shape: string;
}

/** Tolerances per kernel (numpy allclose: |gpu − ref| ≤ atol + rtol·|ref|), against a float64 reference. */
export const TOLERANCES = {
  exact: { atol: 0, rtol: 0 },
  elementwise: { atol: 1e-6, rtol: 1e-5 },
  reduction: { atol: 1e-4, rtol: 1e-4 },
} as const;

export class KernelChecks {
  private readonly ctx: KernelContext;
  private readonly pool: BufferPool;

  constructor(private readonly gpu: Gpu) {
    this.ctx = { gpu, pipelines: new PipelineCache(gpu) };
    this.pool = new BufferPool(gpu);
  }

  private async run(calls: KernelCall[]): Promise<void> {
    const encoder = this.gpu.device.createCommandEncoder({ label: 'kernel-check' });
    const pass = encoder.beginComputePass({ label: 'kernel-check' });
    for (const call of calls) encodeCall(pass, call);
    pass.end();
    this.gpu.device.queue.submit([encoder.finish()]);
    disposeCalls(calls);
  }

  private async check(
    kernel: string,
    shape: object,
    got: Float32Array,
    want: ArrayLike<number>,
    tol: { atol: number; rtol: number },
  ): Promise<CheckResult> {
    this.pool.destroyAll();
    return { kernel, shape: JSON.stringify(shape), ...compare(got, want, tol) };
  }

  private f32 = (label: string, data: Float32Array) => this.pool.upload(label, data);
  private u32 = (label: string, data: number[]) => this.pool.upload(label, new Uint32Array(data));
  private out = (label: string, floats: number) => this.pool.allocate(label, floats * 4);

  async embedding(s: { rows: number; d: number; vocab: number }) {
    const table = randomArray(s.vocab * s.d, 1);
    const tokens = Array.from({ length: s.rows }, (_, i) => (i * 7919 + 3) % s.vocab);
    const out = await this.out('out', s.rows * s.d);
    const k = await EmbeddingKernel.create(this.ctx);
    await this.run([
      k.call({ tokens: await this.u32('tokens', tokens), table: await this.f32('table', table), out, ...s }),
    ]);
    const got = await readFloat32(this.gpu, out, s.rows * s.d * 4);
    return this.check('embedding', s, got, embeddingRef(table, tokens, s.d), TOLERANCES.exact);
  }

  async rmsnorm(s: { rows: number; d: number; variant?: RmsNormVariant }) {
    const x = randomArray(s.rows * s.d, 2, 3);
    const w = randomArray(s.d, 3);
    const out = await this.out('out', s.rows * s.d);
    const k = await RmsNormKernel.create(this.ctx, s.variant);
    await this.run([
      k.call({
        x: await this.f32('x', x),
        weight: await this.f32('w', w),
        out,
        rows: s.rows,
        d: s.d,
        eps: 1e-5,
      }),
    ]);
    const got = await readFloat32(this.gpu, out, s.rows * s.d * 4);
    return this.check('rmsnorm', s, got, rmsNormRef(x, w, s.rows, s.d, 1e-5), TOLERANCES.elementwise);
  }

  async rope(s: { rows: number; heads: number; headDim: number; start: number; maxSeqLen: number }) {
    const x = randomArray(s.rows * s.heads * s.headDim, 4);
    const positions = Array.from({ length: s.rows }, (_, i) => s.start + i);
    const table = ropeTable({
      vocabSize: 2,
      hiddenSize: 4,
      intermediateSize: 4,
      numLayers: 1,
      numHeads: 1,
      numKvHeads: 1,
      headDim: s.headDim,
      ropeTheta: 10000,
      rmsNormEps: 1e-5,
      tieWordEmbeddings: true,
      maxSeqLen: s.maxSeqLen,
    });
    const xBuf = await this.f32('x', x);
    const k = await RopeKernel.create(this.ctx);
    await this.run([
      k.call({
        x: xBuf,
        positions: await this.u32('positions', positions),
        cos: await this.f32('cos', table.cos),
        sin: await this.f32('sin', table.sin),
        rows: s.rows,
        heads: s.heads,
        headDim: s.headDim,
      }),
    ]);
    const got = await readFloat32(this.gpu, xBuf, x.length * 4);
    const want = Float64Array.from(x);
    ropeRef(want, positions, s.heads, s.headDim, table);
    return this.check('rope', s, got, want, TOLERANCES.elementwise);
  }

  async residualAdd(s: { n: number }) {
    const x = randomArray(s.n, 5);
    const y = randomArray(s.n, 6);
    const xBuf = await this.f32('x', x);
    const k = await ResidualAddKernel.create(this.ctx);
    await this.run([k.call({ x: xBuf, y: await this.f32('y', y), n: s.n })]);
    const got = await readFloat32(this.gpu, xBuf, s.n * 4);
    return this.check(
      'residual_add',
      s,
      got,
      x.map((v, i) => v + y[i]),
      TOLERANCES.exact,
    );
  }

  async swiglu(s: { n: number }) {
    const gate = randomArray(s.n, 7, 12);
    const up = randomArray(s.n, 8);
    const out = await this.out('out', s.n);
    const k = await SwigluKernel.create(this.ctx);
    await this.run([
      k.call({ gate: await this.f32('gate', gate), up: await this.f32('up', up), out, n: s.n }),
    ]);
    const got = await readFloat32(this.gpu, out, s.n * 4);
    return this.check('swiglu', s, got, swigluRef(gate, up), TOLERANCES.elementwise);
  }

  async argmax(s: { rows: number; n: number }) {
    const x = randomArray(s.rows * s.n, 9);
    // Plant ties: row r gets its maximum at two indices, and the lower one must win.
    for (let r = 0; r < s.rows; r++) {
      const a = (r * 31 + 5) % s.n;
      const b = (r * 17 + s.n - 1) % s.n;
      x[r * s.n + a] = 2;
      x[r * s.n + b] = 2;
    }
    const out = await this.out('out', s.rows);
    const k = await ArgmaxKernel.create(this.ctx);
    await this.run([k.call({ x: await this.f32('x', x), out, rows: s.rows, n: s.n })]);
    const got = new Uint32Array(await readBytes(this.gpu, out, s.rows * 4));
    return this.check('argmax', s, Float32Array.from(got), argmaxRef(x, s.rows, s.n), TOLERANCES.exact);
  }

  async matmul(s: { M: number; N: number; K: number; variant?: MatmulVariant }) {
    const a = randomArray(s.M * s.K, 10);
    const b = randomArray(s.N * s.K, 11);
    const c = await this.out('c', s.M * s.N);
    const k = await MatmulKernel.create(this.ctx, s.variant);
    await this.run([
      k.call({ a: await this.f32('a', a), b: await this.f32('b', b), c, M: s.M, N: s.N, K: s.K }),
    ]);
    const got = await readFloat32(this.gpu, c, s.M * s.N * 4);
    return this.check('matmul', s, got, matmulRef(a, b, s.M, s.K, s.N), TOLERANCES.reduction);
  }

  async gemv(s: { M: number; N: number; K: number; variant?: GemvVariant }) {
    const x = randomArray(s.M * s.K, 12);
    const w = randomArray(s.N * s.K, 13);
    const y = await this.out('y', s.M * s.N);
    const k = await GemvKernel.create(this.ctx, s.variant, s.M);
    await this.run([
      k.call({ x: await this.f32('x', x), w: await this.f32('w', w), y, M: s.M, N: s.N, K: s.K }),
    ]);
    const got = await readFloat32(this.gpu, y, s.M * s.N * 4);
    return this.check('gemv', s, got, matmulRef(x, w, s.M, s.K, s.N), TOLERANCES.reduction);
  }

  /**
   * A sequence's block table over a shuffled page pool, so a kernel that ignored the table (or
   * assumed pages are in order) would read the wrong tokens.
   */
  private layout(tokens: number, pageSize: number, paged: boolean, seed: number, totalPages: number) {
    const pages = Math.ceil(tokens / pageSize);
    if (!paged) return { table: [seed % totalPages], pageSize };
    const order = Array.from({ length: totalPages }, (_, i) => i);
    let s = seed;
    for (let i = order.length - 1; i > 0; i--) {
      s = (Math.imul(s, 1103515245) + 12345) >>> 0;
      const j = s % (i + 1);
      [order[i], order[j]] = [order[j], order[i]];
    }
    return { table: order.slice(0, pages), pageSize };
  }

  /**
   * kv-write then prefill attention: `start` cached tokens plus L new ones, written into a
   * shuffled paged pool (or a contiguous slot), attended causally by the L new queries.
   */
  async attentionPrefill(s: {
    L: number;
    start: number;
    heads: number;
    kvHeads: number;
    headDim: number;
    pageSize: number;
    paged: boolean;
    variant?: AttentionVariant;
  }) {
    const T = s.start + s.L;
    const maxSeqLen = 512;
    const pageSize = s.paged ? s.pageSize : maxSeqLen;
    const totalPages = s.paged ? Math.ceil(maxSeqLen / pageSize) + 3 : 2;
    const { table } = this.layout(T, pageSize, s.paged, 7, totalPages);
    const kvW = s.kvHeads * s.headDim;
    const q = randomArray(s.L * s.heads * s.headDim, 14);
    const k = randomArray(T * kvW, 15);
    const v = randomArray(T * kvW, 16);
    const slots = Array.from({ length: T }, (_, t) =>
      s.paged ? table[Math.floor(t / pageSize)] * pageSize + (t % pageSize) : table[0] * pageSize + t,
    );
    const pool = await this.out('pool', totalPages * 2 * kvW * pageSize);
    const out = await this.out('out', s.L * s.heads * s.headDim);
    const write = await KvWriteKernel.create(this.ctx);
    const attn = await PagedAttentionPrefillKernel.create(this.ctx, { ...s, pageSize }, s.variant);
    await this.run([
      write.call({
        k: await this.f32('k', k),
        v: await this.f32('v', v),
        slots: await this.u32('slots', slots),
        pool,
        rows: T,
        kvHeads: s.kvHeads,
        headDim: s.headDim,
        pageSize,
      }),
      attn.call({
        q: await this.f32('q', q),
        pool,
        blockTable: await this.u32('table', table),
        out,
        L: s.L,
        start: s.start,
      }),
    ]);
    const got = await readFloat32(this.gpu, out, s.L * s.heads * s.headDim * 4);
    return this.check(
      'attention_prefill',
      s,
      got,
      attentionRef(q, k, v, s.L, s.start, s),
      TOLERANCES.reduction,
    );
  }

  /** Batched decode attention: B sequences of different lengths, each with its own shuffled table. */
  async attentionDecode(s: {
    lengths: number[];
    heads: number;
    kvHeads: number;
    headDim: number;
    pageSize: number;
    paged: boolean;
    variant?: AttentionVariant;
  }) {
    const B = s.lengths.length;
    const maxLen = Math.max(...s.lengths);
    const pageSize = s.paged ? s.pageSize : maxLen;
    const perSeq = Math.ceil(maxLen / pageSize);
    const totalPages = B * perSeq;
    // One shuffled permutation of all pages, dealt out to the sequences.
    const { table: all } = this.layout(totalPages * pageSize, pageSize, true, 11, totalPages);
    const tables = s.lengths.map((_, b) => (s.paged ? all.slice(b * perSeq, (b + 1) * perSeq) : [all[b]]));
    const stride = s.paged ? perSeq : 1;
    const kvW = s.kvHeads * s.headDim;
    const pool = await this.out('pool', totalPages * 2 * kvW * pageSize);
    const write = await KvWriteKernel.create(this.ctx);
    const calls: KernelCall[] = [];
    const want: number[] = [];
    const q = randomArray(B * s.heads * s.headDim, 20);
    for (let b = 0; b < B; b++) {
      const T = s.lengths[b];
      const k = randomArray(T * kvW, 21 + b);
      const v = randomArray(T * kvW, 41 + b);
      const slots = Array.from(
        { length: T },
        (_, t) => tables[b][Math.floor(t / pageSize)] * pageSize + (t % pageSize),
      );
      calls.push(
        write.call({
          k: await this.f32(`k${b}`, k),
          v: await this.f32(`v${b}`, v),
          slots: await this.u32(`slots${b}`, slots),
          pool,
          rows: T,
          kvHeads: s.kvHeads,
          headDim: s.headDim,
          pageSize,
        }),
      );
      const qb = q.subarray(b * s.heads * s.headDim, (b + 1) * s.heads * s.headDim);
      want.push(...attentionRef(qb, k, v, 1, T - 1, s));
    }
    const out = await this.out('out', B * s.heads * s.headDim);
    const attn = await PagedAttentionDecodeKernel.create(this.ctx, { ...s, pageSize }, s.variant);
    const flatTables = tables.flatMap((t) => [...t, ...Array(stride - t.length).fill(0)]);
    calls.push(
      attn.call({
        q: await this.f32('q', q),
        pool,
        blockTables: await this.u32('tables', flatTables),
        seqLens: await this.u32('lens', s.lengths),
        out,
        batch: B,
        tableStride: stride,
      }),
    );
    await this.run(calls);
    const got = await readFloat32(this.gpu, out, B * s.heads * s.headDim * 4);
    return this.check('attention_decode', s, got, want, TOLERANCES.reduction);
  }
}
