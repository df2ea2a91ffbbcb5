import { KvCacheExhaustedError } from '../../src/errors.ts';
import type { Gpu } from '../../src/gpu/device.ts';
import type { PipelineCache } from '../../src/gpu/pipelines.ts';
import { compare } from '../../src/kernels/reference.ts';
import { DEFAULT_VARIANTS, type KernelVariants } from '../../src/kernels/variants.ts';
import type { KvDtype } from '../../src/kv/format.ts';
import { autotune, autotunePacked } from '../../src/measure/autotune.ts';
import { decodeCost, graphOf, prefillCost } from '../../src/measure/cost.ts';
import { type ModelConfig, presetConfig } from '../../src/model/config.ts';
import { Model, type ModelOptions, type PrefillResult } from '../../src/model/forward.ts';
import { layerKinds } from '../../src/model/fused.ts';
import { loadGgufModel } from '../../src/model/gguf-load.ts';
import { referenceForward } from '../../src/model/reference.ts';
import { linearNames, quantizeWeights, randomWeights, weightFormatsOf } from '../../src/model/weights.ts';
import { logSoftmax } from '../../src/peers/agreement.ts';
import { parseDrafterSpec } from '../../src/spec/drafter.ts';
import { createDraftModel, makeDrafter } from '../../src/speculative/build.ts';
import { speculativeDecode } from '../../src/speculative/loop.ts';
import type { RunWeightFormat } from '../../src/weight-format.ts';
import { classPrompt } from '../../src/workloads/spec.ts';

/** Logit tolerance between two GPU paths that sum in different orders (matmul vs GEMV, prefill vs decode attention). */
const PATH_TOLERANCE = { atol: 1e-3, rtol: 1e-3 };

const paged = (pageSize: number, capacityTokens = 4096, kv: KvChoice = {}): ModelOptions => ({
  kv: { mode: 'paged', pageSize, capacityTokens, ...kv },
  maxBatch: 32,
});

/** A KV element type and sliding window for the cache (f32 and full attention when absent). */
interface KvChoice {
  dtype?: KvDtype;
  window?: number;
  prefixCache?: boolean;
}
const contiguous = (capacityTokens = 4096): ModelOptions => ({
  kv: { mode: 'contiguous', pageSize: 16, capacityTokens },
  maxBatch: 8,
});

async function prefillEachAlone(model: Model, seqs: number[], prompts: number[][]): Promise<PrefillResult[]> {
  const out: PrefillResult[] = [];
  for (const [i, tokens] of prompts.entries())
    out.push(...(await model.prefill([{ seq: seqs[i], tokens }], 'none')));
  return out;
}

function argmaxOf(row: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < row.length; i++) if (row[i] > row[best]) best = i;
  return best;
}

function bitwiseEqual(a: Float32Array, b: Float32Array): boolean {
  if (a.length !== b.length) return false;
  const x = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const y = new Uint32Array(b.buffer, b.byteOffset, b.length);
  return x.every((v, i) => v === y[i]);
}

/** Model-level checks: the GPU forward against the CPU reference and against itself along other paths. */
export class ModelChecks {
  constructor(
    private readonly gpu: Gpu,
    private readonly pipelines: PipelineCache,
  ) {}

  /** Kernel families for the models built next; the checks run once per family set. */
  variants: KernelVariants = DEFAULT_VARIANTS;
  /** Whether the next models run the fused graph where their families allow it (ModelOptions.fuse). */
  fuse = true;

  private async model(options: ModelOptions, seed = 1, config: ModelConfig = presetConfig('ci-tiny')) {
    const weights = randomWeights(config, seed);
    const { variants, fuse } = this;
    return Model.create(
      this.gpu,
      weights,
      { ...options, pipelines: this.pipelines, variants, fuse },
      'ci-tiny',
    );
  }

  /**
   * Sets the families (and the graph) the next models are built with (a method, so it can be
   * called across a process boundary); returns whether such a model runs the fused graph.
   */
  async useVariants(variants: KernelVariants, fuse = true): Promise<boolean> {
    this.variants = variants;
    this.fuse = fuse;
    const model = await this.model(paged(16));
    const fused = model.fused;
    model.destroy();
    return fused;
  }

  /** The families the next models are built with, so a test that changes them can put them back. */
  async currentVariants(): Promise<KernelVariants> {
    return this.variants;
  }

