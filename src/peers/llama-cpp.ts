import { cpus } from 'node:os';
import {
  decodeStepMsFromPerf,
  type LlamaPerfReading,
  PERF_PREFIX,
  parseLlamaPerf,
  prefillMsFromPerf,
} from './llama-perf.ts';
import type { PeerDriver, PeerTiming } from './measure.ts';
import type { LlamaCppBackend, PeerPointClock } from './schema.ts';

/**
 * llama.cpp through node-llama-cpp (its prebuilt binaries), on the CPU or its GPU backend. Node
 * only, and loaded only in the peer's own child process (runtime/node/peer-host.ts): an abort in
 * native code ends that process, not the run.
 */

/** The module to load: node-llama-cpp, or another install of it named by BENCH_LLAMA_CPP_MODULE. */
export const LLAMA_CPP_MODULE = process.env.BENCH_LLAMA_CPP_MODULE ?? 'node-llama-cpp';

/** The peer is not installed, has no binary here, or cannot take the model: said in one line. */
export class PeerUnavailableError extends Error {
  override readonly name = 'PeerUnavailableError';
}

export interface LlamaCppInfo {
  version: string;
  backend: string;
  device: string;
  threads: number;
  /** The thread counts tried, each with its probe's time (see pickThreads). */
  threadTrials: { threads: number; ms: number }[];
  /**
   * The clock of the timed points: llama.cpp's own counters where they could be read, else the
   * wall clock around each call (and `note` says why). Absent for peers that name none (wllama).
   */
  clock?: PeerPointClock;
  note?: string;
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await work();
  return performance.now() - t0;
}

/**
 * llama.cpp's own counters, read through node-llama-cpp 3.21's only door to them: a context made
 * with `performanceTracking: true` has `printTimings()`, which calls `llama_perf_context_print` and
 * then `llama_perf_context_reset`, printing at the info level through the Llama's logger. The
 * binding has no call that returns `llama_perf_context`'s numbers. So the logger given to
 * `getLlama` catches those lines while a reading is taken, and the log level is raised to info
 * only for that moment: nothing is logged inside a timed span, and llama.cpp's other info lines
 * stay quiet, as they did with the level at error.
 */
class PerfCounters {
  private captured: string[] | null = null;

  /** The Llama's logger: errors go to stderr, as node-llama-cpp's own logger printed them. */
  readonly logger = (level: string, message: string): void => {
    if (this.captured && message.includes(PERF_PREFIX)) {
      this.captured.push(message);
      return;
    }
    if (level === 'error' || level === 'fatal') console.warn(`[node-llama-cpp] ${message}`);
  };

  /** The counters since the last reading (or the context's creation), and a reset. */
  async read(llama: Llama, context: Context): Promise<LlamaPerfReading> {
    const lines: string[] = [];
    this.captured = lines;
    llama.logLevel = 'info';
    try {
      await context.printTimings();
      // printTimings waits one macrotask for the lines; give the logger a few more, in case.
      for (let i = 0; i < 20 && !parseLlamaPerf(lines); i++)
        await new Promise((resolve) => setTimeout(resolve, 0));
    } finally {
      llama.logLevel = 'error';
      this.captured = null;
    }
    const reading = parseLlamaPerf(lines);
    if (!reading)
      throw new Error(
        `no llama_perf_context_print lines came through the logger (got ${lines.length} line${lines.length === 1 ? '' : 's'})`,
      );
    return reading;
  }
}

/**
 * llama.cpp's thread count, chosen by measuring, as this engine chooses its kernels: every count
 * from 1 to the machine's math cores (at most 4 tried: all cores, half, one) runs a probe of a
 * 32-token prefill and 4 decode steps, three times; the fastest median wins. llama-bench's default
 * (all physical cores) can be the slowest choice: on a 2-vCPU VM, 2 threads spin against the
 * Node process and the probe's decode steps take 20 ms where 1 thread takes 0.4 ms.
 */
async function pickThreads(
  cores: number,
  contextFor: (threads: number) => Promise<Context>,
  vocabSize: number,
): Promise<{ threads: number; trials: { threads: number; ms: number }[] }> {
  const candidates = [...new Set([Math.max(1, cores), Math.max(1, Math.floor(cores / 2)), 1])];
  const tokens = Array.from({ length: 32 }, (_, i) => (i * 7919 + 1000) % vocabSize);
  const trials: { threads: number; ms: number }[] = [];
  for (const threads of candidates) {
    const context = await contextFor(threads);
    const seq = context.getSequence();
    const samples: number[] = [];
    for (let r = 0; r < 4; r++) {
      await seq.clearHistory();
      const ms = await timed(async () => {
        await seq.evaluateWithoutGeneratingNewTokens(tokens);
        for (let i = 0; i < 4; i++)
          await seq.controlledEvaluate([[tokens[i], { generateNext: { token: true } }]]);
      });
      if (r > 0) samples.push(ms);
    }
    samples.sort((a, b) => a - b);
    trials.push({ threads, ms: samples[1] });
    await context.dispose();
  }
  const best = trials.reduce((a, b) => (b.ms < a.ms ? b : a));
  return { threads: best.threads, trials };
}

