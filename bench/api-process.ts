import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { type AdapterChoice, findVulkan } from './vulkan.ts';

/** The HTTP server's engine process as `npm run build` writes it (vite.node.config.ts). */
export const API_HOST_PATH = process.env.BENCH_API_HOST ?? 'dist-node/api.mjs';

/** How long the server may take to build, check and warm its model before the caller gives up. */
const START_TIMEOUT_MS = 180_000;

export interface ApiServerSettings {
  /** A preset's name, or (`model`) none. */
  preset?: string;
  /** A GGUF file to serve instead of a preset, with its own tokenizer when it carries one. */
  model?: string;
  seed?: number;
  weights?: string;
  host?: string;
  /** 0: a free port. */
  port?: number;
  maxBatch?: number;
  tokenBudget?: number;
  kvTokens?: number;
  pageSize?: number;
  maxWaiting?: number;
  /** Keep a prefix cache (serve-api --prefix-cache). */
  prefixCache?: boolean;
  /** The per-request KV budget in tokens and its policy (serve-api --kv-budget, --kv-budget-policy). */
  kvBudget?: { tokens: number; policy: 'reject' | 'truncate' };
  adapter?: AdapterChoice;
}

/** What the server said when it started listening. */
export interface ApiServerInfo {
  url: string;
  model: string;
  weights: string;
  adapter: string;
  software: boolean;
  maxBatch: number;
  kvPages: number;
  maxSeqLen: number;
  vocabSize: number;
  validationMaxRelErr: number;
  /** The model's tokenizer (`gpt2 (151936 tokens)`), or null: text is then the stand-in. */
  tokenizer: string | null;
}

export interface ApiServerProcess {
  info: ApiServerInfo;
  /** Stops the server (SIGTERM, then SIGKILL after 5 s) and resolves when the process is gone. */
  close(): Promise<void>;
}

export class ApiServerStartError extends Error {
  override readonly name = 'ApiServerStartError';
}

function flags(s: ApiServerSettings): string[] {
  const out: string[] = [];
  const add = (flag: string, v: string | number | undefined) => {
    if (v !== undefined) out.push(flag, String(v));
  };
  add('--preset', s.preset);
  add('--model', s.model);
  add('--seed', s.seed);
  add('--weights', s.weights);
  add('--host', s.host);
  add('--port', s.port);
  add('--max-batch', s.maxBatch);
  add('--token-budget', s.tokenBudget);
  add('--kv-tokens', s.kvTokens);
  add('--page-size', s.pageSize);
  add('--max-waiting', s.maxWaiting);
  if (s.prefixCache) out.push('--prefix-cache');
  if (s.kvBudget) out.push('--kv-budget', String(s.kvBudget.tokens), '--kv-budget-policy', s.kvBudget.policy);
  return out;
}

/**
 * Starts the engine's OpenAI-compatible server in its own Node process on Dawn (the Vulkan set-up
 * of the native runtime) and resolves once it listens, its model checked against the CPU reference
 * and warmed. `onLog` gets what the process writes to stderr.
 */
export async function startApiServer(
  s: ApiServerSettings,
  onLog: (line: string) => void = () => {},
): Promise<ApiServerProcess> {
  if (!existsSync(API_HOST_PATH))
    throw new ApiServerStartError(`${API_HOST_PATH} is missing: run npm run build first.`);
  const vulkan = findVulkan(s.adapter ?? 'default');
  const child: ChildProcess = spawn(process.execPath, [API_HOST_PATH, ...flags(s)], {
    env: { ...process.env, ...vulkan.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  createInterface({ input: child.stderr as NodeJS.ReadableStream }).on('line', onLog);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(t);
    }
  };
  const info = await new Promise<ApiServerInfo>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new ApiServerStartError(`the server did not listen within ${START_TIMEOUT_MS / 1000} s`));
    }, START_TIMEOUT_MS);
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.on('line', (line) => {
      let event: { event?: string; message?: string } & Partial<ApiServerInfo>;
      try {
        event = JSON.parse(line);
      } catch {
        onLog(line);
        return;
      }
      if (event.event === 'listening') {
        clearTimeout(timer);
        resolve(event as ApiServerInfo);
      } else if (event.event === 'error') {
        clearTimeout(timer);
        reject(new ApiServerStartError(`the server could not start: ${event.message}`));
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(
        new ApiServerStartError(`the server process exited (${signal ?? `code ${code}`}) before listening`),
      );
    });
  }).catch(async (e) => {
    await close();
    throw e;
  });
  return { info, close };
}