  /** The families the autotuner picks for ci-tiny on this adapter (the model tests then run them). */
  async autotuned(): Promise<KernelVariants> {
    return (await autotune(this.gpu, this.pipelines, presetConfig('ci-tiny'), [8])).variants;
  }

  /**
   * Full-model prefill logits at every position against the float64 CPU reference; `untied` gives
   * the model an LM head of its own instead of the embedding table.
   */
  async prefillVsReference(tokens: number[], untied = false) {
    const config = { ...presetConfig('ci-tiny'), tieWordEmbeddings: !untied };
    const model = await this.model(paged(16), 1, config);
    const weights = randomWeights(config, 1);
    const seq = model.createSequence();
    const [gpu] = await model.prefill([{ seq, tokens }], 'all');
    // What the engine recorded, against what the cost model assumes, role by role.
    const recorded = model.lastDispatches;
    const assumed = Object.fromEntries(
      prefillCost(config, tokens.length, 0, undefined, 'f32', graphOf(model)).kernels.map((k) => [
        k.role,
        k.dispatches,
      ]),
    );
    model.destroy();
    const want = referenceForward(weights, tokens);
    const cmp = compare(gpu.logits!, want, PATH_TOLERANCE);
    return {
      maxAbsErr: cmp.maxAbsErr,
      maxRelErr: cmp.maxRelErr,
      mismatches: cmp.mismatches,
      rows: tokens.length,
      hasLmHead: weights.tensors.has('lm_head.weight'),
      recorded,
      assumed,
    };
  }

  /**
   * One decode step after `prompt`: the dispatches the engine recorded, role by role, against the
   * cost model's count for the decode attention family in use (the split family's two per layer).
   */
  async decodeDispatches(prompt: number[]) {
    const config = presetConfig('ci-tiny');
    const model = await this.model(paged(16));
    const seq = model.createSequence();
    const [first] = await model.prefill([{ seq, tokens: prompt }], 'last');
    await model.decode([{ seq, token: first.nextToken }]);
    const recorded = model.lastDispatches;
    const graph = graphOf(model);
    model.destroy();
    const cost = decodeCost(config, [prompt.length], this.variants.attentionDecode, 'f32', graph);
    return { recorded, assumed: Object.fromEntries(cost.kernels.map((k) => [k.role, k.dispatches])) };
  }

  /** Prefill the prompt, then decode `steps` tokens greedily, collecting every step's logits. */
  private async generate(model: Model, prompt: number[], steps: number) {
    const seq = model.createSequence();
    const [first] = await model.prefill([{ seq, tokens: prompt }], 'last');
    const tokens = [first.nextToken];
    const logits: Float32Array[] = [first.logits!];
    for (let s = 1; s < steps; s++) {
      const r = await model.decode([{ seq, token: tokens[tokens.length - 1] }], { logits: true });
      tokens.push(r.nextTokens[0]);
      logits.push(r.logits!);
    }
    return { tokens, logits };
  }

  /**
   * Decode through the KV cache against a fresh full-prefix prefill at every step of a greedy
   * generation: tokens must be identical, logits within PATH_TOLERANCE.
   */
  async decodeVsRecompute(prompt: number[], steps: number) {
    const model = await this.model(paged(16));
    const run = await this.generate(model, prompt, steps);
    let maxAbsErr = 0;
    let maxRelErr = 0;
    const tokenMismatches: number[] = [];
    const failedSteps: number[] = [];
    for (let s = 0; s < steps; s++) {
      const seq = model.createSequence();
      const prefix = [...prompt, ...run.tokens.slice(0, s)];
      const [fresh] = await model.prefill([{ seq, tokens: prefix }], 'last');
      model.freeSequence(seq);
      if (fresh.nextToken !== run.tokens[s]) tokenMismatches.push(s);
      const cmp = compare(run.logits[s], fresh.logits!, PATH_TOLERANCE);
      if (!cmp.passed) failedSteps.push(s);
      maxAbsErr = Math.max(maxAbsErr, cmp.maxAbsErr);
      maxRelErr = Math.max(maxRelErr, cmp.maxRelErr);
    }
    model.destroy();
    return { tokens: run.tokens, tokenMismatches, failedSteps, maxAbsErr, maxRelErr };
  }