export interface LlamaCppSession extends PeerDriver {
  info: LlamaCppInfo;
  /** Next-token log-probabilities after every position of `tokens` (one whole-vocabulary row each). */
  logprobs(tokens: readonly number[]): Promise<Float64Array[]>;
  close(): Promise<void>;
}

// The parts of node-llama-cpp's API this driver uses, typed here so the module stays optional.
interface Sequence {
  clearHistory(): Promise<void>;
  evaluateWithoutGeneratingNewTokens(tokens: number[]): Promise<void>;
  controlledEvaluate(
    input: (number | [number, { generateNext: { token?: boolean; probabilities?: boolean } }])[],
  ): Promise<({ next: { token?: number | null; probabilities?: Map<number, number> } } | undefined)[]>;
  /**
   * A generation: decodes `tokens`, then each generated token, one decode per step, greedily
   * (temperature 0 is its default), yielding each token; it stops at an end-of-generation token
   * unless `yieldEogToken`.
   */
  evaluate(tokens: number[], options?: { yieldEogToken?: boolean }): AsyncGenerator<number, void, unknown>;
}
interface Context {
  getSequence(): Sequence;
  currentThreads: number;
  /** Prints llama.cpp's counters (llama_perf_context_print) at the info level, then resets them. */
  printTimings(): Promise<void>;
  dispose(): Promise<void>;
}
interface Model {
  createContext(o: {
    contextSize: number;
    batchSize: number;
    threads: number;
    experimentalKvCacheKeyType?: string;
    experimentalKvCacheValueType?: string;
    flashAttention?: boolean;
    /** llama.cpp's `no_perf = false`: its counters run, and printTimings works. */
    performanceTracking?: boolean;
  }): Promise<Context>;
  dispose(): Promise<void>;
}
interface Llama {
  gpu: string | false;
  /** node-llama-cpp's LlamaLogLevel, a string enum ("error", "info", …); setting it reaches llama.cpp. */
  logLevel: string;
  cpuMathCores: number;
  llamaCppRelease: { repo: string; release: string };
  getGpuDeviceNames(): Promise<string[]>;
  loadModel(o: { modelPath: string; gpuLayers?: number | 'max' }): Promise<Model>;
  dispose(): Promise<void>;
}
interface Binding {
  getLlama(o: Record<string, unknown>): Promise<Llama>;
}

async function importBinding(): Promise<{ binding: Binding; packageVersion: string }> {
  let binding: Binding;
  try {
    binding = (await import(/* @vite-ignore */ LLAMA_CPP_MODULE)) as Binding;
  } catch (e) {
    throw new PeerUnavailableError(
      `llama.cpp peer: ${LLAMA_CPP_MODULE} is not installed (${(e as Error).message.split('\n')[0]}); install it with npm ci (without --omit=optional)`,
    );
  }
  let packageVersion = 'unknown';
  try {
    // Its exports map hides package.json: walk up from the entry point to it.
    const { readFileSync } = await import('node:fs');
    const { dirname, join } = await import('node:path');
    const { fileURLToPath } = await import('node:url');
    let dir = dirname(fileURLToPath(import.meta.resolve(LLAMA_CPP_MODULE)));
    for (let i = 0; i < 4; i++, dir = dirname(dir)) {
      try {
        const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
          name?: string;
          version?: string;
        };
        if (pkg.name === 'node-llama-cpp' && pkg.version) {
          packageVersion = pkg.version;
          break;
        }
      } catch {
        // No package.json at this level: go up.
      }
    }
  } catch {
    // An override path may have no package.json above it: the version then says so.
  }
  return { binding, packageVersion };
}

/**
 * Loads `file` in llama.cpp on `backend` with a context of `contextSize` tokens and as many threads
 * as the machine has cores for math (llama-bench's default is the physical cores, too).
 */
