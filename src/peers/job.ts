import type { TopLogprob } from './agreement.ts';
import type { LlamaCppInfo } from './llama-cpp.ts';
import type { PeerPlan } from './measure.ts';
import type { LlamaCppBackend, PeerPoint, WllamaBackend } from './schema.ts';

/** What the CLI asks of a peer process: one file, one backend, the run's plan and prompt. */
export interface PeerJob {
  file: string;
  backend: LlamaCppBackend;
  contextSize: number;
  plan: PeerPlan;
  /** The prompt whose next-token distributions are compared with this engine's. */
  prompt: number[];
}

/** What a peer process returns: who ran, its timed points, and a log-probability row per prompt position. */
export interface PeerJobResult {
  info: LlamaCppInfo;
  points: PeerPoint[];
  logprobs: Float64Array[];
}

/**
 * What the native peer's figures are timed with: llama.cpp's own counters, read through
 * node-llama-cpp's printTimings (see PerfCounters in llama-cpp.ts), with the wall clock around each
 * call kept beside them in each point.
 */
export const LLAMA_CPP_CLOCK =
  'llama.cpp’s own counters (llama_perf_context via node-llama-cpp’s printTimings): a prefill’s prompt eval time; a decode sample is the eval time of the gen − 1 decodes of one generation, per token. Wall ms: performance.now() around the same call';

/** The native peer's clock where llama.cpp's counters could not be read (its record's note says why). */
export const LLAMA_CPP_WALL_CLOCK =
  'wall clock (performance.now() in the peer process) around each node-llama-cpp call (a decode sample: one generation of gen tokens, per step after the first); includes the binding’s scheduling and sampling';

/** What wllama in a page is asked: the backend, the plan and the agreement prompt (the file comes beside it). */
export interface WllamaJob {
  backend: WllamaBackend;
  contextSize: number;
  plan: PeerPlan;
  /**
   * The agreement prompt as text (record.ts agreementPrompt): texts[k] spells the prompt's first
   * from + k + 1 tokens, after which the next-token distribution is compared.
   */
  agreement: { from: number; texts: string[] };
  /**
   * Tokens wllama must never generate: those whose text alone is no whole UTF-8 (prompt-text.ts
   * unsampledIds; see wllama.ts completer for why). Empty for the GGUF writer's vocabulary.
   */
  unsampled: number[];
  /** How many of its most likely tokens wllama lists per position (all of them when ≥ the vocabulary). */
  topK: number;
}

/** What the page returns: who ran, its timed points, and the top log-probabilities per position. */
export interface WllamaJobResult {
  info: LlamaCppInfo & { note?: string };
  points: PeerPoint[];
  topLogprobs: TopLogprob[][];
}

/** What wllama's figures are timed with: llama.cpp's own counters, as its server loop reports them. */
export const WLLAMA_CLOCK =
  'llama.cpp’s own timings in wllama (its server loop’s prompt_ms, and predicted_ms over the decode calls after the first token)';