  /**
   * Speculative decoding's verify pass and rollback. After `prompt`, K = draft.length tokens are
   * verified in one pass; row i of its logits must equal a fresh prefill of prompt + draft[0..i]
   * (to the tolerance of two summation orders), and must be bit-identical to decoding the same
   * tokens one step at a time (the verify pass runs the decode kernels, whose rows do not depend
   * on the batch). Then the cache is rolled back to prompt + the first `accept` draft tokens and
   * `next` is appended: its logits must equal a fresh prefill of exactly that prefix, so nothing
   * of the rejected tokens' K/V leaks. Pages of 8 tokens (the smallest), so the rollback can cross
   * a page boundary; K > 8 runs the verify in two chunks.
   */
  async verifyAndRollback(prompt: number[], draft: number[], accept: number, next: number) {
    const model = await this.model(paged(8));
    const fresh = async (tokens: number[]) => {
      const seq = model.createSequence();
      const [r] = await model.prefill([{ seq, tokens }], 'last');
      model.freeSequence(seq);
      return r;
    };
    const vocab = presetConfig('ci-tiny').vocabSize;
    // The same tokens decoded one step at a time, after the same prefill.
    const stepwise = model.createSequence();
    await model.prefill([{ seq: stepwise, tokens: prompt }], 'none');
    const stepLogits: Float32Array[] = [];
    for (const token of draft) {
      stepLogits.push((await model.decode([{ seq: stepwise, token }], { logits: true })).logits!);
    }
    model.freeSequence(stepwise);

    const seq = model.createSequence();
    await model.prefill([{ seq, tokens: prompt }], 'none');
    const pagesBefore = model.kv.stats().usedPages;
    const verified = await model.verify(seq, draft, { logits: true });
    const rows: { maxRelErr: number; passed: boolean; sameToken: boolean; bitwiseAsDecode: boolean }[] = [];
    for (let i = 0; i < draft.length; i++) {
      const want = await fresh([...prompt, ...draft.slice(0, i + 1)]);
      const row = verified.logits!.subarray(i * vocab, (i + 1) * vocab);
      const cmp = compare(row, want.logits!, PATH_TOLERANCE);
      rows.push({
        maxRelErr: cmp.maxRelErr,
        passed: cmp.passed,
        sameToken: verified.nextTokens[i] === want.nextToken,
        bitwiseAsDecode: bitwiseEqual(row, stepLogits[i]),
      });
    }
    const pagesAfterVerify = model.kv.stats().usedPages;
    model.truncate(seq, prompt.length + accept);
    const lengthAfterRollback = model.kv.allocator.length(seq);
    const pagesAfterRollback = model.kv.stats().usedPages;
    const after = await model.verify(seq, [next], { logits: true });
    const want = await fresh([...prompt, ...draft.slice(0, accept), next]);
    const rollback = compare(after.logits!, want.logits!, PATH_TOLERANCE);
    model.destroy();
    return {
      rows,
      nextTokens: verified.nextTokens.length,
      pagesBefore,
      pagesAfterVerify,
      pagesAfterRollback,
      lengthAfterRollback,
      rollback: {
        maxRelErr: rollback.maxRelErr,
        passed: rollback.passed,
        sameToken: after.nextTokens[0] === want.nextToken,
      },
    };
  }

  /**
   * Speculative decoding against plain greedy decode of the same prompt: `count` tokens each, the
   * drafter built exactly as the spec workload builds it (a draft model on the same device).
   */
  async speculativeMatchesGreedy(
    drafter: string,
    k: number,
    promptClass: string,
    count: number,
    adaptive = false,
  ) {
    const config = presetConfig('ci-tiny');
    const weights = randomWeights(config, 1);
    const model = await Model.create(
      this.gpu,
      weights,
      { ...paged(16), pipelines: this.pipelines, variants: this.variants },
      'ci-tiny',
    );
    const draft = await createDraftModel(
      drafter,
      { gpu: this.gpu, weights, pipelines: this.pipelines, variants: this.variants, pageSize: 16 },
      { seed: 2, capacityTokens: 4096 },
    );
    try {
      const prompt = classPrompt(promptClass, 48, config.vocabSize, 5);
      const plainSeq = model.createSequence();
      const [first] = await model.prefill([{ seq: plainSeq, tokens: prompt }], 'none');
      const reference = [first.nextToken];
      while (reference.length < count) {
        const step = await model.decode([{ seq: plainSeq, token: reference[reference.length - 1] }]);
        reference.push(step.nextTokens[0]);
      }
      model.freeSequence(plainSeq);
      const spec = parseDrafterSpec(drafter);
      if (typeof spec === 'string') throw new Error(spec);
      const d = makeDrafter(spec, draft, {
        promptLength: prompt.length,
        reference,
        vocab: config.vocabSize,
        seed: 3,
      });
      const seq = model.createSequence();
      const [again] = await model.prefill([{ seq, tokens: prompt }], 'none');
      let clock = 0;
      const run = await speculativeDecode(model, d, {
        seq,
        prompt,
        first: again.nextToken,
        firstAt: 0,
        count,
        k,
        adaptive,
        now: () => clock++,
      });
      d.dispose?.();
      const mismatch = run.tokens.findIndex((t, i) => t !== reference[i]);
      return {
        tokens: run.tokens.length,
        identical: mismatch < 0 && run.tokens.length === reference.length,
        firstMismatch: mismatch,
        steps: run.steps.length,
        maxRows: Math.max(...run.steps.map((s) => s.rows)),
        drafted: run.steps.reduce((a, s) => a + s.drafted, 0),
        accepted: run.steps.reduce((a, s) => a + s.accepted, 0),
        cacheLength: model.sequenceLength(seq),
        promptLength: prompt.length,
      };
    } finally {
      draft?.destroy();
      model.destroy();
    }
  }

