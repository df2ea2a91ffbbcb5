// --peer: llama.cpp beside the run. Writes the run's model as a GGUF file in the run's weight
// format (the engine then loads that same file), runs each peer in its own process on the run's
// prompt lengths and depths, and compares its next-token distribution with this engine's.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { presetConfig } from '../src/model/config.ts';
import { parseGgufHeader } from '../src/model/gguf.ts';
import { loadGgufModel } from '../src/model/gguf-load.ts';
import { type GgufType, writeGguf } from '../src/model/gguf-writer.ts';
import { loadHfModel } from '../src/model/hf.ts';
import { type ModelWeights, randomWeights } from '../src/model/weights.ts';
import { AGREEMENT_TOLERANCES, agreement, agreementTopK, logSoftmax } from '../src/peers/agreement.ts';
import {
  LLAMA_CPP_CLOCK,
  type PeerJob,
  type PeerJobResult,
  WLLAMA_CLOCK,
  type WllamaJob,
  type WllamaJobResult,
} from '../src/peers/job.ts';
import type { PeerPlan } from '../src/peers/measure.ts';
import { promptText, writerTokenIds } from '../src/peers/prompt-text.ts';
import {
  PEER_BACKENDS,
  PEER_ENGINES,
  type PeerEngine,
  type PeerRecord,
  type PeerRequest,
} from '../src/peers/schema.ts';
import type { BenchSpec } from '../src/spec/schema.ts';
import type { WeightFormat } from '../src/weight-format.ts';
import { launchBrowser } from './browser.ts';
import { engineMessage } from './engine.ts';
import { forkIpc } from './ipc.ts';
import { DIST_DIR, serveApp, servedModel } from './server.ts';

/** The peer process, built beside the engine host (vite.node.config.ts). */
export const PEER_HOST_PATH = process.env.BENCH_PEER_HOST ?? 'dist-node/peer.mjs';

/** Prompt positions whose next-token distributions are compared: 32, so one flipped top-1 is 3%, inside the 95% bound of the 8-bit formats. */
export const AGREEMENT_PROMPT_TOKENS = 32;

/** The GGUF tensor type of each weight format (int8 and int4 come back through the lossless Q8_0/Q4_0 repack). */
const GGUF_TYPE: Record<WeightFormat, GgufType> = { f32: 'F32', f16: 'F16', int8: 'Q8_0', int4: 'Q4_0' };

/** `--peer`'s grammar, for messages: each engine with its backends, its default first. */
export const PEER_SYNTAX = PEER_ENGINES.map((e) => `${e}[:${PEER_BACKENDS[e].join('|')}]`).join(', ');

/** Parses `--peer llama.cpp[:cpu|gpu|auto],wllama[:webgpu|cpu]`; throws a message naming the bad part. */
export function parsePeers(text: string): PeerRequest[] {
  const out: PeerRequest[] = [];
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [engine, backend, ...rest] = part.split(':');
    if (!(PEER_ENGINES as readonly string[]).includes(engine) || rest.length > 0)
      throw new Error(`--peer: unknown peer "${part}"; known: ${PEER_SYNTAX}`);
    const backends = PEER_BACKENDS[engine as PeerEngine];
    const chosen = backend ?? backends[0];
    if (!backends.includes(chosen))
      throw new Error(`--peer ${engine}: backend must be ${backends.join(', ')}, got "${chosen}"`);
    if (out.some((p) => p.engine === engine && p.backend === chosen)) continue;
    out.push({ engine, backend: chosen } as PeerRequest);
  }
  if (out.length === 0) throw new Error('--peer needs at least one peer, e.g. --peer llama.cpp');
  return out;
}

/** The run's prompt lengths, depths, generation length and repetitions, as the peer runs them. */
export function peerPlan(spec: BenchSpec, vocabSize: number): PeerPlan {
  const prefill = spec.workloads.flatMap((w) => (w.kind === 'prefill' ? w.lengths : []));
  const decode = spec.workloads.find((w) => w.kind === 'decode');
  const timing = decode ?? spec.workloads.find((w) => w.kind === 'prefill');
  return {
    prefill: [...new Set(prefill)],
    depths: decode?.kind === 'decode' ? decode.depths : [],
    gen: decode?.kind === 'decode' ? decode.gen : 2,
    reps: timing && 'reps' in timing ? timing.reps : 3,
    warmup: timing && 'warmup' in timing ? timing.warmup : 1,
    vocabSize,
  };
}

