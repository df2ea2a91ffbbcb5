import { formatError } from '../error-figure.ts';
import { InputError, InternalError, ReferenceMismatchError } from '../errors.ts';
import { type Gpu, isSoftwareAdapter } from '../gpu/device.ts';
import { defaultVariants } from '../kernels/variants.ts';
import { Model } from '../model/forward.ts';
import { sampleToken } from '../model/sampler.ts';
import { loadModel } from '../model/source.ts';
import type { Tokenizer } from '../model/tokenizer/index.ts';
import { LOGITS_MAX_REL_ERR, validateModel } from '../model/verify.ts';
import { mulberry32 } from '../random.ts';
import {
  GENERATION_CLOCK,
  type GenerateRequest,
  type GenerateSettings,
  type Generation,
  PROMPT_TOKENIZE,
} from '../spec/prompt.ts';
import { VALIDATION_TOKENS } from '../spec/workload.ts';
import { promptTokens } from '../workloads/prompts.ts';

/**
 * Text in, text out: greedy generation from a text prompt with the model's own tokenizer, the
 * tokens streamed as they are read back and detokenized incrementally (never half a character).
 * `generateGreedy` is the loop, on a model already built and checked (a run's, after its
 * workloads); `runGeneration` is the engine's `generate`: load, tokenize, build, check against the
 * CPU reference, then the loop.
 */

/** What a generation streams to its caller, in order. */
export type GenerateEvent =
  /** A step before the first token (loading, building, checking), in words. */
  | { type: 'status'; message: string }
  /**
   * Token `index` (0 is the prompt's prefill's), and the text it completes: '' for a control
   * token or for the first bytes of a character that later tokens finish.
   */
  | { type: 'token'; index: number; id: number; text: string }
  /** After the last token: bytes still held that never made a whole character (U+FFFD each). */
  | { type: 'flush'; text: string };

/** The model calls the loop makes (a `Model`, or a stand-in in the unit tests). */
export type GreedyModel = Pick<Model, 'createSequence' | 'freeSequence' | 'prefill' | 'decode'>;

/** The prompt's ids as llama.cpp's generation tools make them; refuses a model without a tokenizer. */
export function promptIds(tokenizer: Tokenizer | undefined, text: string, modelName: string): number[] {
  if (!tokenizer) {
    throw new InputError(
      `${modelName} has no tokenizer: a text prompt needs one (a GGUF file that carries tokenizer.ggml.*, or a laptop preset with its family's vocabulary from the built app's vocab/; ci-tiny and a safetensors folder have none).`,
    );
  }
  const ids = tokenizer.encode(text, PROMPT_TOKENIZE);
  if (ids.length === 0) throw new InputError('The prompt makes no tokens.');
  return ids;
}

/** Refuses a prompt and generation that would not fit the model's context. */
export function checkGenerationFits(promptLength: number, maxTokens: number, maxSeqLen: number): void {
  if (promptLength + maxTokens > maxSeqLen) {
    throw new InputError(
      `The prompt is ${promptLength} tokens and ${maxTokens} more are asked for: ${promptLength + maxTokens} tokens, past the model's context of ${maxSeqLen}. Shorten the prompt or ask for fewer tokens.`,
    );
  }
}

/**
 * Greedy generation of up to `maxTokens` tokens after `ids` in a fresh sequence of `model`:
 * one prefill (its token is the first), then one decode step per token, each fed the last. Stops
 * after an end-of-generation token (kept as the last token) unless `ignoreEos`. A warm-up prefill
 * of the same prompt first builds its plan, so the measured TTFT holds no plan building (decode
 * plans are built by the model's check). Each token is read back, stamped, then detokenized and
 * streamed: `onEvent` runs between steps, never inside one.
 */