  /**
   * A KV type and sliding window end to end, in the paged cache (pages of `pageSize`) or the
   * contiguous one: prefill logits at every position against the float64 CPU forward that stores
   * K and V the same way and masks beyond the window; the same prompt prefilled in chunks of 13
   * (each chunk's first query sees pages an earlier chunk wrote); then `steps` greedy decode steps,
   * each against a fresh prefill of the same prefix; and the pages the sequence holds at the end.
   */
  async kvCacheVsReference(
    dtype: KvDtype,
    window: number | undefined,
    prompt: number[],
    steps: number,
    layout: { mode: 'paged' | 'contiguous'; pageSize: number },
  ) {
    const options: ModelOptions = {
      kv: { ...layout, capacityTokens: 4096, dtype, window },
      maxBatch: 8,
    };
    const model = await this.model(options);
    const weights = randomWeights(presetConfig('ci-tiny'), 1);
    const seq = model.createSequence();
    const [whole] = await model.prefill([{ seq, tokens: prompt }], 'all');
    model.freeSequence(seq);
    const reference = compare(
      whole.logits!,
      referenceForward(weights, prompt, { dtype, window }),
      PATH_TOLERANCE,
    );
    const vocab = presetConfig('ci-tiny').vocabSize;
    const chunked = model.createSequence();
    let last: PrefillResult | undefined;
    for (let at = 0; at < prompt.length; at += 13)
      [last] = await model.prefill([{ seq: chunked, tokens: prompt.slice(at, at + 13) }], 'last');
    model.freeSequence(chunked);
    const lastRow = whole.logits!.subarray((prompt.length - 1) * vocab);
    const chunks = compare(last!.logits!, lastRow, PATH_TOLERANCE);
    const run = await this.generate(model, prompt, steps);
    const tokenMismatches: number[] = [];
    const failedSteps: number[] = [];
    for (let s = 0; s < steps; s++) {
      const fresh = model.createSequence();
      const [r] = await model.prefill(
        [{ seq: fresh, tokens: [...prompt, ...run.tokens.slice(0, s)] }],
        'last',
      );
      model.freeSequence(fresh);
      if (r.nextToken !== run.tokens[s]) tokenMismatches.push(s);
      if (!compare(run.logits[s], r.logits!, PATH_TOLERANCE).passed) failedSteps.push(s);
    }
    // generate's sequence is the one still live.
    const live = model.kv.allocator.sequences();
    const heldPages = model.kv.allocator.heldPages(live[live.length - 1]);
    const length = model.kv.allocator.length(live[live.length - 1]);
    model.destroy();
    return {
      reference: {
        maxRelErr: reference.maxRelErr,
        passed: reference.passed,
        mismatches: reference.mismatches,
      },
      chunks: { maxRelErr: chunks.maxRelErr, passed: chunks.passed },
      tokenMismatches,
      failedSteps,
      heldPages,
      length,
    };
  }

