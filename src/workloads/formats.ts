import { InternalError } from '../errors.ts';
import { kvCapacityTokens } from '../kv/cache.ts';
import { logitsError } from '../measure/quality.ts';
import { Model } from '../model/forward.ts';
import { validateModel } from '../model/verify.ts';
import { quantizeWeights, weightFormatOf, weightFormatsOf, widenWeights } from '../model/weights.ts';
import type { QualitySlice } from '../spec/workloads/formats.ts';
import type { RunWeightFormat, WeightFormat } from '../weight-format.ts';
import { decodeSweep } from './decode.ts';
import { formatSummary, formatTargets, type QualityRecord } from './formats-section.ts';
import { prefillSweep } from './prefill.ts';
import { promptTokens } from './prompts.ts';
import { pickSlices, taskQuality } from './task-quality.ts';
import type { WorkloadContext, WorkloadEngine, WorkloadRunner } from './workload.ts';

/** Next-token distributions compared per prompt: its prefill and then this many minus one decode steps. */
const QUALITY_STEPS = 8;

/** One slice of the error table: its prompts, and how many of each prompt's distributions count. */
interface SliceInputs {
  slice: QualitySlice;
  prompts: number[][];
  /** Distributions per prompt (the prefill's and the decode steps'). */
  steps: number;
  /** Leading distributions per prompt that are not counted (long-decode skips the prefill's). */
  skip: number;
}

/**
 * The slices of the issue, sized to the model: short prompts (≤ 16 tokens), long prompts near
 * maxSeqLen, one token repeated, rare (high-id) tokens, and decode after a long context. Tokens are
 * deterministic, so every format sees exactly f32's inputs.
 */
export function qualitySlices(vocab: number, maxSeqLen: number): SliceInputs[] {
  const steps = QUALITY_STEPS;
  const longLen = Math.max(1, maxSeqLen - steps);
  const rareFrom = Math.floor(vocab * 0.9);
  const rare = (n: number, salt: number) => promptTokens(n, vocab - rareFrom, salt).map((t) => rareFrom + t);
  const half = Math.max(1, Math.floor(maxSeqLen / 2));
  const decodeSteps = Math.min(4 * steps, maxSeqLen - half);
  return [
    { slice: 'short', prompts: [promptTokens(5, vocab, 901), promptTokens(16, vocab, 902)], steps, skip: 0 },
    { slice: 'long', prompts: [promptTokens(longLen, vocab, 903)], steps, skip: 0 },
    {
      slice: 'repeated',
      prompts: [Array(32).fill(7 % vocab), Array(32).fill(Math.floor(vocab / 2))],
      steps,
      skip: 0,
    },
    { slice: 'rare', prompts: [rare(16, 904), rare(16, 905)], steps, skip: 0 },
    // The prefill's distribution is not counted: this slice is decode after a long context.
    { slice: 'long-decode', prompts: [promptTokens(half, vocab, 906)], steps: decodeSteps + 1, skip: 1 },
  ];
}

/**
 * Each prompt's `steps` next-token distributions: the prefill's, then decode steps fed `forced`
 * tokens (f32's greedy output) or, for f32 itself, its own argmax. Returns the logits and the
 * greedy tokens.
 */
async function sliceLogits(model: Model, s: SliceInputs, forced: number[][] | null) {
  const vocab = model.config.vocabSize;
  const kept = s.steps - s.skip;
  const logits = new Float32Array(s.prompts.length * kept * vocab);
  const tokens: number[][] = [];
  for (const [p, prompt] of s.prompts.entries()) {
    const seq = model.createSequence();
    try {
      const own: number[] = [];
      const [first] = await model.prefill([{ seq, tokens: prompt }], 'last');
      const put = (step: number, row: Float32Array | undefined) => {
        if (!row) throw new InternalError('a quality step read back no logits');
        if (step >= s.skip) logits.set(row, (p * kept + step - s.skip) * vocab);
      };
      put(0, first.logits);
      own.push(first.nextToken);
      for (let step = 1; step < s.steps; step++) {
        const token = forced ? forced[p][step - 1] : own[step - 1];
        const r = await model.decode([{ seq, token }], { logits: true });
        put(step, r.logits);
        own.push(r.nextTokens[0]);
      }
      tokens.push(own);
    } finally {
      model.freeSequence(seq);
    }
  }
  return { logits, tokens };
}

/**
 * The format sweep. For each format (f32 first: it is the baseline of every ratio and the
 * reference of every error), the loaded weights are quantized on load, a model is built and checked
 * against the CPU forward on its own dequantized weights, then timed by the prefill and decode
 * sweeps at one L and one depth (their points carry the format), and its next-token distributions
 * on every slice are compared with f32's. One model lives at a time.
 */
