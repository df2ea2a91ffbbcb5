import { Wllama } from '@wllama/wllama';
import wasmUrl from '@wllama/wllama/esm/wasm/wllama.wasm?url';
import type { TopLogprob } from './agreement.ts';
import type { WllamaJob, WllamaJobResult } from './job.ts';
import { measurePeer, type PeerDriver, type PlanPrompt } from './measure.ts';

/**
 * llama.cpp in the page: wllama (llama.cpp and its server loop compiled to WebAssembly, with
 * llama.cpp's WebGPU backend). Browser only. wllama 3.8.1 takes a prompt as text only (its
 * completion's prompt becomes a std::string in llama.cpp's server task: an array of token ids
 * there throws), so each prompt is the text the plan spelled for it with the file's own tokenizer
 * (prompt-text.ts), whose tokens are the ids the native peer and this engine are fed; every
 * reply's own token count is checked against that count. Every figure is llama.cpp's own counter,
 * as its server reports it (`timings`).
 */

/** The version in package.json's pin, for the record. */
const WLLAMA_VERSION = '3.8.1';

/** The completion fields this driver sends and reads (wllama's OAI-style raw completion). */
interface Completion {
  usage: { prompt_tokens: number; completion_tokens: number };
  timings?: { prompt_n: number; prompt_ms: number; predicted_n: number; predicted_ms: number };
  choices: {
    logprobs: {
      content: { top_logprobs?: TopLogprob[]; top_probs?: { id: number; prob: number }[] }[];
    } | null;
  }[];
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

/** One completion on a loaded model, greedy, past end-of-generation tokens. */
type Complete = (options: { prompt: string } & Record<string, unknown>) => Promise<Completion>;

/**
 * Completions that never generate a token of `unsampled` (the file's tokens whose text alone is no
 * whole UTF-8: a byte of a longer character). wllama 3.8.1 serializes each reply with
 * nlohmann::json's strict dump, which throws on invalid UTF-8: a reply whose generated text ends in
 * half a character, or that lists such a token among its log-probabilities, breaks the message
 * framing ("Invalid typed array length: 1163217991", the bytes "GLUE" read as a length). llama.cpp's
 * logit_bias bans them (false is −∞); the timed work is the same either way.
 */
function completer(w: Wllama, unsampled: readonly number[]): Complete {
  const ban = Object.fromEntries(unsampled.map((id) => [String(id), false]));
  return async (options) =>
    (await w.createCompletion({
      temperature: 0,
      ignore_eos: true,
      ...(unsampled.length > 0 ? { logit_bias: ban } : {}),
      ...options,
    } as unknown as Parameters<Wllama['createCompletion']>[0] & { stream?: false })) as unknown as Completion;
}

/** A prompt's text, or why the file's tokenizer gives none (the peer then fails with it). */
function textOf(prompt: PlanPrompt | undefined, what: string): string {
  if (prompt?.text === undefined)
    throw new Error(
      `wllama takes text only, and ${what} has none: ${prompt?.noText ?? 'the plan carries no text'}`,
    );
  return prompt.text;
}

/** Why a reply's own token count differs from the count its text was spelled for. */
function countError(what: string, spelled: number, read: number): Error {
  return new Error(
    `wllama read the text of ${what} (${spelled} tokens with the file’s tokenizer here) as ${read} tokens: its tokenizer and this engine’s disagree on this file`,
  );
}

/** A timing driver over wllama's completions: each prompt as the text of the ids the native peer is fed. */
function driver(complete: Complete): PeerDriver {
  return {
    async prefill(tokens, prompt) {
      const text = textOf(prompt, `the ${tokens.length}-token prefill`);
      const r = await complete({ prompt: text, max_tokens: 1, cache_prompt: false });
      if (!r.timings || r.timings.prompt_n !== tokens.length)
        throw countError('a prefill', tokens.length, r.timings?.prompt_n ?? r.usage.prompt_tokens);
      return r.timings.prompt_ms;
    },
    async decode(context, steps, prompt) {
      // The first token comes from the prompt's prefill; llama.cpp's generation time then covers
      // the `steps` decode calls after it (its predicted_ms over predicted_n − 1).
      const text = textOf(prompt, `the ${context.length}-token decode context`);
      const r = await complete({ prompt: text, max_tokens: steps + 1, cache_prompt: false });
      if (r.usage.prompt_tokens !== context.length)
        throw countError('a decode context', context.length, r.usage.prompt_tokens);
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
 * Next-token top log-probabilities after each compared prefix of the agreement prompt, from its
 * text: one completion per position (the server gives log-probabilities of generated tokens only),
 * each reusing the cached prefix of the one before.
 *
 * They are read after the sampling chain (post_sampling_probs), and the chain is emptied (samplers
 * [], temperature 1) so that it is logit_bias then dist: dist's softmax over every token but the
 * banned ones (which come out at p = 0 and are not listed). Before the chain the server lists the
 * raw softmax, banned tokens included, and one of them breaks the reply (see completer). The
 * probabilities are therefore over the tokens that are whole UTF-8 text, and the record takes this
 * engine's over the same tokens (record.ts wllamaRecord); with none banned (the GGUF writer's
 * vocabulary) both are the whole distribution, as llama.cpp's raw one to within 1e-6. End of
 * generation is allowed (ignore_eos would ban those tokens too): one token is generated either way.
 */
async function topLogprobs(
  complete: Complete,
  agreement: WllamaJob['agreement'],
  topK: number,
): Promise<TopLogprob[][]> {
  const rows: TopLogprob[][] = [];
  for (const [k, text] of agreement.texts.entries()) {
    const r = await complete({
      prompt: text,
      max_tokens: 1,
      logprobs: topK,
      cache_prompt: true,
      post_sampling_probs: true,
      samplers: [],
      temperature: 1,
      ignore_eos: false,
    });
    const n = agreement.from + k + 1;
    if (r.usage.prompt_tokens !== n) throw countError('the agreement prompt', n, r.usage.prompt_tokens);
    const listed = r.choices[0]?.logprobs?.content[0]?.top_probs;
    if (!listed?.length) throw new Error('wllama returned no log-probabilities');
    rows.push(listed.map(({ id, prob }) => ({ id, logprob: Math.log(prob) })));
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
      points = await measurePeer(driver(completer(timing.w, job.unsampled)), job.plan);
    } finally {
      await timing.w.exit();
    }
    step = 'loading the file for the agreement';
    const exact = await load(job, blob, { agreement: true });
    try {
      step = 'taking the next-token log-probabilities';
      const rows = await topLogprobs(completer(exact.w, job.unsampled), job.agreement, job.topK);
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
