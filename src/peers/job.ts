import type { LlamaCppInfo } from './llama-cpp.ts';
import type { PeerPlan } from './measure.ts';
import type { LlamaCppBackend, PeerPoint } from './schema.ts';

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

/** What the peer's clock is: the binding gives no llama.cpp counters, so wall time around each call. */
export const LLAMA_CPP_CLOCK =
  'wall clock (performance.now() in the peer process) around each node-llama-cpp call; includes the binding’s batching, no counters of llama.cpp’s own';
