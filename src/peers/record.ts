import type { BenchSpec } from '../spec/schema.ts';
import type { WeightFormat } from '../weight-format.ts';
import { AGREEMENT_TOLERANCES, agreement, agreementTopK, logSoftmax } from './agreement.ts';
import {
  LLAMA_CPP_CLOCK,
  LLAMA_CPP_WALL_CLOCK,
  type PeerJobResult,
  WLLAMA_CLOCK,
  type WllamaJobResult,
} from './job.ts';
import type { PeerPlan } from './measure.ts';
import { promptText, writerTokenIds } from './prompt-text.ts';
import type { Agreement, PeerRecord, PeerRequest } from './schema.ts';

/**
 * What a run asks of its peers and what it records of them, for the CLI and the page alike: the
 * plan (the run's own lengths, depths, gen and reps), the agreement prompt, and the records.
 */

/** Prompt positions whose next-token distributions are compared: 32, so one flipped top-1 is 3%, inside the 95% bound of the 8-bit formats. */
export const AGREEMENT_PROMPT_TOKENS = 32;

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

/** How many of its likeliest tokens wllama lists per agreement position: the whole of a small vocabulary. */
export const WLLAMA_TOP_K = 1024;

/** What every peer's record holds, from the peer's info and points and the agreement taken. */
function record(
  request: PeerRequest,
  model: { file: string; fileType: string },
  result: { info: PeerJobResult['info'] & { note?: string }; points: PeerJobResult['points'] },
  clock: string,
  agreement: Agreement | null,
): PeerRecord {
  const { info } = result;
  return {
    engine: request.engine,
    version: info.version,
    backend: info.backend,
    requestedBackend: request.backend,
    device: info.device,
    threads: info.threads,
    threadTrials: info.threadTrials,
    clock,
    file: model.file,
    fileType: model.fileType,
    points: result.points,
    agreement,
    ...(info.note ? { note: info.note } : {}),
  };
}

/** wllama's record from its page's result and this engine's logits on the agreement prompt. */
export function wllamaRecord(
  request: PeerRequest,
  model: { file: string; fileType: string },
  result: WllamaJobResult,
  engineLogits: number[][] | undefined,
  format: WeightFormat,
): PeerRecord {
  const ours = engineLogits && comparedRows(engineLogits).map(logSoftmax);
  return record(
    request,
    model,
    result,
    WLLAMA_CLOCK,
    ours ? agreementTopK(ours, result.topLogprobs, AGREEMENT_TOLERANCES[format]) : null,
  );
}

/** llama.cpp's record from its process's result and this engine's logits on the agreement prompt. */
export function peerRecord(
  request: PeerRequest,
  model: { file: string; fileType: string },
  result: PeerJobResult,
  engineLogits: number[][] | undefined,
  format: WeightFormat,
): PeerRecord {
  const ours = engineLogits && comparedRows(engineLogits).map(logSoftmax);
  return record(
    request,
    model,
    result,
    // 'wall' where llama.cpp's counters could not be read (the info's note says why).
    result.info.clock === 'llama.cpp-perf' ? LLAMA_CPP_CLOCK : LLAMA_CPP_WALL_CLOCK,
    ours ? agreement(ours, comparedRows(result.logprobs), AGREEMENT_TOLERANCES[format]) : null,
  );
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

/**
 * The context a peer is loaded with: room for the longest prefill, the deepest decode (at least a
 * 2-token context, as a text prompt needs) with its generated tokens, and the agreement prompt,
 * plus a margin; at least 64, at most the model's length.
 */
export function peerContextSize(plan: PeerPlan, maxSeqLen: number, promptLength: number): number {
  const needed = Math.max(
    ...plan.prefill,
    ...plan.depths.map((d) => Math.max(2, d) + plan.gen),
    promptLength,
  );
  return Math.min(maxSeqLen, Math.max(64, needed + 16));
}
