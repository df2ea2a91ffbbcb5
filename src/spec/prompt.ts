import { z } from 'zod';
import { ModelSourceSchema } from '../model/source.ts';
import { count, nonNegative } from './fields.ts';
import { decodePrompt, type Unfit } from './workload.ts';
import type { Workload } from './workloads/index.ts';

/**
 * Text in, text out: the data contracts of a prompt written as text. `prompt` (bench `--prompt`,
 * `--prompt-file`) is the text the prefill and decode sweeps cut their prompt tokens from, in place
 * of the deterministic stand-in tokens; `generate` asks the run to generate text greedily from a
 * prompt on its own model once its workloads are done (the page's Prompt box); `Generation` is what
 * a generation gives, in a run's result and from the engine's `generate`. Both need the model's own
 * tokenizer (a GGUF file that carries one): a model without one is refused before anything runs.
 */

/** Longest prompt text taken, in UTF-16 code units (a text of a few hundred thousand tokens at most). */
export const MAX_PROMPT_CHARS = 1 << 20;

/** Most tokens one generation may ask for. */
export const MAX_GENERATE_TOKENS = 4096;

/**
 * How a prompt text becomes token ids: as llama.cpp's generation tools (llama-cli, llama-simple,
 * llama-server) tokenize one, with the special tokens the vocabulary asks for (BOS where the file
 * says so) and special-token texts such as `<|im_start|>` read as those tokens.
 */
export const PROMPT_TOKENIZE = { addSpecial: true, parseSpecial: true } as const;

/** The text the prefill and decode sweeps cut their prompt tokens from. */
export const PromptTextSchema = z
  .object({
    text: z.string().min(1, 'the prompt text is empty').max(MAX_PROMPT_CHARS),
    /** Where it came from, for the report: `--prompt`, `--prompt-file NAME`, or the page. */
    source: z.string().min(1).max(500),
  })
  .strict();
export type PromptText = z.infer<typeof PromptTextSchema>;

/** A greedy generation from a text prompt, on the run's own model, after its workloads. */
/** Temperature, top-k, top-p and the seed of the draws (src/model/sampler.ts). */
export const SamplingSchema = z
  .object({
    temperature: z.number().min(0).max(10),
    /** 0: every token. */
    topK: z.number().int().min(0),
    topP: z.number().gt(0).max(1),
    seed: z.number().int().min(0).max(0xffffffff),
  })
  .strict();

export const GenerateSettingsSchema = z
  .object({
    prompt: z.string().min(1, 'the prompt is empty').max(MAX_PROMPT_CHARS),
    /** Tokens to generate at most (fewer when an end-of-generation token comes first). */
    maxTokens: z.number().int().min(1).max(MAX_GENERATE_TOKENS),
    /** Go on past end-of-generation tokens, to exactly maxTokens (llama.cpp's --ignore-eos). */
    ignoreEos: z.boolean(),
    /** Sample instead of greedy: absent, or temperature 0, is greedy. */
    sampling: SamplingSchema.optional(),
  })
  .strict();
export type GenerateSettings = z.infer<typeof GenerateSettingsSchema>;

/** The engine's `generate` (the generate CLI, the page's Generate button): a model and what to generate. */
export const GenerateRequestSchema = GenerateSettingsSchema.extend({ model: ModelSourceSchema }).strict();
export type GenerateRequest = z.infer<typeof GenerateRequestSchema>;

/** Why a generation stopped: an end-of-generation token (it is the last of `tokens`), or maxTokens. */
export const StopReasonSchema = z.enum(['eog', 'length']);

/**
 * One greedy generation as it ran: the prompt's ids, every generated id and the text they spell
 * (untrusted when read from a file: shown as text only), and its latency on the wall clock of the
 * engine: `performance.now()` where the engine runs, from the submit of the prompt's prefill to
 * the readback of each token (what a user of the engine waits for; detokenizing and streaming to
 * the caller happen between steps, after each readback).
 */
export const GenerationSchema = z
  .object({
    prompt: z.string().max(MAX_PROMPT_CHARS),
    promptTokens: z.array(count).min(1),
    tokens: z.array(count).min(1),
    text: z.string().max(1 << 22),
    stop: StopReasonSchema,
    /** Prefill submit → first token read back (the prefill plan built beforehand, by a warm-up). */
    ttftMs: nonNegative,
    /** (last token − first token) ÷ (tokens − 1); null with a single token. */
    tpotMs: nonNegative.nullable(),
    /** Each token's readback, ms after the prefill's submit. */
    tokenTimesMs: z.array(nonNegative).min(1),
    /** The clock every figure above is on, in words. */
    clock: z.string().max(300),
    /** How each token was chosen when sampled (absent: greedy). */
    sampling: SamplingSchema.optional(),
  })
  .strict();
export type Generation = z.infer<typeof GenerationSchema>;

/** The clock of a generation's figures, as GenerationSchema records it. */
export const GENERATION_CLOCK =
  'wall clock: performance.now() where the engine runs, from the prefill submit to each token read back';

/** Decode tokens per second, 1000 ÷ TPOT; null with a single token. */
export function decodeTokensPerS(g: Pick<Generation, 'tpotMs'>): number | null {
  return g.tpotMs !== null && g.tpotMs > 0 ? 1000 / g.tpotMs : null;
}

/**
 * Sweep values whose prompt is longer than the text's `tokens` tokens: a prefill of L takes the
 * text's first L tokens, a decode at depth d its first max(d, 1). The prefill and decode sweeps and
 * the fusion workload (which times one of each) take their prompts from the text; the other
 * workloads make their own.
 */
export function promptUnfit(workloads: readonly Workload[], tokens: number): Unfit[] {
  const unfit = (kind: string, option: 'prefill' | 'depths', value: number, need: number): Unfit[] =>
    need > tokens
      ? [
          {
            kind,
            option,
            value,
            message: `${kind === 'fusion' ? 'the fused-against-unfused ' : ''}${option === 'prefill' ? `prompt length ${value}` : `decode depth ${value}`}: it takes the prompt text's first ${need} tokens, and the text has ${tokens}`,
          },
        ]
      : [];
  return workloads.flatMap((w) => {
    if (w.kind === 'prefill') return w.lengths.flatMap((L) => unfit(w.kind, 'prefill', L, L));
    if (w.kind === 'decode') return w.depths.flatMap((d) => unfit(w.kind, 'depths', d, decodePrompt(d)));
    if (w.kind === 'fusion')
      return [
        ...unfit(w.kind, 'prefill', w.length, w.length),
        ...unfit(w.kind, 'depths', w.depth, decodePrompt(w.depth)),
      ];
    return [];
  });
}

/**
 * The workloads without the values the text cannot hold (a named suite drops them, as it drops what
 * the model cannot hold); a workload left with none is dropped.
 */
export function fitToPrompt(workloads: readonly Workload[], tokens: number): Workload[] {
  return workloads.flatMap((w): Workload[] => {
    if (w.kind === 'prefill') {
      const lengths = w.lengths.filter((L) => L <= tokens);
      return lengths.length > 0 ? [{ ...w, lengths }] : [];
    }
    if (w.kind === 'decode') {
      const depths = w.depths.filter((d) => decodePrompt(d) <= tokens);
      return depths.length > 0 ? [{ ...w, depths }] : [];
    }
    if (w.kind === 'fusion') return promptUnfit([w], tokens).length === 0 ? [w] : [];
    return [w];
  });
}