export async function generateGreedy(
  model: GreedyModel,
  tokenizer: Tokenizer,
  ids: readonly number[],
  settings: Pick<GenerateSettings, 'maxTokens' | 'ignoreEos' | 'sampling'>,
  onEvent: (e: GenerateEvent) => void,
  signal?: AbortSignal,
): Promise<Omit<Generation, 'prompt'>> {
  const warm = model.createSequence();
  try {
    await model.prefill([{ seq: warm, tokens: ids }], 'none');
  } finally {
    model.freeSequence(warm);
  }
  const decoder = tokenizer.decoder();
  const tokens: number[] = [];
  const times: number[] = [];
  const pieces: string[] = [];
  const take = (id: number, at: number) => {
    tokens.push(id);
    times.push(at);
    const text = decoder.push(id);
    pieces.push(text);
    onEvent({ type: 'token', index: tokens.length - 1, id, text });
  };
  const done = () =>
    tokens.length >= settings.maxTokens ||
    (!settings.ignoreEos && tokenizer.isEog(tokens[tokens.length - 1]));
  // Sampled: each step reads its logits back and draws from them on the CPU (seeded); greedy
  // reads only the GPU's argmax.
  const sampling = settings.sampling && settings.sampling.temperature > 0 ? settings.sampling : undefined;
  const random = sampling ? mulberry32(sampling.seed) : undefined;
  const pick = (greedy: number, logits: Float32Array | undefined) => {
    if (!sampling || !random) return greedy;
    if (!logits) throw new InternalError('a sampled step read back no logits');
    return sampleToken(logits, sampling, random());
  };
  const seq = model.createSequence();
  try {
    const start = performance.now();
    const [first] = await model.prefill([{ seq, tokens: ids }], sampling ? 'last' : 'none');
    take(pick(first.nextToken, first.logits), performance.now() - start);
    while (!done()) {
      signal?.throwIfAborted();
      const step = await model.decode([{ seq, token: tokens[tokens.length - 1] }], { logits: !!sampling });
      take(pick(step.nextTokens[0], step.logits), performance.now() - start);
    }
  } finally {
    model.freeSequence(seq);
  }
  const rest = decoder.flush();
  if (rest) {
    pieces.push(rest);
    onEvent({ type: 'flush', text: rest });
  }
  const n = tokens.length;
  return {
    promptTokens: [...ids],
    tokens,
    text: pieces.join(''),
    stop: !settings.ignoreEos && tokenizer.isEog(tokens[n - 1]) ? 'eog' : 'length',
    ttftMs: times[0],
    tpotMs: n > 1 ? (times[n - 1] - times[0]) / (n - 1) : null,
    tokenTimesMs: times,
    clock: GENERATION_CLOCK,
    ...(sampling ? { sampling } : {}),
  };
}

/** What the engine's `generate` gives besides the generation: the model and its check. */
export interface GenerateOutcome {
  generation: Generation;
  modelName: string;
  warnings: string[];
  /** The check against the float64 CPU reference that came before (a prefill and a decode step). */
  validation: { maxRelErr: number | null; passed: boolean };
  /**
   * Wall-clock ms of the steps before the first token: loading the file, building the model
   * (uploading the weights), checking it (its first passes compile the kernels they use); and the
   * time spent compiling pipelines, over all of them and the generation.
   */
  timings: { loadMs: number; buildMs: number; checkMs: number; compileMs: number };
}

/**
 * The engine's `generate`: loads the model with its tokenizer, tokenizes the prompt (refusing a
 * model without a tokenizer, or a prompt and generation past the context, as InputError before
 * anything is built), builds the model once on this adapter's default kernel families (no
 * autotuning), checks it against the CPU reference (nothing runs if it fails), then generates.
 */
export async function runGeneration(
  gpu: Gpu,
  request: GenerateRequest,
  onEvent: (e: GenerateEvent) => void,
  signal?: AbortSignal,
): Promise<GenerateOutcome> {
  const t0 = performance.now();
  onEvent({ type: 'status', message: 'Loading the model' });
  const loaded = await loadModel(request.model);
  const config = loaded.weights.config;
  const ids = promptIds(loaded.tokenizer, request.prompt, loaded.name);
  checkGenerationFits(ids.length, request.maxTokens, config.maxSeqLen);
  const tokenizer = loaded.tokenizer as Tokenizer;
  const t1 = performance.now();
  onEvent({ type: 'status', message: 'Building the model (uploading the weights, compiling the kernels)' });
  const model = await Model.create(
    gpu,
    loaded.weights,
    {
      kv: {
        mode: 'paged',
        pageSize: 16,
        // The warm-up's sequence is freed before the generation's takes its pages.
        capacityTokens: Math.max(ids.length + request.maxTokens, VALIDATION_TOKENS),
      },
      maxBatch: 1,
      variants: defaultVariants(isSoftwareAdapter(gpu.adapter)),
    },
    loaded.name,
  );
  try {
    signal?.throwIfAborted();
    const t2 = performance.now();
    onEvent({ type: 'status', message: 'Checking prefill and decode logits against the CPU reference' });
    const check = await validateModel(
      model,
      loaded.weights,
      promptTokens(VALIDATION_TOKENS, config.vocabSize, 99),
    );
    if (!check.passed) {
      throw new ReferenceMismatchError(
        `GPU logits differ from the CPU reference (max rel err ${formatError(check.maxRelErr)}, bound ${LOGITS_MAX_REL_ERR}); nothing was generated.`,
      );
    }
    const t3 = performance.now();
    onEvent({ type: 'status', message: 'Generating' });
    const generation = await generateGreedy(model, tokenizer, ids, request, onEvent, signal);
    return {
      generation: { prompt: request.prompt, ...generation },
      modelName: loaded.name,
      warnings: loaded.warnings,
      validation: { maxRelErr: check.maxRelErr, passed: check.passed },
      timings: { loadMs: t1 - t0, buildMs: t2 - t1, checkMs: t3 - t2, compileMs: model.pipelines.compileMs },
    };
  } finally {
    model.destroy();
  }
}
