import type { Gpu } from '../gpu/device.ts';
import type { ModelConfig } from './config.ts';
import { Model } from './forward.ts';
import { compare, referenceForward } from './reference.ts';
import type { LoadedModel } from './source.ts';
import { parameterCount, weightsChecksum } from './weights.ts';

/**
 * Acceptance bound for full-model prefill logits against the float64 CPU reference, as a
 * normwise relative error (max |gpu − ref| / max |ref|). f32 kernels land near 1e-6 on small models.
 */
export const LOGITS_MAX_REL_ERR = 1e-3;

export interface VerifyOutcome {
  config: ModelConfig;
  params: number;
  weightsChecksum: string;
  tokens: number[];
  /** GPU logits, one row per prompt position. */
  logits: number[][];
  maxAbsErr: number;
  maxRelErr: number;
  passed: boolean;
  tolerance: number;
  mismatches: { index: number; got: number; want: number }[];
  timings: { compileMs: number; prefillMs: number; referenceMs: number };
}

/** Runs the prompt through the GPU model (all positions' logits) and compares with the CPU reference. */
export async function verifyModel(gpu: Gpu, loaded: LoadedModel, tokens: number[]): Promise<VerifyOutcome> {
  const { weights } = loaded;
  const model = await Model.create(
    gpu,
    weights,
    { kv: { mode: 'paged', pageSize: 16, capacityTokens: Math.max(64, tokens.length) }, maxBatch: 1 },
    loaded.name,
  );
  try {
    const seq = model.createSequence();
    const t0 = performance.now();
    const [result] = await model.prefill([{ seq, tokens }], 'all');
    const prefillMs = performance.now() - t0;
    const t1 = performance.now();
    const want = referenceForward(weights, tokens);
    const referenceMs = performance.now() - t1;
    const got = result.logits!;
    // Normwise bound: every |gpu − ref| within LOGITS_MAX_REL_ERR of the largest reference logit.
    const scale = want.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
    const cmp = compare(got, want, { atol: LOGITS_MAX_REL_ERR * scale, rtol: 0 });
    const V = weights.config.vocabSize;
    return {
      config: weights.config,
      params: parameterCount(weights.config),
      weightsChecksum: weightsChecksum(weights),
      tokens,
      logits: tokens.map((_, i) => Array.from(got.subarray(i * V, (i + 1) * V))),
      maxAbsErr: cmp.maxAbsErr,
      maxRelErr: cmp.maxRelErr,
      passed: cmp.passed,
      tolerance: LOGITS_MAX_REL_ERR,
      mismatches: cmp.mismatches,
      timings: { compileMs: model.pipelines.compileMs, prefillMs, referenceMs },
    };
  } finally {
    model.destroy();
  }
}