  /**
   * A prefix-cache hit after the window has passed the prefix: sequence a prefills `prompt` and
   * decodes `steps` tokens, committing its tokens as the engine does, so the prompt's first pages
   * leave its window (cached, not freed); then b's prompt `prompt + tail` attaches the cached pages
   * and prefills the rest. Its last logits must equal a fresh prefill of the same tokens without
   * the prefix cache.
   */
  async windowPrefixHit(window: number, pageSize: number, prompt: number[], tail: number[], steps: number) {
    const model = await this.model(paged(pageSize, 4096, { window, prefixCache: true }));
    const a = model.createSequence();
    const [first] = await model.prefill([{ seq: a, tokens: prompt }], 'last');
    const tokens = [...prompt, first.nextToken];
    model.kv.allocator.commitTokens(a, prompt);
    for (let s = 1; s < steps; s++) {
      const d = await model.decode([{ seq: a, token: tokens[tokens.length - 1] }]);
      model.kv.allocator.commitTokens(a, tokens);
      tokens.push(d.nextTokens[0]);
    }
    const heldByA = model.kv.allocator.heldPages(a);
    const b = model.createSequence();
    const full = [...prompt, ...tail];
    const hit = model.kv.allocator.acquirePrefix(b, full);
    const [viaHit] = await model.prefill([{ seq: b, tokens: full.slice(hit) }], 'last');
    model.destroy();
    const plain = await this.model(paged(pageSize, 4096, { window }));
    const c = plain.createSequence();
    const [fresh] = await plain.prefill([{ seq: c, tokens: full }], 'last');
    plain.destroy();
    const cmp = compare(viaHit.logits!, fresh.logits!, PATH_TOLERANCE);
    return {
      hit,
      heldByA,
      maxRelErr: cmp.maxRelErr,
      passed: cmp.passed,
      sameToken: viaHit.nextToken === fresh.nextToken,
    };
  }

  /** The same generation with paged caches of each page size and with the contiguous cache: bitwise identical. */
  async pagedVsContiguous(prompt: number[], steps: number) {
    const base = await this.model(contiguous());
    const want = await this.generate(base, prompt, steps);
    base.destroy();
    const results: { pageSize: number; identicalTokens: boolean; identicalLogits: boolean }[] = [];
    for (const pageSize of [8, 16, 32]) {
      const model = await this.model(paged(pageSize));
      const got = await this.generate(model, prompt, steps);
      model.destroy();
      results.push({
        pageSize,
        identicalTokens: got.tokens.every((t, i) => t === want.tokens[i]),
        identicalLogits: got.logits.every((l, i) => bitwiseEqual(l, want.logits[i])),
      });
    }
    return results;
  }

  /**
   * Two sequences forked from one prefix (pages shared, the partly filled last page copied on
   * write) against the same two sequences built apart: identical logits at every step. Both arms
   * interleave the two sequences step by step (a's tail, b's tail, then a, b, a, b, … one decode
   * each), so a write of one into a page the other still reads would show.
   */
  async sharedPrefix(
    prefix: number[],
    tailA: number[],
    tailB: number[],
    steps: number,
    pageSize: number,
    dtype: KvDtype = 'f32',
  ) {
    const interleaved = async (model: Model, a: number, b: number) => {
      const logits: Float32Array[][] = [[], []];
      const tokens: number[] = [];
      for (const [i, [seq, tail]] of (
        [
          [a, tailA],
          [b, tailB],
        ] as const
      ).entries()) {
        const [r] = await model.prefill([{ seq, tokens: tail }], 'last');
        logits[i].push(r.logits!);
        tokens.push(r.nextToken);
      }
      for (let s = 1; s < steps; s++) {
        for (const [i, seq] of [a, b].entries()) {
          const d = await model.decode([{ seq, token: tokens[i] }], { logits: true });
          tokens[i] = d.nextTokens[0];
          logits[i].push(d.logits!);
        }
      }
      return logits;
    };
    const shared = await this.model(paged(pageSize, 4096, { dtype }));
    const a = shared.createSequence();
    await shared.prefill([{ seq: a, tokens: prefix }], 'none');
    const b = shared.fork(a);
    const sharedPagesAfterFork = shared.kv.stats().sharedPages;
    const pagesAfterFork = shared.kv.stats().usedPages;
    const [sharedA, sharedB] = await interleaved(shared, a, b);
    const pagesAfterDivergence = shared.kv.stats().usedPages;
    const stillShared = shared.kv.stats().sharedPages;
    shared.destroy();

    const apart = await this.model(paged(pageSize, 4096, { dtype }));
    const c = apart.createSequence();
    const d = apart.createSequence();
    await apart.prefill([{ seq: c, tokens: prefix }], 'none');
    await apart.prefill([{ seq: d, tokens: prefix }], 'none');
    const [apartA, apartB] = await interleaved(apart, c, d);
    apart.destroy();
    return {
      sharedPagesAfterFork,
      pagesAfterFork,
      pagesAfterDivergence,
      stillShared,
      identicalA: sharedA.every((l, i) => bitwiseEqual(l, apartA[i])),
      identicalB: sharedB.every((l, i) => bitwiseEqual(l, apartB[i])),
    };
  }

