import { parseGgufHeader } from '../model/gguf.ts';
import { TOKENIZER_GGUF_OPTIONS, type Tokenizer, tokenizerFromGguf } from '../model/tokenizer/index.ts';
import type { BenchSpec } from '../spec/schema.ts';
import {
  AGREEMENT_TOLERANCES,
  type AgreementFormat,
  agreement,
  agreementTopK,
  logSoftmax,
  logSoftmaxWithout,
} from './agreement.ts';
import {
  LLAMA_CPP_CLOCK,
  LLAMA_CPP_WALL_CLOCK,
  type PeerJobResult,
  WLLAMA_CLOCK,
  type WllamaJob,
  type WllamaJobResult,
} from './job.ts';
import { type PeerPlan, type PlanPrompt, promptTokens } from './measure.ts';
import { PromptSpeller, PromptSpellingError } from './prompt-text.ts';
import type { Agreement, PeerRecord, PeerRequest } from './schema.ts';

/**
 * What a run asks of its peers and what it records of them, for the CLI and the page alike: the
 * plan (the run's own lengths, depths, gen and reps), the agreement prompt, and the records.
 */

/** Prompt positions whose next-token distributions are compared: 32, so one flipped top-1 is 3%, inside the 95% bound of the 8-bit formats. */
export const AGREEMENT_PROMPT_TOKENS = 32;

/** Salts of the spelled prompts (and offsets in measure.ts's stride), so no two share a start: prefill, decode, agreement. */
const SALT = { prefill: 0, decode: 1, agreement: 2 } as const;

/**
 * Where the peers' prompts come from: the file's tokenizer, which spells each as text of known ids
 * (prompt-text.ts), or why there is no text (a file without a tokenizer; a vocabulary with no
 * words that read back as themselves), for a peer that takes text only.
 */
export type PromptSource = { speller: PromptSpeller } | { noText: string };

/** The speller of a file's tokenizer, or why there is none. */
export function promptSource(tokenizer: Tokenizer | undefined): PromptSource {
  if (!tokenizer) return { noText: 'the file carries no tokenizer' };
  try {
    return { speller: new PromptSpeller(tokenizer) };
  } catch (e) {
    if (e instanceof PromptSpellingError) return { noText: e.message };
    throw e;
  }
}

/** The peers' prompts from a GGUF file's own tokenizer (the file's bytes, its header at least), or why it spells none. */
export function promptsOf(bytes: Uint8Array, source: string): PromptSource {
  try {
    return promptSource(tokenizerFromGguf(parseGgufHeader(bytes, source, TOKENIZER_GGUF_OPTIONS), source));
  } catch (e) {
    // A tokenizer this project does not read (docs/tokenizer.md): the native peer still runs on ids.
    return { noText: `its tokenizer cannot be read here (${(e as Error).message})` };
  }
}

/** A prompt of n tokens (or more: the shortest a text gives, where `atLeast` allows it) and its text. */
function planPrompt(
  source: PromptSource,
  n: number,
  vocabSize: number,
  salt: number,
  atLeast: boolean,
): PlanPrompt {
  const ids = () => promptTokens(n, vocabSize, salt);
  if ('noText' in source) return { ids: ids(), noText: source.noText };
  const { speller } = source;
  try {
    return speller.spell(atLeast ? Math.max(n, speller.shortest) : n, salt);
  } catch (e) {
    if (e instanceof PromptSpellingError) return { ids: ids(), noText: e.message };
    throw e;
  }
}

/**
 * The run's prompt lengths, depths, generation length and repetitions, as the peer runs them, and
 * their prompts from `source`: a prefill of L is L tokens; a decode context is max(1, depth)
 * tokens, or the shortest a text gives where that is longer (both peers then run that context).
 */
