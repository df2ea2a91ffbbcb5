import { cpus } from 'node:os';
import type { PeerDriver } from './measure.ts';
import type { LlamaCppBackend } from './schema.ts';

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
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await work();
  return performance.now() - t0;
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
}
interface Context {
  getSequence(): Sequence;
  currentThreads: number;
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
  }): Promise<Context>;
  dispose(): Promise<void>;
}
interface Llama {
  gpu: string | false;
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
  let llama: Llama;
  try {
    llama = await binding.getLlama({
      gpu: backend === 'cpu' ? false : 'auto',
      // Never build llama.cpp from source at run time: a platform without a prebuilt binary is said so.
      build: 'never',
      logLevel: 'error',
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
  const context = await contextFor(threads);
  const seq = context.getSequence();
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
    },
    async prefill(tokens) {
      await seq.clearHistory();
      return timed(() => seq.evaluateWithoutGeneratingNewTokens([...tokens]));
    },
    async decode(contextTokens, gen) {
      await seq.clearHistory();
      const prompt = [...contextTokens];
      // The prompt untimed, its last token asking for the first generated one.
      const first = await seq.controlledEvaluate([
        ...prompt.slice(0, -1),
        [prompt[prompt.length - 1], { generateNext: { token: true } }],
      ]);
      let token = first[prompt.length - 1]?.next.token ?? 0;
      const steps: number[] = [];
      for (let i = 0; i < gen; i++) {
        let out: Awaited<ReturnType<Sequence['controlledEvaluate']>> = [];
        steps.push(
          await timed(async () => {
            out = await seq.controlledEvaluate([[token, { generateNext: { token: true } }]]);
          }),
        );
        token = out[0]?.next.token ?? token;
      }
      return steps;
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
