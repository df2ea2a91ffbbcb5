import { Wllama } from '@wllama/wllama';
import wasmUrl from '@wllama/wllama/esm/wasm/wllama.wasm?url';
import type { TopLogprob } from './agreement.ts';
import type { WllamaJob, WllamaJobResult } from './job.ts';
import { measurePeer, type PeerDriver } from './measure.ts';
import { promptText } from './prompt-text.ts';

/**
 * llama.cpp in the page: wllama (llama.cpp and its server loop compiled to WebAssembly, with
 * llama.cpp's WebGPU backend). Browser only. Its API takes text prompts, not token ids, so each
 * prompt is text the GGUF writer's vocabulary spells one token per character (prompt-text.ts), and
 * every reply's own token count is checked against the count asked for. Every figure is llama.cpp's
 * own counter, as its server reports it (`timings`).
 */

/** The version in package.json's pin, for the record. */
const WLLAMA_VERSION = '3.8.1';

/** The completion fields this driver sends and reads (wllama's OAI-style raw completion). */
interface Completion {
  usage: { prompt_tokens: number; completion_tokens: number };
  timings?: { prompt_n: number; prompt_ms: number; predicted_n: number; predicted_ms: number };
  choices: { logprobs: { content: { top_logprobs: TopLogprob[] }[] } | null }[];
}

async function load(
  job: WllamaJob,
  blob: Blob,
  options: { agreement: boolean },
): Promise<{ w: Wllama; log: string[] }> {
  const log: string[] = [];
  const keep = (...parts: unknown[]) => void log.push(parts.map(String).join(' '));
  const w = new Wllama({ default: wasmUrl }, { logger: { debug: keep, log: keep, warn: keep, error: keep } });
  try {
    await w.loadModel([blob], {
      n_ctx: job.contextSize,
      // llama.cpp's own default context for timing; for the agreement, as the native peer: an f32 KV
      // cache and no flash attention (whose CPU path multiplies Q·K in f16).
      ...(options.agreement ? { cache_type_k: 'f32', cache_type_v: 'f32', flash_attn: false } : {}),
      ...(job.backend === 'cpu' ? { n_gpu_layers: 0 } : {}),
      n_parallel: 1,
    });
  } catch (e) {
    // wllama's own message names its glue, not the file: say what failed, keep its words.
    const said = log
      .filter((l) => /error|failed/i.test(l))
      .slice(-2)
      .join('; ');
    throw new Error(
      `llama.cpp cannot load the GGUF file (${(e as Error).message}${said ? `; its log: ${said}` : ''})`,
    );
  }
  return { w, log };
}

/**
 * Where llama.cpp put the weights, from its load log ("load_tensors: <device> model buffer size"):
 * "webgpu" when any went to a WebGPU buffer, else "wasm-cpu".
 */
export function backendFromLog(log: readonly string[]): 'webgpu' | 'wasm-cpu' {
  const devices = log.flatMap((l) => {
    const m = /load_tensors:\s+(\S+) model buffer size/.exec(l);
    return m ? [m[1]] : [];
  });
  return devices.some((d) => /webgpu/i.test(d)) ? 'webgpu' : 'wasm-cpu';
}

async function complete(w: Wllama, options: Record<string, unknown>): Promise<Completion> {
  return (await w.createCompletion({
    temperature: 0,
    ignore_eos: true,
    ...options,
  } as Parameters<Wllama['createCompletion']>[0] & { stream?: false })) as unknown as Completion;
}

