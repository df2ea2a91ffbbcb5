import { formatError } from '../error-figure.ts';
import { ReferenceMismatchError } from '../errors.ts';
import { type Gpu, isSoftwareAdapter } from '../gpu/device.ts';
import { PipelineCache } from '../gpu/pipelines.ts';
import { defaultVariants, type KernelVariants } from '../kernels/variants.ts';
import { kvCapacityTokens } from '../kv/cache.ts';
import { autotune, autotunePacked } from '../measure/autotune.ts';
import { measurePeaks, type Peaks, probeTimestamps } from '../measure/peaks.ts';
import type { ClockInfo } from '../measure/samples.ts';
import { loadTuning, type TuningStore, tuningKey } from '../measure/tuning-cache.ts';
import { Model } from '../model/forward.ts';
import { LOGITS_MAX_REL_ERR, validateModel } from '../model/verify.ts';
import { type ModelWeights, packedTuneTarget, quantizeWeights, weightFormatOf } from '../model/weights.ts';
import type { BenchResult } from '../results/schema.ts';
import { VALIDATION_TOKENS } from '../spec/workload.ts';
import type { WeightFormat } from '../weight-format.ts';
import { promptTokens } from '../workloads/prompts.ts';
import type { PreparedRun } from './prepare.ts';
import type { ProgressReporter } from './progress.ts';

/** Who the run is for, as the result records it (and as the tuning cache keys its winners). */
export interface RunEnvironment {
  userAgent: string;
  browser: string;
  crossOriginIsolated: boolean;
  toolVersion: string;
  /** Where the engine runs: the browser's worker, or Node on Dawn (with its version and backend). */
  runtime: BenchResult['env']['runtime'];
}

/**
 * The engine as set up for a run: roofs, clock, the weights in the run's format, the kernel
 * families, the model, and what the set-up recorded. Filled step by step, so a run that fails in
 * set-up still reports what was measured before the failure.
 */
export class EngineSetup {
  readonly pipelines: PipelineCache;
  peaks: Peaks | undefined;
  clock: ClockInfo;
  /** The weights in the run's format (a quantized GGUF keeps its own tensors' types). */
  weights: ModelWeights;
  /** Without the autotuner, the defaults for this kind of adapter (see defaultVariants). */
  variants: KernelVariants;
  tuning: NonNullable<BenchResult['tuning']> = { enabled: false, cached: false, searchMs: 0, choices: [] };
  readonly validation: BenchResult['validation'] = { maxAbsErr: 0, maxRelErr: 0, passed: false, checks: [] };
  model: Model | null = null;
  /** The format the packed kernels were searched for: the model's, or its first packed tensor's when mixed. */
  private packedFormat: WeightFormat | undefined;
  private readonly byFormat = new Map<WeightFormat, KernelVariants>();

  constructor(
    private readonly gpu: Gpu,
    private readonly run: PreparedRun,
    /** A context the model must hold beside the workloads' (the peers' agreement prompt, taken after them). */
    private readonly extraContextTokens = 0,
  ) {
    this.pipelines = new PipelineCache(gpu);
    this.variants = defaultVariants(isSoftwareAdapter(gpu.adapter));
    this.clock = { timestamps: gpu.hasTimestamps, quantumNs: null };
    this.weights = run.loaded.weights;
  }