export function peerPlan(spec: BenchSpec, vocabSize: number, source?: PromptSource): PeerPlan {
  const prefill = [...new Set(spec.workloads.flatMap((w) => (w.kind === 'prefill' ? w.lengths : [])))];
  const decode = spec.workloads.find((w) => w.kind === 'decode');
  const timing = decode ?? spec.workloads.find((w) => w.kind === 'prefill');
  const depths = decode?.kind === 'decode' ? decode.depths : [];
  return {
    prefill,
    depths,
    gen: decode?.kind === 'decode' ? decode.gen : 2,
    reps: timing && 'reps' in timing ? timing.reps : 3,
    warmup: timing && 'warmup' in timing ? timing.warmup : 1,
    vocabSize,
    ...(source
      ? {
          prompts: {
            prefill: prefill.map((L) => planPrompt(source, L, vocabSize, SALT.prefill, false)),
            decode: depths.map((d) => planPrompt(source, Math.max(1, d), vocabSize, SALT.decode, true)),
          },
        }
      : {}),
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
  promptInput: NonNullable<PeerRecord['promptInput']>,
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
    promptInput,
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
  format: AgreementFormat,
  input: Pick<WllamaJob, 'agreement' | 'unsampled'>,
): PeerRecord {
  // wllama's probabilities are over the tokens it may generate (wllama.ts completer): this
  // engine's are taken over the same ones.
  const ours = engineLogits
    ?.slice(input.agreement.from)
    .map((row) => logSoftmaxWithout(row, input.unsampled));
  const judged = ours ? agreementTopK(ours, result.topLogprobs, AGREEMENT_TOLERANCES[format]) : null;
  return record(
    request,
    model,
    result,
    WLLAMA_CLOCK,
    'text',
    judged && input.unsampled.length > 0 ? { ...judged, tokensLeftOut: input.unsampled.length } : judged,
  );
}

/** llama.cpp's record from its process's result and this engine's logits on the agreement prompt. */
export function peerRecord(
  request: PeerRequest,
  model: { file: string; fileType: string },
  result: PeerJobResult,
  engineLogits: number[][] | undefined,
  format: AgreementFormat,
  from: number,
): PeerRecord {
  const ours = engineLogits?.slice(from).map(logSoftmax);
  return record(
    request,
    model,
    result,
    // 'wall' where llama.cpp's counters could not be read (the info's note says why).
    result.info.clock === 'llama.cpp-perf' ? LLAMA_CPP_CLOCK : LLAMA_CPP_WALL_CLOCK,
    'token-ids',
    ours ? agreement(ours, result.logprobs.slice(from), AGREEMENT_TOLERANCES[format]) : null,
  );
}

/**
 * The agreement prompt: its token ids, fed to this engine and the native peer, and the text of each
 * compared prefix, for wllama. Positions are compared from `from` on: the distribution after the
 * first from + 1 tokens, the shortest prompt a text gives (after "▁" and a letter, for the GGUF
 * writer's vocabulary), then after each token to the end.
 */
export interface AgreementPrompt {
  ids: number[];
  from: number;
  /** texts[k] is read by the file's tokenizer as ids.slice(0, from + k + 1). */
  texts?: string[];
  /** Why no text spells it, where none does. */
  noText?: string;
}

/** What the agreement compares: how many positions, and the user's text to cut them from (else words of the vocabulary). */
export interface AgreementOptions {
  positions?: number;
  text?: string;
}

/**
 * The agreement prompt: `positions` (default AGREEMENT_PROMPT_TOKENS) compared positions, at most the
 * model's length, spelled by the file's tokenizer (prompt-text.ts) from words of its vocabulary, or
 * cut from the user's text (--prompt, --prompt-file): a model that was trained on text is compared
 * where it is sure of itself, not on word salad, where its distributions are flat. Without text,
 * promptTokens' ids, every position compared.
 */
export function agreementPrompt(
  maxSeqLen: number,
  vocabSize: number,
  source: PromptSource,
  opts: AgreementOptions = {},
): AgreementPrompt {
  const positions = opts.positions ?? AGREEMENT_PROMPT_TOKENS;
  const plain = (noText: string): AgreementPrompt => ({
    ids: promptTokens(Math.min(positions, maxSeqLen), vocabSize, SALT.agreement),
    from: 0,
    noText,
  });
  if ('noText' in source) return plain(source.noText);
  const { speller } = source;
  if (opts.text !== undefined) {
    const cut = speller.cut(opts.text, maxSeqLen);
    const ids = cut.ids.slice(0, cut.from + positions);
    if (ids.length < cut.from + positions)
      throw new PromptSpellingError(
        `the text gives ${ids.length - cut.from} positions to compare, fewer than the ${positions} asked for`,
      );
    return cut.texts
      ? { ids, from: cut.from, texts: cut.texts.slice(0, positions) }
      : { ids, from: cut.from, noText: cut.noText };
  }
  const from = speller.shortest - 1;
  try {
    const prompt = speller.spell(Math.min(from + positions, maxSeqLen), SALT.agreement);
    return { ids: prompt.ids, from, texts: speller.prefixes(prompt) };
  } catch (e) {
    if (e instanceof PromptSpellingError) return plain(e.message);
    throw e;
  }
}

/**
 * What wllama needs beside the plan: the agreement prompt's texts (it takes text only) and the
 * tokens it must not generate (wllama.ts completer); throws why there are no texts.
 */
export function wllamaInput(
  prompt: AgreementPrompt,
  source: PromptSource,
): Pick<WllamaJob, 'agreement' | 'unsampled'> {
  if (!prompt.texts || 'noText' in source)
    throw new Error(
      `wllama takes text only, and no text spells the prompts: ${prompt.noText ?? ('noText' in source ? source.noText : '')}`,
    );
  return { agreement: { from: prompt.from, texts: prompt.texts }, unsampled: source.speller.unsampledIds() };
}

/**
 * The context a peer is loaded with: room for the longest prefill, the deepest decode (at least a
 * one-token context) with its generated tokens, and the agreement prompt, plus a margin; at least
 * 64, at most the model's length.
 */
export function peerContextSize(plan: PeerPlan, maxSeqLen: number, promptLength: number): number {
  const needed = Math.max(
    ...plan.prefill,
    ...plan.depths.map((d, i) => (plan.prompts?.decode[i]?.ids.length ?? Math.max(1, d)) + plan.gen),
    promptLength,
  );
  return Math.min(maxSeqLen, Math.max(64, needed + 16));
}