/** A timing driver over wllama's completions: a prompt of the same length as the engine's. */
function driver(w: Wllama): PeerDriver {
  return {
    async prefill(tokens) {
      const r = await complete(w, { prompt: promptText(tokens.length), max_tokens: 1, cache_prompt: false });
      if (!r.timings || r.timings.prompt_n !== tokens.length)
        throw new Error(
          `wllama read the ${tokens.length}-token prompt as ${r.timings?.prompt_n ?? r.usage.prompt_tokens} tokens: this file's tokenizer does not spell the prompt text one token per character`,
        );
      return r.timings.prompt_ms;
    },
    async decode(context, steps) {
      // The first token comes from the prompt's prefill; llama.cpp's generation time then covers
      // the `steps` decode calls after it (its predicted_ms over predicted_n − 1). Text has no
      // one-token form (an empty text is no token at all), so depth 0 runs on a 2-token context.
      const r = await complete(w, {
        prompt: promptText(Math.max(2, context.length)),
        max_tokens: steps + 1,
        cache_prompt: false,
      });
      const t = r.timings;
      if (!t || t.predicted_n !== steps + 1)
        throw new Error(
          `wllama generated ${t?.predicted_n ?? r.usage.completion_tokens} of ${steps + 1} tokens`,
        );
      return [t.predicted_ms / steps];
    },
  };
}

/**
 * Next-token top log-probabilities after each prefix of the agreement text: one completion per
 * position (the text has no token-id form), each reusing the cached prefix of the one before.
 */
async function topLogprobs(w: Wllama, text: string, topK: number): Promise<TopLogprob[][]> {
  const rows: TopLogprob[][] = [];
  for (let n = 1; n <= text.length; n++) {
    const r = await complete(w, {
      prompt: text.slice(0, n),
      max_tokens: 1,
      logprobs: topK,
      cache_prompt: true,
    });
    if (r.usage.prompt_tokens !== n + 1)
      throw new Error(
        `wllama read ${n} characters of the agreement text as ${r.usage.prompt_tokens} tokens, not ${n + 1}: this file's tokenizer is not the one the GGUF writer gives seeded models`,
      );
    const listed = r.choices[0]?.logprobs?.content[0]?.top_logprobs;
    if (!listed?.length) throw new Error('wllama returned no log-probabilities');
    rows.push(listed.map(({ id, logprob }) => ({ id, logprob })));
  }
  return rows;
}

/**
 * Loads the GGUF file, measures the plan with llama.cpp's defaults, then takes the agreement. A
 * failure names the step it happened in: wllama's own errors name its glue code, not the cause.
 */
export async function runWllama(job: WllamaJob, blob: Blob): Promise<WllamaJobResult> {
  let step = 'loading the file';
  try {
    const timing = await load(job, blob, { agreement: false });
    const backend = backendFromLog(timing.log);
    const threads = timing.w.getNumThreads();
    let points: WllamaJobResult['points'];
    try {
      step = 'timing the prefill and decode points';
      points = await measurePeer(driver(timing.w), job.plan);
    } finally {
      await timing.w.exit();
    }
    step = 'loading the file for the agreement';
    const exact = await load(job, blob, { agreement: true });
    try {
      step = 'taking the next-token log-probabilities';
      const rows = await topLogprobs(exact.w, job.agreementText, job.topK);
      const adapter = await navigator.gpu?.requestAdapter();
      return {
        info: {
          version: `wllama ${WLLAMA_VERSION}`,
          backend,
          device:
            backend === 'webgpu'
              ? `WebGPU: ${adapter?.info.description || adapter?.info.vendor || 'adapter'}`
              : 'CPU (WebAssembly)',
          threads,
          threadTrials: [],
          note:
            job.backend === 'webgpu' && backend !== 'webgpu'
              ? webgpuNote(adapter ? adapter.features.has('shader-f16') : null)
              : undefined,
        },
        points,
        topLogprobs: rows,
      };
    } finally {
      await exact.w.exit();
    }
  } catch (e) {
    const err = e as Error;
    throw new Error(
      `failed while ${step}: ${err.name && err.name !== 'Error' ? `${err.name}: ` : ''}${err.message}`,
    );
  }
}

/** Why llama.cpp's WebGPU backend stayed off, as far as the page can tell. */
function webgpuNote(shaderF16: boolean | null): string {
  if (shaderF16 === null) return 'WebGPU did not engage: this page has no WebGPU adapter';
  return shaderF16
    ? 'WebGPU did not engage although the adapter has shader-f16: see the load log'
    : 'WebGPU did not engage: llama.cpp’s WebGPU backend registers a device only on an adapter with shader-f16, which this one lacks';
}
