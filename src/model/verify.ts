import { finiteError, maxError } from '../error-figure.ts';
import { type Gpu, isSoftwareAdapter } from '../gpu/device.ts';
import { compare } from '../kernels/reference.ts';
import { defaultVariants } from '../kernels/variants.ts';
import type { ModelConfig } from './config.ts';
import { Model } from './forward.ts';
import { referenceForward } from './reference.ts';
import type { LoadedModel } from './source.ts';
import { type ModelWeights, parameterCount, weightsChecksum } from './weights.ts';

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

/**
 * Runs the prompt through the GPU model (all positions' logits) and compares with the CPU
 * reference, on the kernel families a run without the autotuner uses on this adapter (a software
 * adapter's barrier-free ones: on SwiftShader the GPU defaults took 4.3 s to compile and 1.9 s to
 * prefill ci-tiny's 5 tokens; the model checks of e2e/ cover those families).
 */
export async function verifyModel(gpu: Gpu, loaded: LoadedModel, tokens: number[]): Promise<VerifyOutcome> {
  const { weights } = loaded;
  const model = await Model.create(
    gpu,
    weights,
    {
      kv: { mode: 'paged', pageSize: 16, capacityTokens: Math.max(64, tokens.length) },
      maxBatch: 1,
      variants: defaultVariants(isSoftwareAdapter(gpu.adapter)),
    },
    loaded.name,
  );
  try {
    const t0 = performance.now();
    const got = await promptLogits(model, tokens);
    const prefillMs = performance.now() - t0;
    const t1 = performance.now();
    const want = referenceForward(weights, tokens);
    const referenceMs = performance.now() - t1;
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

/**
 * The logits after every position of `tokens`, from one prefill of a fresh sequence of `model`
 * (row-major, vocabSize per row). The sequence is freed again, so a model a run has finished with
 * can answer this without disturbing anything it holds.
 */
export async function promptLogits(model: Model, tokens: number[]): Promise<Float32Array> {
  const seq = model.createSequence();
  try {
    const [result] = await model.prefill([{ seq, tokens }], 'all');
    return result.logits!;
  } finally {
    model.freeSequence(seq);
  }
}

/**
 * One check of the benchmark's validation pass. The errors are null where the GPU's output held
 * NaN or ±Inf: no error figure exists then (and the check has failed).
 */
export interface ValidationCheck {
  name: string;
  maxAbsErr: number | null;
  maxRelErr: number | null;
  passed: boolean;
}

/**
 * The check every benchmark runs before timing anything: a prefill of four prompt tokens (every
 * kernel of the prefill path) and one decode step through the KV cache (GEMV, decode attention),
 * both against the float64 CPU reference, normwise within LOGITS_MAX_REL_ERR. The prompt must
 * hold five token ids.
 */
export async function validateModel(
  model: Model,
  weights: ModelWeights,
  tokens: readonly number[],
): Promise<{
  maxAbsErr: number | null;
  maxRelErr: number | null;
  passed: boolean;
  checks: ValidationCheck[];
}> {
  const vocab = weights.config.vocabSize;
  const want = referenceForward(weights, [...tokens]); // [5, vocab]
  const seq = model.createSequence();
  try {
    const [prefill] = await model.prefill([{ seq, tokens: tokens.slice(0, 4) }], 'all');
    const step = await model.decode([{ seq, token: tokens[4] }], { logits: true });
    const check = (name: string, got: Float32Array | undefined, ref: Float64Array): ValidationCheck => {
      const scale = ref.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
      const c = compare(got ?? new Float32Array(ref.length), ref, {
        atol: LOGITS_MAX_REL_ERR * scale,
        rtol: 0,
      });
      return {
        name,
        maxAbsErr: finiteError(c.maxAbsErr),
        maxRelErr: finiteError(c.maxRelErr),
        passed: c.passed,
      };
    };
    const checks = [
      check(
        'prefill logits, 4 tokens (all kernels of the prefill path)',
        prefill.logits,
        want.subarray(0, 4 * vocab),
      ),
      check(
        'decode logits, 1 step through the KV cache (GEMV, decode attention)',
        step.logits,
        want.subarray(4 * vocab),
      ),
    ];
    return {
      maxAbsErr: maxError(checks.map((c) => c.maxAbsErr)),
      maxRelErr: maxError(checks.map((c) => c.maxRelErr)),
      passed: checks.every((c) => c.passed),
      checks,
    };
  } finally {
    model.freeSequence(seq);
  }
}