export async function openLlamaCpp(
  file: string,
  backend: LlamaCppBackend,
  contextSize: number,
  vocabSize: number,
): Promise<LlamaCppSession> {
  const { binding, packageVersion } = await importBinding();
  const counters = new PerfCounters();
  let llama: Llama;
  try {
    llama = await binding.getLlama({
      gpu: backend === 'cpu' ? false : 'auto',
      // Never build llama.cpp from source at run time: a platform without a prebuilt binary is said so.
      build: 'never',
      logLevel: 'error',
      logger: counters.logger,
    });
  } catch (e) {
    throw new PeerUnavailableError(
      `llama.cpp peer: no usable llama.cpp binary for ${process.platform}-${process.arch} (${(e as Error).message.split('\n')[0]})`,
    );
  }
  if (backend === 'gpu' && llama.gpu === false) {
    await llama.dispose();
    throw new PeerUnavailableError(
      'llama.cpp peer: backend gpu asked for, but llama.cpp found no GPU backend it can use here (its Vulkan build refuses a device without 16-bit storage, such as SwiftShader); use llama.cpp:cpu',
    );
  }
  let model: Model;
  try {
    model = await llama.loadModel({ modelPath: file, gpuLayers: llama.gpu === false ? 0 : 'max' });
  } catch (e) {
    await llama.dispose();
    throw new PeerUnavailableError(`llama.cpp peer: cannot load ${file}: ${(e as Error).message}`);
  }
  const contextFor = (threads: number) =>
    model.createContext({ contextSize, batchSize: contextSize, threads });
  const { threads, trials } = await pickThreads(llama.cpuMathCores, contextFor, vocabSize);
  // The timed context: as the probe's, with llama.cpp's counters on (a few clock reads per decode).
  const context = await model.createContext({
    contextSize,
    batchSize: contextSize,
    threads,
    performanceTracking: true,
  });
  const seq = context.getSequence();
  // The points are timed by llama.cpp's counters where a first reading comes through (it also
  // zeroes them); a binding where it does not (another install, by BENCH_LLAMA_CPP_MODULE) is timed
  // by the wall clock around each call, and the record says why.
  let clock: PeerPointClock = 'llama.cpp-perf';
  let note: string | undefined;
  try {
    await counters.read(llama, context);
  } catch (e) {
    clock = 'wall';
    note = `llama.cpp's own counters could not be read (${(e as Error).message.split('\n')[0]}), so its points are wall-clock times around each node-llama-cpp call`;
  }
  const perf = clock === 'llama.cpp-perf' ? () => counters.read(llama, context) : undefined;
  const device =
    llama.gpu === false
      ? `CPU: ${cpus()[0]?.model ?? 'unknown'}`
      : (await llama.getGpuDeviceNames()).join(', ') || String(llama.gpu);
  return {
    info: {
      version: `llama.cpp ${llama.llamaCppRelease.release} (${llama.llamaCppRelease.repo}), node-llama-cpp ${packageVersion}`,
      backend: llama.gpu === false ? 'cpu' : String(llama.gpu),
      device,
      threads: context.currentThreads || threads,
      threadTrials: trials,
      clock,
      ...(note ? { note } : {}),
    },
    clock,
    async prefill(tokens): Promise<number | PeerTiming> {
      await seq.clearHistory();
      // Zero the counters: what came before (the last sample's generation) is not this prefill.
      await perf?.();
      const wallMs = await timed(() => seq.evaluateWithoutGeneratingNewTokens([...tokens]));
      if (!perf) return wallMs;
      return { ms: prefillMsFromPerf(await perf(), tokens.length), wallMs };
    },
    async decode(contextTokens, steps): Promise<number[] | PeerTiming> {
      await seq.clearHistory();
      // One generation in one call, as a user runs one: the prompt's decode gives the first token
      // (untimed, as this engine counts a TPOT), then `steps` single-token decodes inside the
      // binding, each feeding the last token back. llama.cpp's counters take the decodes alone;
      // the binding's own work around each (scheduling the batch on the next event-loop turn,
      // sampling, N-API calls: most of a ci-tiny step's wall time) is in the wall clock only.
      const generation = seq.evaluate([...contextTokens], { yieldEogToken: true });
      try {
        if ((await generation.next()).done)
          throw new Error('llama.cpp peer: the generation ended before its first token');
        await perf?.();
        const t0 = performance.now();
        for (let i = 0; i < steps; i++)
          if ((await generation.next()).done)
            throw new Error(`llama.cpp peer: the generation ended after ${i + 1} of ${steps + 1} tokens`);
        const wallMs = (performance.now() - t0) / Math.max(1, steps);
        if (!perf) return [wallMs];
        return { ms: decodeStepMsFromPerf(await perf(), steps), wallMs };
      } finally {
        await generation.return(undefined);
      }
    },
    async logprobs(tokens) {
      // The cross-check compares the two engines' arithmetic, so llama.cpp holds its KV cache in
      // f32 and runs attention without flash attention (whose CPU path multiplies Q·K in f16), as
      // this engine does. With its defaults (kept for the timed points, as users run it) log p moved
      // by 4.5e-3 on ci-tiny and 7.2e-3 on smollm2-135m over 32 positions; without them, 4.6e-6.
      const f32Context = await model.createContext({
        contextSize,
        batchSize: contextSize,
        threads,
        experimentalKvCacheKeyType: 'F32',
        experimentalKvCacheValueType: 'F32',
        flashAttention: false,
      });
      const seq = f32Context.getSequence();
      const out = await seq.controlledEvaluate(
        tokens.map(
          (t) =>
            [t, { generateNext: { probabilities: true } }] as [
              number,
              { generateNext: { probabilities: boolean } },
            ],
        ),
      );
      await f32Context.dispose();
      return out.map((o, p) => {
        const probs = o?.next.probabilities;
        if (!probs) throw new Error(`llama.cpp peer: no probabilities at position ${p}`);
        // A token llama.cpp leaves out has probability 0: log p = −∞, which fails any bound.
        const row = new Float64Array(vocabSize).fill(Number.NEGATIVE_INFINITY);
        for (const [id, pr] of probs) row[id] = Math.log(pr);
        return row;
      });
    },
    async close() {
      await context.dispose();
      await model.dispose();
      await llama.dispose();
    },
  };
}
