import { KERNEL_ROLES } from '../kernels/roles.ts';
import { kvCapacityTokens } from '../kv/cache.ts';
import type { Graph } from '../measure/cost.ts';
import { Model } from '../model/forward.ts';
import { validateModel } from '../model/verify.ts';
import type { Point } from '../results/schema.ts';
import { decodePrompt, VALIDATION_TOKENS } from '../spec/workload.ts';
import type { FusionSummary } from '../spec/workloads/fusion.ts';
import { decodeSweep } from './decode.ts';
import { prefillSweep } from './prefill.ts';
import { promptTokens } from './prompts.ts';
import type { WorkloadContext, WorkloadEngine, WorkloadRunner } from './workload.ts';

/** The graphs, in the order they are measured: the fused one first, then its reference. */
export const FUSION_GRAPHS: readonly Graph[] = ['fused', 'unfused'];

/**
 * The fused graph against the unfused one, in the same run. For each graph a model is built from
 * the run's weights, kernel families and KV settings, checked against the CPU forward, then timed by
 * the prefill and decode sweeps at one L and one depth (their points carry the graph), and the
 * dispatches the engine recorded in the last prefill and the last decode step are emitted with it.
 * A fused model whose kernel families do not take the fusions runs unfused: it is not measured
 * twice, and the run says why. One model lives at a time.
 */
export const fusionCompare: WorkloadRunner<'fusion', FusionRecord> = async (ctx, w) => {
  const units = FUSION_GRAPHS.length * 2;
  let done = 0;
  for (const graph of FUSION_GRAPHS) {
    ctx.signal.throwIfAborted();
    ctx.progress(done, units, `${graph} graph: building the model`);
    const model = await Model.create(
      ctx.gpu,
      ctx.weights,
      {
        kv: {
          mode: ctx.kv.mode,
          pageSize: ctx.kv.pageSize,
          capacityTokens: kvCapacityTokens(ctx.kv.mode, ctx.kv.pageSize, ctx.config.maxSeqLen, {
            sequences: 1,
            tokens: Math.max(w.length, decodePrompt(w.depth) + w.gen - 1, VALIDATION_TOKENS),
          }),
        },
        maxBatch: 1,
        pipelines: ctx.pipelines,
        variants: ctx.variants,
        fuse: graph === 'fused',
      },
      `${graph} model`,
    );
    try {
      if (model.fused !== (graph === 'fused')) {
        ctx.warn(
          `Fusion workload: the kernel families chosen for this device do not take the fusions, so the fused graph could not be built and was not measured (its model ran unfused).`,
        );
        done += 2;
        ctx.progress(done, units, `${graph} graph: not built`);
        continue;
      }
      const check = await validateModel(
        model,
        ctx.weights,
        promptTokens(VALIDATION_TOKENS, ctx.config.vocabSize, 99),
      );
      for (const c of check.checks) ctx.check({ ...c, name: `${graph} graph: ${c.name}` });
      const sub: WorkloadContext<FusionRecord> = {
        ...ctx,
        model,
        graph,
        progress: (d, t, label) => ctx.progress(done + d / t, units, `${graph} graph: ${label}`),
      };
      const repetitions = { reps: w.reps, warmup: w.warmup, profile: false };
      await prefillSweep(sub, { kind: 'prefill', lengths: [w.length], ...repetitions });
      const prefill = { tokens: w.length, dispatches: { ...model.lastDispatches } };
      ctx.progress(++done, units, `${graph} graph: prefill L=${w.length}`);
      await decodeSweep(sub, { kind: 'decode', depths: [w.depth], gen: w.gen, batch: 1, ...repetitions });
      const decode = { depth: w.depth, dispatches: { ...model.lastDispatches } };
      ctx.progress(++done, units, `${graph} graph: decode at depth ${w.depth}`);
      ctx.emit({
        type: 'fusion',
        graph,
        fused: model.fused,
        layers: ctx.config.numLayers,
        prefill,
        decode,
      });
    } finally {
      model.destroy();
    }
  }
};

/** Roles of the dispatches outside the layers: the embedding before them, the LM head and argmax after. */
const OUTSIDE_LAYERS = [KERNEL_ROLES.embedding, KERNEL_ROLES.lmHead, KERNEL_ROLES.argmax] as const;

/**
 * Dispatches per layer of one pass, from the counts by role the engine recorded: all of them less
 * the embedding, LM head and argmax, and the unfused graph's final RMSNorm (the fused graph runs it
 * inside the LM head), over the layers.
 */
export function dispatchesPerLayer(
  dispatches: Readonly<Record<string, number>>,
  layers: number,
  fused: boolean,
): { total: number; perLayer: number } {
  const total = Object.values(dispatches).reduce((a, b) => a + b, 0);
  const outside =
    OUTSIDE_LAYERS.reduce((n, role) => n + (dispatches[role] ?? 0), 0) +
    (!fused && (dispatches[KERNEL_ROLES.norm] ?? 0) > 0 ? 1 : 0);
  return { total, perLayer: layers > 0 ? (total - outside) / layers : 0 };
}

/**
 * The fusion workload's table: for each graph measured (fused first), the dispatches the engine
 * recorded in its prefill and its decode step, in all and per layer, its prefill time (TTFT p50)
 * and TPOT (p50), both wall clock as the points record them, and both as ratios to the unfused
 * graph's in the same run. A graph without both points is left out.
 */
export function fusionSummary(points: readonly Point[], records: readonly FusionRecord[]): FusionSummary[] {
  const point = (graph: FusionRecord['graph'], pass: Point['pass']) =>
    points.filter((p) => p.graph === graph && p.pass === pass).at(-1);
  const rows: FusionSummary[] = [];
  for (const r of records) {
    const prefill = point(r.graph, 'prefill');
    const decode = point(r.graph, 'decode');
    if (!prefill?.ttftMs || !decode?.tpotMs) continue;
    const p = dispatchesPerLayer(r.prefill.dispatches, r.layers, r.fused);
    const d = dispatchesPerLayer(r.decode.dispatches, r.layers, r.fused);
    rows.push({
      graph: r.graph,
      fused: r.fused,
      prefillDispatches: p.total,
      decodeDispatches: d.total,
      prefillPerLayer: p.perLayer,
      decodePerLayer: d.perLayer,
      prefillTokens: r.prefill.tokens,
      decodeDepth: r.decode.depth,
      prefillMs: prefill.ttftMs.p50,
      tpotMs: decode.tpotMs.p50,
      prefillRatio: null,
      tpotRatio: null,
    });
  }
  const base = rows.find((r) => r.graph === 'unfused');
  for (const r of rows) {
    if (!base) break;
    r.prefillRatio = base.prefillMs > 0 ? r.prefillMs / base.prefillMs : null;
    r.tpotRatio = base.tpotMs > 0 ? r.tpotMs / base.tpotMs : null;
  }
  return rows;
}

/**
 * One graph of the fusion workload: the graph asked for, the one the model ran, its layers, and the
 * dispatches by role the engine recorded in the last prefill and the last decode step it timed.
 */
export interface FusionRecord {
  type: 'fusion';
  graph: Graph;
  fused: boolean;
  layers: number;
  prefill: { tokens: number; dispatches: Record<string, number> };
  decode: { depth: number; dispatches: Record<string, number> };
}

/** The fusion workload's engine: its table from each graph's points and the dispatches it recorded. */
export const fusionEngine: WorkloadEngine<'fusion', FusionRecord> = {
  run: fusionCompare,
  describe: (r) => `${r.graph} graph: dispatches recorded`,
  collect: (records, run) => ({ fusion: fusionSummary(run.points, records) }),
};