/** The GGUF file both engines load, or why there is none (the run then goes on without peers). */
export type PeerModel = { file: string; fileType: string; weights: ModelWeights } | { error: string };

/**
 * Writes the run's model as a GGUF file in the run's weight format, with a tokenizer block, under
 * `dir`; a --model that is already a GGUF file is used as it is. The weights the writer starts
 * from are what the engine would load: the preset's seeded ones, or the Hugging Face folder's.
 */
export function preparePeerModel(spec: BenchSpec, modelPath: string | undefined, dir: string): PeerModel {
  try {
    if (modelPath?.toLowerCase().endsWith('.gguf')) {
      const bytes = new Uint8Array(readFileSync(modelPath));
      const header = parseGgufHeader(bytes, modelPath);
      const { weights } = loadGgufModel(bytes, modelPath);
      const types = new Set(header.tensors.filter((t) => t.dims.length === 2).map((t) => t.type));
      return {
        file: resolve(modelPath),
        fileType: types.size === 1 ? ggmlName([...types][0]) : 'mixed',
        weights,
      };
    }
    let weights: ModelWeights;
    let name: string;
    if (modelPath) {
      const config: unknown = JSON.parse(readFileSync(join(modelPath, 'config.json'), 'utf8'));
      weights = loadHfModel(
        config,
        new Uint8Array(readFileSync(join(modelPath, 'model.safetensors'))),
        modelPath,
      ).weights;
      name = basename(resolve(modelPath));
    } else if (spec.model.kind === 'preset') {
      weights = randomWeights(presetConfig(spec.model.preset), spec.model.seed);
      name = `${spec.model.preset}-seed${spec.model.seed}`;
    } else {
      return {
        error: 'the peer needs a preset, a Hugging Face folder or a GGUF file given on the command line',
      };
    }
    const type = GGUF_TYPE[spec.weights];
    const bytes = writeGguf(weights, { type, tokenizer: true, name });
    mkdirSync(dir, { recursive: true });
    const file = resolve(dir, `${name}-${type}.gguf`);
    writeFileSync(file, bytes);
    return { file, fileType: type, weights };
  } catch (e) {
    return { error: `llama.cpp cannot take this model in ${spec.weights}: ${(e as Error).message}` };
  }
}

function ggmlName(code: number): string {
  return { 0: 'F32', 1: 'F16', 2: 'Q4_0', 8: 'Q8_0', 30: 'BF16' }[code] ?? `type ${code}`;
}

/** A peer that did not run: the record says why; the run's own points are untouched. */
export function failedPeer(
  request: PeerRequest,
  model: { file?: string; fileType?: string },
  error: string,
): PeerRecord {
  return {
    engine: request.engine,
    version: 'unknown',
    backend: request.backend,
    requestedBackend: request.backend,
    device: 'unknown',
    threads: 0,
    threadTrials: [],
    clock: request.engine === 'wllama' ? WLLAMA_CLOCK : LLAMA_CPP_CLOCK,
    file: model.file ?? '',
    fileType: model.fileType ?? '',
    points: [],
    agreement: null,
    error,
  };
}

/**
 * Runs one peer job in its own process, killed after `timeoutMs`. Resolves with the job's result,
 * or rejects with a one-line reason (not installed, no binary, a crash with its signal, a timeout).
 */
export async function runPeerJob(
  job: PeerJob,
  timeoutMs: number,
  env: Record<string, string> = {},
): Promise<PeerJobResult> {
  const child = forkIpc(
    PEER_HOST_PATH,
    env,
    (why) => new Error(`the llama.cpp process ended (${why}) before it answered`),
  );
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      child.call<PeerJobResult>({ type: 'call', job }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          child.child.kill('SIGKILL');
          reject(
            new Error(
              `llama.cpp did not finish within ${(timeoutMs / 1000).toFixed(0)} s (--peer-timeout); stopped`,
            ),
          );
        }, timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
    await child.stop();
  }
}

/** How many of its likeliest tokens wllama lists per agreement position: the whole of a small vocabulary. */
export const WLLAMA_TOP_K = 1024;

