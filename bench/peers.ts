// --peer: llama.cpp beside the run. Writes the run's model as a GGUF file in the run's weight
// format (the engine then loads that same file), runs llama.cpp in its own process and wllama in
// a browser page on the run's prompt lengths and depths; src/peers/record.ts compares their
// next-token distributions with this engine's.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { presetConfig } from '../src/model/config.ts';
import { parseGgufHeader } from '../src/model/gguf.ts';
import { loadGgufModel } from '../src/model/gguf-load.ts';
import { loadHfModel } from '../src/model/hf.ts';
import { type ModelWeights, randomWeights } from '../src/model/weights.ts';
import { ggmlName, peerGguf } from '../src/peers/gguf-out.ts';
import type { PeerJob, PeerJobResult, WllamaJob, WllamaJobResult } from '../src/peers/job.ts';
import { type PromptSource, promptsOf } from '../src/peers/record.ts';
import { PEER_BACKENDS, PEER_ENGINES, type PeerEngine, type PeerRequest } from '../src/peers/schema.ts';
import type { BenchSpec } from '../src/spec/schema.ts';
import { launchBrowser } from './browser.ts';
import { engineMessage } from './engine.ts';
import { forkIpc } from './ipc.ts';
import { DIST_DIR, serveApp, servedModel } from './server.ts';

/** The peer process, built beside the engine host (vite.node.config.ts). */
export const PEER_HOST_PATH = process.env.BENCH_PEER_HOST ?? 'dist-node/peer.mjs';

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

/**
 * The GGUF file both engines load, with where its prompts come from (its tokenizer), or why there
 * is none (the run then goes on without peers).
 */
export type PeerModel =
  | { file: string; fileType: string; weights: ModelWeights; prompts: PromptSource }
  | { error: string };

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
        prompts: promptsOf(bytes, modelPath),
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
    const gguf = peerGguf(weights, spec.weights, name);
    mkdirSync(dir, { recursive: true });
    const file = resolve(dir, gguf.fileName);
    writeFileSync(file, gguf.bytes);
    return { file, fileType: gguf.fileType, weights, prompts: promptsOf(gguf.bytes, file) };
  } catch (e) {
    return { error: `llama.cpp cannot take this model in ${spec.weights}: ${(e as Error).message}` };
  }
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

/**
 * Runs wllama in a page of its own (headless Chromium, the built app), after the engine's runs so
 * the two do not share the machine: the page fetches the GGUF file from the app's server. Rejects
 * with a one-line reason (no browser, a page error, a timeout).
 */
export async function runWllamaJob(
  job: WllamaJob,
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
        .evaluate(([url, j]) => window.wllamaPeer(url, j), [modelUrl, job] as const)
        .catch((e: unknown) => {
          throw new Error(`wllama: ${engineMessage(e).replace(/^Error: /, '')}`);
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
