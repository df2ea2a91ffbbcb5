import { checkedRun } from '../gpu/device.ts';
import { GpuProfiler, type Span } from '../gpu/profiler.ts';
import { graphOf, prefillCost } from '../measure/cost.ts';
import { kernelBreakdown, PointSamples } from '../measure/samples.ts';
import type { Model } from '../model/forward.ts';
import { MAX_TIMED_PASSES } from '../spec/workload.ts';
import { requireModel, type WorkloadEngine, type WorkloadRunner } from './workload.ts';

/**
 * The prefill sweep: for each prompt length L, warm-ups then `reps` whole prefills of a fresh
 * sequence. One sample is one prefill, from submit to the first token read back: its TTFT with no
 * queue. The pass replays a plan built in the first warm-up, so no sample pays for building calls.
 * Profiled runs (one pass per kernel) come after the timed ones, never inside them.
 */
export const prefillSweep: WorkloadRunner<'prefill'> = async (ctx, w) => {
  const model = requireModel(ctx);
  const profiler = new GpuProfiler(ctx.gpu, MAX_TIMED_PASSES);
  try {
    for (const [i, L] of w.lengths.entries()) {
      ctx.progress(i, w.lengths.length, `prefill L=${L}`);
      const tokens = ctx.promptTokens(L, L);
      const samples = new PointSamples(profiler.supported);
      const ttft: number[] = [];
      for (let r = 0; r < w.warmup + w.reps; r++) {
        ctx.signal.throwIfAborted();
        const once = () => timedPrefill(model, profiler, tokens, false);
        const { wallMs, spans } =
          r === 0 ? await checkedRun(ctx.gpu, `prefill of ${L} tokens`, once) : await once();
        if (r < w.warmup) continue;
        samples.add(wallMs, spans);
        ttft.push(wallMs);
      }
      const profiled: Span[][] = [];
      for (let r = 0; r < (w.profile ? w.reps : 1); r++) {
        ctx.signal.throwIfAborted();
        profiled.push((await timedPrefill(model, profiler, tokens, true)).spans);
      }
      const cost = prefillCost(
        ctx.config,
        L,
        0,
        ctx.variants.attentionPrefill,
        ctx.weightFormats,
        graphOf(model),
        ctx.kv,
      );
      ctx.emit({
        type: 'pass',
        pass: 'prefill',
        tokens: L,
        depth: 0,
        batch: 1,
        reps: w.reps,
        samples: samples.result(),
        latency: { ttftMs: ttft },
        cost,
        kernels: kernelBreakdown(profiled, 1, model.lastDispatches, cost),
        weightFormat: ctx.weightFormat,
        ...(ctx.graph ? { graph: ctx.graph } : {}),
      });
      ctx.progress(i + 1, w.lengths.length, `prefill L=${L}`);
    }
  } finally {
    profiler.destroy();
  }
};

/** One prefill of a fresh sequence: its wall time, then (after the span closed) its GPU spans. */
async function timedPrefill(model: Model, profiler: GpuProfiler, tokens: number[], perKernel: boolean) {
  const seq = model.createSequence();
  try {
    profiler.reset();
    const start = performance.now();
    await model.prefill([{ seq, tokens }], 'none', { profiler, perKernel });
    const wallMs = performance.now() - start;
    return { wallMs, spans: await profiler.read() };
  } finally {
    model.freeSequence(seq);
  }
}

/** The prefill sweep's engine: its points are the run's generic ones, so it collects no section of its own. */
export const prefillEngine: WorkloadEngine<'prefill'> = {
  run: prefillSweep,
  describe: () => '',
  collect: () => ({}),
  targets: () => [],
};