  /**
   * One weight format end to end on ci-tiny (tied, or untied with its own head): the model built
   * from the format's packed weights, its logits against the float64 CPU forward on the same
   * dequantized weights (normwise ‖gpu − ref‖₂ ÷ ‖ref‖₂, every prefill position and every decode
   * step), the dispatches against the cost model, and a decode batch of 3 against each row alone
   * (bitwise: the packed GEMV sums a row the same way whatever the batch). With `tuned`, the packed
   * families the autotuner picks for this format on this adapter; otherwise the defaults.
   */
  async formatVsReference(
    format: RunWeightFormat,
    prompt: number[],
    steps: number,
    untied: boolean,
    tuned: boolean,
  ) {
    const config = { ...presetConfig('ci-tiny'), tieWordEmbeddings: !untied };
    const weights = quantizeWeights(randomWeights(config, 3), format);
    const variants =
      tuned && format !== 'f32'
        ? {
            ...this.variants,
            ...(await autotunePacked(this.gpu, this.pipelines, config, [3], format)).variants,
          }
        : this.variants;
    const model = await Model.create(
      this.gpu,
      weights,
      { ...paged(16), pipelines: this.pipelines, variants },
      `ci-tiny ${format}`,
    );
    try {
      const normwise = (got: Float32Array, want: Float64Array) => {
        let d = 0;
        let n = 0;
        for (let i = 0; i < want.length; i++) {
          d += (got[i] - want[i]) ** 2;
          n += want[i] ** 2;
        }
        return Math.sqrt(d / n);
      };
      // Prefill: every position's logits.
      const seq = model.createSequence();
      const [pre] = await model.prefill([{ seq, tokens: prompt }], 'all');
      const recorded = model.lastDispatches;
      const assumed = Object.fromEntries(
        prefillCost(config, prompt.length, 0, undefined, format, graphOf(model)).kernels.map((k) => [
          k.role,
          k.dispatches,
        ]),
      );
      const prefillErr = normwise(pre.logits!, referenceForward(weights, prompt));
      // Decode: greedy steps through the KV cache (GEMV), each against a full reference forward.
      const tokens = [...prompt, pre.nextToken];
      let decodeErr = 0;
      for (let s = 0; s < steps; s++) {
        const r = await model.decode([{ seq, token: tokens[tokens.length - 1] }], { logits: true });
        const want = referenceForward(weights, tokens).subarray((tokens.length - 1) * config.vocabSize);
        decodeErr = Math.max(decodeErr, normwise(r.logits!, want));
        tokens.push(r.nextTokens[0]);
      }
      // Batch of 3 rows against each row alone, bitwise.
      const seqs = [0, 1, 2].map(() => model.createSequence());
      const prompts = [prompt.slice(0, 3), prompt.slice(0, 9), prompt.slice(2, 4)];
      await prefillEachAlone(model, seqs, prompts);
      const next = [11, 22, 33];
      const V = config.vocabSize;
      const batch = await model.decode(
        seqs.map((s, i) => ({ seq: s, token: next[i] })),
        { logits: true },
      );
      let batchIdentical = true;
      for (const [i, p] of prompts.entries()) {
        const alone = model.createSequence();
        await model.prefill([{ seq: alone, tokens: p }], 'none');
        const r = await model.decode([{ seq: alone, token: next[i] }], { logits: true });
        batchIdentical &&= bitwiseEqual(batch.logits!.slice(i * V, (i + 1) * V), r.logits!);
      }
      return {
        format,
        prefillErr,
        decodeErr,
        recorded,
        assumed,
        batchIdentical,
        packed: [...(weights.packed?.values() ?? [])].map((p) => p.format),
        // A tied head is the packed table itself (one buffer), an untied one a tensor of its own.
        headIsTable:
          weights.packed?.get('lm_head.weight') === weights.packed?.get('model.embed_tokens.weight'),
      };
    } finally {
      model.destroy();
    }
  }