export const formatSweep: WorkloadRunner<'formats', QualityRecord> = async (ctx, w) => {
  const formats: RunWeightFormat[] = ['f32', ...w.formats.filter((f) => f !== 'f32')];
  const units = formats.length * (2 + (w.quality ? 1 : 0));
  let done = 0;
  const slices = qualitySlices(ctx.config.vocabSize, ctx.config.maxSeqLen);
  // A trained model with its held-out set is judged on tasks, all formats at once after the
  // timings; seeded weights keep the error of their logits by slice, format by format.
  const tasks =
    w.quality && ctx.taskSet && ctx.tokenizer ? { set: ctx.taskSet, tokenizer: ctx.tokenizer } : null;
  const reference = new Map<QualitySlice, { logits: Float32Array; tokens: number[][] }>();
  for (const format of formats) {
    ctx.signal.throwIfAborted();
    ctx.progress(done, units, `${format}: quantizing the weights`);
    // f32 is the reference: a loaded quantized file is widened to its exact f32 values for it.
    const source = format === 'f32' ? widenWeights(ctx.loadedWeights) : ctx.loadedWeights;
    const weights = quantizeWeights(source, format, (fraction) =>
      ctx.progress(done, units, `${format}: quantizing the weights (${Math.round(fraction * 100)}%)`),
    );
    const model = await buildModel(ctx, weights, format);
    try {
      const check = await validateModel(model, weights, promptTokens(5, ctx.config.vocabSize, 99));
      for (const c of check.checks)
        ctx.check({ ...c, name: `${format}: ${c.name} against the CPU forward on the ${format} weights` });
      const sub: WorkloadContext = {
        ...ctx,
        model,
        weights,
        // What the weights really hold: a quantized file keeps its int8/int4 tensors whatever the row.
        weightFormat: weightFormatOf(weights),
        weightFormats: weightFormatsOf(weights),
        variants: await ctx.variantsFor(format),
        progress: (d, t, label) => ctx.progress(done + d / t, units, `${format}: ${label}`),
      };
      const repetitions = { reps: w.reps, warmup: w.warmup, profile: false };
      await prefillSweep(sub, { kind: 'prefill', lengths: [w.length], ...repetitions });
      ctx.progress(++done, units, `${format}: prefill L=${w.length}`);
      await decodeSweep(sub, { kind: 'decode', depths: [w.depth], gen: w.gen, batch: 1, ...repetitions });
      ctx.progress(++done, units, `${format}: decode at depth ${w.depth}`);
      if (!w.quality || tasks) continue;
      for (const s of slices) {
        ctx.signal.throwIfAborted();
        ctx.progress(done, units, `${format}: error on the ${s.slice} slice`);
        const ref = reference.get(s.slice);
        const got = await sliceLogits(model, s, ref?.tokens ?? null);
        if (format === 'f32') {
          reference.set(s.slice, got);
          continue;
        }
        if (!ref) throw new InternalError('the f32 reference of a slice is missing');
        const e = logitsError(got.logits, ref.logits, ctx.config.vocabSize);
        ctx.emit({
          type: 'quality',
          quality: {
            format,
            slice: s.slice,
            ...e,
            prompts: s.prompts.length,
            steps: s.steps - s.skip,
            promptTokens: s.prompts.map((p) => p.length),
          },
        });
      }
      ctx.progress(++done, units, `${format}: error by slice`);
    } finally {
      model.destroy();
    }
  }
  if (tasks) {
    await taskQuality(
      ctx,
      formats.map((format) => ({ format })),
      pickSlices(tasks.set, w.taskSlices),
      tasks.tokenizer,
      w.taskTokens,
      (slice, index, count) => {
        // Whole units only: the quality unit of each format is counted as the slices go by.
        const at = Math.floor((formats.length * index) / count);
        ctx.progress(done + at, units, `task quality, every format: the ${slice} slice`);
      },
      (row) => ctx.emit({ type: 'taskQuality', taskQuality: row }),
    );
    ctx.progress(units, units, 'task quality by slice');
  }
};

async function buildModel(
  ctx: WorkloadContext<QualityRecord>,
  weights: Parameters<typeof Model.create>[1],
  format: WeightFormat,
) {
  return Model.create(
    ctx.gpu,
    weights,
    {
      kv: {
        mode: ctx.kv.mode,
        pageSize: ctx.kv.pageSize,
        capacityTokens: kvCapacityTokens(ctx.kv.mode, ctx.kv.pageSize, ctx.config.maxSeqLen, {
          // One sequence at a time, as long as the longest quality slice: maxSeqLen.
          sequences: 1,
          tokens: ctx.config.maxSeqLen,
        }),
      },
      maxBatch: 1,
      pipelines: ctx.pipelines,
      variants: await ctx.variantsFor(format),
    },
    `${format} model`,
  );
}

/** The format sweep's engine: its table from the points of each format, and the error by slice it recorded. */
export const formatsEngine: WorkloadEngine<'formats', QualityRecord> = {
  run: formatSweep,
  describe: (r) =>
    r.type === 'quality'
      ? `${r.quality.format}: error on the ${r.quality.slice} slice`
      : `${r.taskQuality.format}: ${r.taskQuality.metric} on the ${r.taskQuality.slice} slice`,
  collect: (records, run) => ({
    formats: formatSummary(run.points, run.config),
    quality: records.flatMap((r) => (r.type === 'quality' ? [r.quality] : [])),
    taskQuality: records.flatMap((r) => (r.type === 'taskQuality' ? [r.taskQuality] : [])),
  }),
  targets: formatTargets,
};
