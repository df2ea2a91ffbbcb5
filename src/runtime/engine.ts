import { version } from '../../package.json';
import { CancelledError, SpecError } from '../errors.ts';
import type { Gpu } from '../gpu/device.ts';
import type { TuningStore } from '../measure/tuning-cache.ts';
import { loadModel } from '../model/source.ts';
import { verifyModel } from '../model/verify.ts';
import { runGeneration } from '../run/generate.ts';
import { type ProbeOutcome, type RunEnvironment, runBench } from '../run/run.ts';
import { GenerateRequestSchema } from '../spec/prompt.ts';
import { parseBenchSpec } from '../spec/schema.ts';
import type { EngineApi, GpuInfo } from './api.ts';

/**
 * What a runtime gives the engine: a device, a description of where it runs, and a place to keep
 * the autotuner's winners. The browser's worker and the Node host differ only here.
 */
export interface EngineHost {
  acquireGpu(): Promise<Gpu>;
  /** The user agent (browser) or `Node vX; webgpu (Dawn) Y` (native). */
  userAgent: string;
  /** The browser and its version, or the Dawn build the native runtime uses. */
  browser(): Promise<string>;
  crossOriginIsolated: boolean;
  runtime: RunEnvironment['runtime'];
  tuningStore: TuningStore;
}

/**
 * The engine behind the typed EngineApi, for any runtime: one device per engine, acquired on first
 * use and replaced after a loss; runs by id, with cancels that may arrive before their run.
 */
export function createEngine(host: EngineHost): EngineApi {
  let gpuPromise: Promise<Gpu> | undefined;
  const running = new Map<string, AbortController>();
  const cancelledEarly = new Set<string>();
  const probes = new Map<string, ProbeOutcome>();
  let anonymousRuns = 0;

  async function gpu(): Promise<Gpu> {
    const current = gpuPromise && (await gpuPromise.catch(() => undefined));
    if (!current || current.lostError) gpuPromise = host.acquireGpu();
    return gpuPromise as Promise<Gpu>;
  }

  /** A run or generation by id, cancelled at once when its cancel came first. */
  const track = (runId: string | undefined) => {
    const id = runId ?? `run-${++anonymousRuns}`;
    const controller = new AbortController();
    running.set(id, controller);
    if (cancelledEarly.delete(id)) controller.abort(new CancelledError('Cancelled before the run started.'));
    return { id, controller };
  };

  const gpuInfoOf = (g: Gpu): GpuInfo => ({
    adapter: g.adapter,
    features: g.features,
    limits: g.limits,
    userAgent: host.userAgent,
  });

  return {
    async gpuInfo() {
      return gpuInfoOf(await gpu());
    },

    async verify(request) {
      const g = await gpu();
      const loaded = await loadModel(request.model);
      const outcome = await verifyModel(g, loaded, request.tokens);
      return { ...outcome, gpu: gpuInfoOf(g), modelName: loaded.name, warnings: loaded.warnings };
    },

    async generate(input, onEvent, runId) {
      const parsed = GenerateRequestSchema.safeParse(input);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new SpecError(
          `Invalid generate request: ${issue.path.join('.') || '(root)'}: ${issue.message}`,
        );
      }
      const { id, controller } = track(runId);
      try {
        const g = await gpu();
        // Events are advisory, as progress is: a caller that went away must not fail the generation.
        const send = (e: Parameters<NonNullable<typeof onEvent>>[0]) =>
          void Promise.resolve(onEvent?.(e)).catch(() => undefined);
        return { ...(await runGeneration(g, parsed.data, send, controller.signal)), gpu: gpuInfoOf(g) };
      } finally {
        running.delete(id);
      }
    },

    async run(input, onProgress, runId, probeTokens) {
      const { id, controller } = track(runId);
      try {
        const spec = parseBenchSpec(input);
        const env: RunEnvironment = {
          userAgent: host.userAgent,
          browser: await host.browser(),
          crossOriginIsolated: host.crossOriginIsolated,
          toolVersion: version,
          runtime: host.runtime,
        };
        return await runBench(await gpu(), spec, env, {
          // Progress is advisory: a caller that went away must not fail the run.
          onProgress: (p) => void Promise.resolve(onProgress?.(p)).catch(() => undefined),
          signal: controller.signal,
          tuningStore: host.tuningStore,
          probe: probeTokens && { tokens: probeTokens, onDone: (outcome) => probes.set(id, outcome) },
        });
      } finally {
        running.delete(id);
      }
    },

    async takeProbe(runId) {
      const outcome = probes.get(runId) ?? null;
      probes.delete(runId);
      return outcome;
    },

    async cancel(runId) {
      const reason = () => new CancelledError('Cancelled by the user; the finished points are kept.');
      if (runId === undefined) {
        for (const c of running.values()) c.abort(reason());
        return;
      }
      const controller = running.get(runId);
      if (controller) controller.abort(reason());
      else cancelledEarly.add(runId);
    },
  };
}