  /**
   * A GGUF file (base64: the harness's calls cross a process boundary as JSON) against the float64
   * CPU forward on its exact dequantization (ggml's, bit for bit): every prefill position's and
   * `steps` greedy decode steps' next-token log-probabilities, max |Δ log p| and whether each
   * argmax agrees, and the prefill's dispatches against the cost model's, role by role.
   */
  async ggufVsReference(base64: string, name: string, prompt: number[], steps: number) {
    const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
    const { weights } = loadGgufModel(bytes, name);
    const config = weights.config;
    const model = await Model.create(
      this.gpu,
      weights,
      { ...paged(16), pipelines: this.pipelines, variants: this.variants, fuse: this.fuse },
      name,
    );
    try {
      const V = config.vocabSize;
      let maxLogpDiff = 0;
      let rows = 0;
      let top1 = 0;
      const compareRow = (got: Float32Array, want: Float64Array) => {
        const a = logSoftmax(got);
        const b = logSoftmax(want);
        for (let i = 0; i < V; i++) maxLogpDiff = Math.max(maxLogpDiff, Math.abs(a[i] - b[i]));
        rows++;
        if (argmaxOf(got) === argmaxOf(want)) top1++;
      };
      const seq = model.createSequence();
      const [pre] = await model.prefill([{ seq, tokens: prompt }], 'all');
      const recorded = model.lastDispatches;
      const formats = weightFormatsOf(weights);
      const assumed = Object.fromEntries(
        prefillCost(config, prompt.length, 0, undefined, formats, graphOf(model)).kernels.map((k) => [
          k.role,
          k.dispatches,
        ]),
      );
      const want = referenceForward(weights, prompt);
      for (let r = 0; r < prompt.length; r++)
        compareRow(pre.logits!.subarray(r * V, (r + 1) * V), want.subarray(r * V, (r + 1) * V));
      const tokens = [...prompt, pre.nextToken];
      for (let s = 0; s < steps; s++) {
        const r = await model.decode([{ seq, token: tokens[tokens.length - 1] }], { logits: true });
        compareRow(r.logits!, referenceForward(weights, tokens).subarray((tokens.length - 1) * V));
        tokens.push(r.nextTokens[0]);
      }
      return {
        arch: config.arch ?? 'llama',
        formats: [...new Set(linearNames(config).map(formats))].sort(),
        fused: model.fused,
        layerKinds: Array.from({ length: config.numLayers }, (_, l) => layerKinds(formats, model.fused, l)),
        maxLogpDiff,
        rows,
        top1,
        recorded,
        assumed,
      };
    } finally {
      model.destroy();
    }
  }

  /**
   * A batch of sequences with different lengths, prefilled and decoded together, against each
   * prefilled and decoded alone: bitwise identical logits (the kernels reduce each row the same
   * way whatever the batch).
   */
  async batchVsAlone(prompts: number[][], steps: number) {
    const run = async (batched: boolean) => {
      const model = await this.model(paged(16));
      const seqs = prompts.map(() => model.createSequence());
      // Batched: one prefill of every prompt together; alone: each prompt's prefill by itself.
      const first = batched
        ? await model.prefill(
            prompts.map((tokens, i) => ({ seq: seqs[i], tokens })),
            'none',
          )
        : await prefillEachAlone(model, seqs, prompts);
      let tokens = first.map((r) => r.nextToken);
      const logits: Float32Array[][] = prompts.map(() => []);
      for (let s = 0; s < steps; s++) {
        if (batched) {
          const r = await model.decode(
            seqs.map((seq, i) => ({ seq, token: tokens[i] })),
            { logits: true },
          );
          const V = model.config.vocabSize;
          for (let i = 0; i < seqs.length; i++) logits[i].push(r.logits!.slice(i * V, (i + 1) * V));
          tokens = r.nextTokens;
        } else {
          const next: number[] = [];
          for (let i = 0; i < seqs.length; i++) {
            const r = await model.decode([{ seq: seqs[i], token: tokens[i] }], { logits: true });
            logits[i].push(r.logits!);
            next.push(r.nextTokens[0]);
          }
          tokens = next;
        }
      }
      model.destroy();
      return logits;
    };
    const together = await run(true);
    const alone = await run(false);
    return {
      batch: prompts.length,
      identical: together.map((seqLogits, i) => seqLogits.every((l, s) => bitwiseEqual(l, alone[i][s]))),
    };
  }