  /**
   * Measures the roofs, applies the run's format, picks the kernel families for this device (from
   * the tuning store when it has them), then builds the model and checks it against the CPU
   * reference: nothing is timed if the check fails.
   */
  async setUp(
    env: RunEnvironment,
    tuningStore: TuningStore | undefined,
    progress: ProgressReporter,
    warnings: string[],
    signal: AbortSignal,
  ): Promise<void> {
    const { gpu, pipelines } = this;
    const { spec, needs, loaded } = this.run;
    const config = loaded.weights.config;
    progress.send(null, 'Measuring the roofs (FMA, copy bandwidth, dispatch and submit overhead)');
    this.peaks = await measurePeaks(gpu, pipelines, signal);
    progress.peaks = this.peaks;
    this.clock = { timestamps: gpu.hasTimestamps, ...(await probeTimestamps(gpu, pipelines)) };
    if (this.clock.quantumNs !== null) {
      warnings.push(
        `GPU timestamps are quantized to ${this.clock.quantumNs / 1000} µs here: every point is placed by the wall clock.`,
      );
    }

    if (needs.model && spec.weights !== 'f32') {
      progress.send(null, `Quantizing the weights to ${spec.weights}`);
      this.weights = quantizeWeights(loaded.weights, spec.weights, (fraction) =>
        progress.send(null, `Quantizing the weights to ${spec.weights} (${Math.round(fraction * 100)}%)`),
      );
    }
    const format = weightFormatOf(this.weights);
    const tuneTarget = packedTuneTarget(this.weights);
    this.packedFormat = tuneTarget?.format;

    if (!spec.autotune && needs.kernels && isSoftwareAdapter(gpu.adapter)) {
      warnings.push(
        'Autotune is off: on this software adapter the run used the barrier-free kernel families (register tiles, four columns per GEMV invocation, direct attention), which the autotuner picks on SwiftShader, not the GPU defaults.',
      );
    }
    if (spec.autotune && needs.kernels) {
      progress.send(null, 'Autotuning: validating and timing each kernel family on this device');
      const key = tuningKey({
        adapter: gpu.adapter,
        browser: env.browser,
        toolVersion: env.toolVersion,
        config,
        gemvBatches: needs.gemvBatches,
        decodeContext: needs.decodeContext,
        weightFormat: format,
        fused: spec.fuse,
      });
      const cached = tuningStore ? await loadTuning(key, tuningStore) : undefined;
      const tuned =
        cached ??
        (await autotune(gpu, pipelines, config, needs.gemvBatches, signal, {
          format: this.packedFormat,
          packedWeight: tuneTarget,
          decodeContext: needs.decodeContext,
          fused: spec.fuse,
          onProgress: (label) => progress.send(null, `Autotuning ${label}`),
        }));
      if (!cached) await tuningStore?.put(key, tuned);
      this.variants = tuned.variants;
      this.tuning = {
        enabled: true,
        cached: Boolean(cached),
        searchMs: tuned.searchMs,
        choices: tuned.choices,
      };
    }

    if (needs.model) {
      progress.send(null, 'Building the model');
      this.model = await Model.create(
        gpu,
        this.weights,
        {
          kv: {
            mode: spec.kv.mode,
            pageSize: spec.kv.pageSize,
            capacityTokens: kvCapacityTokens(spec.kv.mode, spec.kv.pageSize, config.maxSeqLen, {
              sequences: needs.maxSequences,
              tokens: Math.max(needs.maxContextTokens, this.extraContextTokens),
            }),
          },
          maxBatch: needs.maxBatch,
          pipelines,
          variants: this.variants,
          fuse: spec.fuse,
        },
        loaded.name,
      );
      signal.throwIfAborted();
      progress.send(null, 'Checking prefill and decode logits against the CPU reference');
      Object.assign(
        this.validation,
        await validateModel(this.model, this.weights, promptTokens(VALIDATION_TOKENS, config.vocabSize, 99)),
      );
      if (!this.validation.passed) {
        throw new ReferenceMismatchError(
          `GPU logits differ from the CPU reference (max rel err ${formatError(this.validation.maxRelErr)}, bound ${LOGITS_MAX_REL_ERR}); nothing was timed.`,
        );
      }
    }
  }

  /**
   * The kernel families for a model in `format` (the format sweep builds one per format): each
   * packed format gets its packed kernels searched once (the f32 ops keep the run's choice), and
   * the search is recorded with the rest.
   */
  async variantsFor(f: WeightFormat, signal: AbortSignal, announce: () => void): Promise<KernelVariants> {
    const { spec, needs, loaded } = this.run;
    if (f === 'f32' || f === this.packedFormat || !spec.autotune) return this.variants;
    const known = this.byFormat.get(f);
    if (known) return known;
    announce();
    const tuned = await autotunePacked(
      this.gpu,
      this.pipelines,
      loaded.weights.config,
      needs.gemvBatches,
      f,
      signal,
      {
        fused: spec.fuse,
      },
    );
    const v = { ...this.variants, ...tuned.variants };
    this.byFormat.set(f, v);
    this.tuning.choices.push(...tuned.choices);
    this.tuning.searchMs += tuned.searchMs;
    return v;
  }
}
