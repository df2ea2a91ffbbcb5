import { checkedRun } from '../gpu/device.ts';
import { GpuProfiler, type Span } from '../gpu/profiler.ts';
import type { AttentionVariant } from '../kernels/variants.ts';
import { decodeCost, type Graph, graphOf, type KvStorage, type PassCost } from '../measure/cost.ts';
import { kernelBreakdown, PointSamples } from '../measure/samples.ts';
import type { Model } from '../model/forward.ts';
import { decodePrompt, MAX_TIMED_PASSES } from '../spec/workload.ts';
import type { WorkloadOf } from '../spec/workloads/index.ts';
import type { WeightFormats } from '../weight-format.ts';
import { batchScaling, batchTargets } from './decode-section.ts';
import { requireModel, type WorkloadContext, type WorkloadEngine, type WorkloadRunner } from './workload.ts';

/**
 * The decode sweep. At each depth, a repetition is one request's life at batch B: B fresh
 * sequences get a prompt of `depth` tokens (one prefill: the TTFT), then `gen − 1` decode steps
 * produce the rest. One sample is that repetition's TPOT, (last token − first token) / (gen − 1):
 * one independent number per repetition, never the correlated steps inside it. The ITLs of the
 * point are every gap between tokens of its repetitions. GPU time is each step's timestamp span,
 * averaged over the generation and read back only after the last token, so no readback sits inside
 * a step. The kernel breakdown comes from a separate generation over the same steps, profiled.
 */
export const decodeSweep: WorkloadRunner<'decode'> = async (ctx, w) => {
  const model = requireModel(ctx);
  const steps = w.gen - 1;
  // Timed runs put one pass per step in the profiler (gen is capped so they fit); profiled runs
  // put one per kernel call and read back after every step.
  const profiler = new GpuProfiler(ctx.gpu, MAX_TIMED_PASSES);
  try {
    for (const [i, depth] of w.depths.entries()) {
      const label = `decode depth=${depth}${w.batch > 1 ? ` ×${w.batch}` : ''}`;
      ctx.progress(i, w.depths.length, label);
      const samples = new PointSamples(profiler.supported);
      const latency = { ttftMs: [] as number[], tpotMs: [] as number[], itlMs: [] as number[] };
      for (let r = 0; r < w.warmup + w.reps; r++) {
        ctx.signal.throwIfAborted();
        const once = () => generation(model, ctx.promptTokens, profiler, w, depth, false);
        const run = r === 0 ? await checkedRun(ctx.gpu, `decode at depth ${depth}`, once) : await once();
        if (r < w.warmup) continue;
        const tpot = (run.arrivals[steps] - run.arrivals[0]) / steps;
        samples.add(tpot, run.spans, steps);
        latency.ttftMs.push(run.ttftMs);
        latency.tpotMs.push(tpot);
        for (let s = 1; s <= steps; s++) latency.itlMs.push(run.arrivals[s] - run.arrivals[s - 1]);
      }
      const profiled: Span[][] = [];
      for (let r = 0; r < (w.profile ? w.reps : 1); r++) {
        ctx.signal.throwIfAborted();
        profiled.push((await generation(model, ctx.promptTokens, profiler, w, depth, true)).spans);
      }
      const cost = generationCost(
        ctx.config,
        w,
        depth,
        ctx.variants.attentionDecode,
        ctx.weightFormats,
        graphOf(model),
        ctx.kv,
      );
      ctx.emit({
        type: 'pass',
        pass: 'decode',
        tokens: 1,
        depth,
        batch: w.batch,
        reps: w.reps,
        samples: samples.result(),
        latency,
        cost,
        kernels: kernelBreakdown(profiled, steps, model.lastDispatches, cost),
        weightFormat: ctx.weightFormat,
        ...(ctx.graph ? { graph: ctx.graph } : {}),
      });
      ctx.progress(i + 1, w.depths.length, label);
    }
  } finally {
    profiler.destroy();
  }
};

/**
 * One generation at batch B: B fresh sequences, each with a prompt of max(depth, 1) tokens (one
 * prefill; distinct stand-in tokens per sequence, or the prompt text's first tokens), then gen − 1 decode steps. Timed (`perKernel` false): one pass per step,
 * the spans read once after the last token, so no readback sits inside a step. Profiled
 * (`perKernel` true): one pass per kernel, read back after each step; nothing of it is a sample.
 */
async function generation(
  model: Model,
  prompt: WorkloadContext['promptTokens'],
  profiler: GpuProfiler,
  w: WorkloadOf<'decode'>,
  depth: number,
  perKernel: boolean,
) {
  const seqs = Array.from({ length: w.batch }, () => model.createSequence());
  const prompts = seqs.map((seq, b) => ({
    seq,
    tokens: prompt(decodePrompt(depth), depth + 31 * b + 7),
  }));
  try {
    const start = performance.now();
    let tokens = (await model.prefill(prompts, 'none')).map((r) => r.nextToken);
    const arrivals = [performance.now()];
    const spans: Span[] = [];
    profiler.reset();
    for (let s = 1; s < w.gen; s++) {
      if (perKernel) profiler.reset();
      const step = await model.decode(
        seqs.map((seq, b) => ({ seq, token: tokens[b] })),
        { timing: { profiler, perKernel } },
      );
      arrivals.push(performance.now());
      if (perKernel) spans.push(...(await profiler.read()));
      tokens = step.nextTokens;
    }
    if (!perKernel) spans.push(...(await profiler.read()));
    return { ttftMs: arrivals[0] - start, arrivals, spans };
  } finally {
    for (const seq of seqs) model.freeSequence(seq);
  }
}

/**
 * The mean cost of the generation's steps: step s (1 … gen − 1) finds prompt + s − 1 tokens cached
 * in each of the B sequences and appends one. A TPOT sample is the mean step, so this is its cost.
 */
function generationCost(
  config: Model['config'],
  w: WorkloadOf<'decode'>,
  depth: number,
  attention: AttentionVariant,
  formats: WeightFormats,
  graph: Graph,
  kv: KvStorage,
): PassCost {
  const prompt = decodePrompt(depth);
  const costs = Array.from({ length: w.gen - 1 }, (_, i) =>
    decodeCost(config, Array(w.batch).fill(prompt + i), attention, formats, graph, kv),
  );
  const n = costs.length;
  const mean = (f: (c: PassCost) => number) => costs.reduce((a, c) => a + f(c), 0) / n;
  return {
    flops: mean((c) => c.flops),
    bytes: mean((c) => c.bytes),
    bytesAsImplemented: mean((c) => c.bytesAsImplemented),
    dispatches: costs[0].dispatches,
    kernels: costs[0].kernels.map((k, j) => ({
      ...k,
      flops: mean((c) => c.kernels[j].flops),
      bytes: mean((c) => c.kernels[j].bytes),
      bytesAsImplemented: mean((c) => c.kernels[j].bytesAsImplemented),
    })),
  };
}

/**
 * The decode sweep's engine: its points are the run's generic ones; decode workloads of several
 * batch sizes in one run (the batch suite) make the B-scaling section from them.
 */
export const decodeEngine: WorkloadEngine<'decode'> = {
  run: decodeSweep,
  describe: () => '',
  collect: (_records, run) => {
    const curve = batchScaling(run.points, run.peaks);
    return curve.length > 0 ? { batchScaling: curve } : {};
  },
  targets: batchTargets,
};