  /**
   * Serving steps against each sequence alone: all but the last prompt are prefilled together,
   * then every engine step (Model.step, one command buffer) decodes them while the last prompt is
   * prefilled in chunks of `chunk` tokens; once its last chunk is in, it decodes with the others.
   * Each sequence's greedy tokens must equal its prompt prefilled whole and decoded alone.
   */
  async mixedStepVsAlone(prompts: number[][], chunk: number, steps: number) {
    const model = await this.model(paged(16));
    const want = steps + 1;
    const alone: number[][] = [];
    for (const tokens of prompts) {
      const seq = model.createSequence();
      const out = [(await model.prefill([{ seq, tokens }], 'none'))[0].nextToken];
      while (out.length < want)
        out.push((await model.decode([{ seq, token: out[out.length - 1] }])).nextTokens[0]);
      alone.push(out);
      model.freeSequence(seq);
    }
    const seqs = prompts.map(() => model.createSequence());
    const late = prompts.length - 1;
    const served: number[][] = prompts.map(() => []);
    const first = await model.prefill(
      prompts.slice(0, late).map((tokens, i) => ({ seq: seqs[i], tokens })),
      'none',
    );
    for (const [i, r] of first.entries()) served[i].push(r.nextToken);
    let fed = 0;
    let mixedSteps = 0;
    let chunks = 0;
    while (served.some((o) => o.length < want)) {
      const rows = served.flatMap((o, i) => (o.length > 0 && o.length < want ? [i] : []));
      const prefills =
        fed < prompts[late].length
          ? [{ seq: seqs[late], tokens: prompts[late].slice(fed, fed + chunk) }]
          : [];
      const r = await model.step({
        decodes: rows.map((i) => ({ seq: seqs[i], token: served[i][served[i].length - 1] })),
        prefills,
      });
      for (const [b, i] of rows.entries()) served[i].push(r.decodeTokens[b]);
      if (prefills.length > 0) {
        chunks++;
        if (rows.length > 0) mixedSteps++;
        fed += prefills[0].tokens.length;
        if (fed === prompts[late].length) served[late].push(r.prefillTokens[0]);
      }
    }
    const pagesHeld = seqs.map((seq) => model.kv.allocator.blockTable(seq).length);
    model.destroy();
    return {
      identical: served.map((o, i) => o.length === want && o.every((t, s) => t === alone[i][s])),
      mixedSteps,
      chunks,
      pagesHeld,
    };
  }

  /**
   * Running out of KV pages through the model: a prefill that does not fit, then a batch decode
   * whose second sequence needs a page that is not there. Both throw KvCacheExhaustedError and
   * leave every sequence and the pool exactly as they were (the batch append is all or nothing).
   */
  async kvExhaustion() {
    // 64 slots of 16: four pages.
    const model = await this.model(paged(16, 64));
    const a = model.createSequence();
    await model.prefill([{ seq: a, tokens: Array.from({ length: 40 }, (_, i) => i) }], 'none'); // 3 pages
    const c = model.createSequence();
    await model.prefill([{ seq: c, tokens: Array.from({ length: 16 }, (_, i) => i) }], 'none'); // 1 page, full
    const before = {
      a: model.kv.allocator.length(a),
      c: model.kv.allocator.length(c),
      stats: model.kv.stats(),
    };
    const caught = async (f: () => Promise<unknown>) => {
      try {
        await f();
        return null;
      } catch (e) {
        return {
          name: (e as Error).name,
          isKvError: e instanceof KvCacheExhaustedError,
          message: (e as Error).message,
        };
      }
    };
    const b = model.createSequence();
    const prefillError = await caught(() => model.prefill([{ seq: b, tokens: [1, 2, 3] }], 'none'));
    // a has room in its last page (40 of 48 slots); c's page is full and needs a fifth page.
    const decodeError = await caught(() =>
      model.decode([
        { seq: a, token: 1 },
        { seq: c, token: 2 },
      ]),
    );
    const after = {
      a: model.kv.allocator.length(a),
      c: model.kv.allocator.length(c),
      stats: model.kv.stats(),
    };
    const bLength = model.kv.allocator.length(b);
    // Freeing c makes room: the same decode of a alone then works.
    model.freeSequence(c);
    const recovered = (await model.decode([{ seq: a, token: 1 }])).nextTokens.length;
    model.destroy();
    return { prefillError, decodeError, before, after, recovered, bLength };
  }
}