/**
 * Runs wllama in a page of its own (headless Chromium, the built app), after the engine's runs so
 * the two do not share the machine: the page fetches the GGUF file from the app's server. Rejects
 * with a one-line reason (no browser, a page error, a timeout).
 */
export async function runWllamaJob(
  job: Omit<WllamaJob, 'modelUrl'>,
  file: string,
  timeoutMs: number,
  browserPath?: string,
): Promise<WllamaJobResult> {
  const served = servedModel(file);
  const server = await serveApp({ distDir: DIST_DIR, modelDir: served.dir });
  let browser: Awaited<ReturnType<typeof launchBrowser>> | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    try {
      browser = await launchBrowser(browserPath);
    } catch (e) {
      throw new Error(`wllama runs in a browser page, and none started: ${(e as Error).message}`);
    }
    const page = await browser.newPage();
    await page.goto(`${server.url}/index.html`);
    await page.waitForFunction(() => 'wllamaPeer' in window, null, { timeout: 30_000 });
    const modelUrl = `${served.source.baseUrl}${served.source.weightsFile ?? ''}`;
    return await Promise.race([
      page
        .evaluate((j) => window.wllamaPeer(j), { ...job, modelUrl })
        .catch((e: unknown) => {
          throw new Error(`wllama: ${engineMessage(e)}`);
        }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new Error(
                `wllama did not finish within ${(timeoutMs / 1000).toFixed(0)} s (--peer-timeout); stopped`,
              ),
            ),
          timeoutMs,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
    await browser?.close();
    await server.close();
  }
}

/** wllama's record from its page's result and this engine's logits on the agreement prompt. */
export function wllamaRecord(
  request: PeerRequest,
  model: { file: string; fileType: string },
  result: WllamaJobResult,
  engineLogits: number[][] | undefined,
  format: WeightFormat,
): PeerRecord {
  return {
    engine: request.engine,
    version: result.info.version,
    backend: result.info.backend,
    requestedBackend: request.backend,
    device: result.info.device,
    threads: result.info.threads,
    threadTrials: result.info.threadTrials,
    clock: WLLAMA_CLOCK,
    file: model.file,
    fileType: model.fileType,
    points: result.points,
    agreement: engineLogits
      ? agreementTopK(
          comparedRows(engineLogits).map(logSoftmax),
          result.topLogprobs,
          AGREEMENT_TOLERANCES[format],
        )
      : null,
    ...(result.info.note ? { note: result.info.note } : {}),
  };
}

/** A peer's record from its job's result and this engine's logits on the agreement prompt. */
export function peerRecord(
  request: PeerRequest,
  model: { file: string; fileType: string },
  result: PeerJobResult,
  engineLogits: number[][] | undefined,
  format: WeightFormat,
): PeerRecord {
  return {
    engine: request.engine,
    version: result.info.version,
    backend: result.info.backend,
    requestedBackend: request.backend,
    device: result.info.device,
    threads: result.info.threads,
    threadTrials: result.info.threadTrials,
    clock: LLAMA_CPP_CLOCK,
    file: model.file,
    fileType: model.fileType,
    points: result.points,
    agreement: engineLogits
      ? agreement(
          comparedRows(engineLogits).map(logSoftmax),
          comparedRows(result.logprobs),
          AGREEMENT_TOLERANCES[format],
        )
      : null,
  };
}

/**
 * The agreement prompt as text: lowercase letters, which the GGUF writer's vocabulary spells one
 * byte token each (prompt-text.ts), so that wllama, which takes only text, reads the same tokens.
 */
export function agreementText(maxSeqLen: number): string {
  return promptText(Math.min(AGREEMENT_PROMPT_TOKENS, maxSeqLen - 1) + 1);
}

/** The agreement prompt's token ids: "▁" and one byte token per letter of agreementText. */
export function agreementPrompt(maxSeqLen: number): number[] {
  return writerTokenIds(agreementText(maxSeqLen));
}

/**
 * The positions compared: after each letter of the prompt. The first position (after "▁" alone)
 * has no text form a text-only peer could be asked, so no peer is compared there.
 */
export function comparedRows<T>(rows: readonly T[]): T[] {
  return rows.slice(1);
}
