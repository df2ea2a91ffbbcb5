import { z } from 'zod';
import type { Tokenizer } from '../model/tokenizer/index.ts';

/**
 * The protocol of the engine's OpenAI-compatible `POST /v1/completions` endpoint (OpenAI's legacy
 * completions API): parsing a request body, the response and error bodies, and the text of the
 * server-sent events of a streamed answer. No HTTP here: the server wires these to its routes, and
 * the benchmark's client reads the same shapes back (parseSseEvents).
 *
 * Token ids are the exact interface (a prompt of ids, `token_ids` in every answer). A model with
 * its own tokenizer (a GGUF file that carries one) takes text prompts through it and answers text
 * detokenized incrementally (CompletionText); a model without one (a preset's seeded weights) has a
 * deterministic stand-in in both directions (textTokens, tokenText), so that ordinary OpenAI clients
 * work unchanged.
 *
 * The engine decodes greedily. It stops at the model's end-of-generation tokens (unless
 * `ignore_eos`; a model without a tokenizer has none) or at `max_tokens`, never at a stop
 * sequence, so the sampling fields are accepted only at the values that mean exactly that, and
 * anything else is refused rather than silently ignored: a benchmark that asked for sampling must
 * not measure greedy decoding without knowing.
 */

// ---------------------------------------------------------------------------------------------
// Errors

/** An error answer: the HTTP status and OpenAI's error body. */
export interface ApiError {
  status: number;
  body: { error: { message: string; type: string; param: string | null; code: string | null } };
}

export function apiError(
  status: number,
  message: string,
  type: string,
  param: string | null = null,
  code: string | null = null,
): ApiError {
  return { status, body: { error: { message, type, param, code } } };
}

/** A body that is not JSON at all; `detail` is the parser's message. */
export function invalidJson(detail: string): ApiError {
  return apiError(
    400,
    `We could not parse the JSON body of your request: ${detail}`,
    'invalid_request_error',
    null,
    'invalid_json',
  );
}

export function tooManyRequests(message: string): ApiError {
  return apiError(429, message, 'rate_limit_error', null, 'rate_limit_exceeded');
}

export function serverError(message: string): ApiError {
  return apiError(500, message, 'server_error');
}

/** An unknown route; OpenAI answers `Invalid URL (POST /v1/foo)`. */
export function notFound(path: string, method?: string): ApiError {
  return apiError(404, `Invalid URL (${method ? `${method} ` : ''}${path})`, 'invalid_request_error');
}

/** A known route asked with another method; the server also sends an `Allow` header (RFC 9110). */
export function methodNotAllowed(method: string, path: string, allowed: readonly string[] = []): ApiError {
  const hint = allowed.length > 0 ? ` (allowed: ${allowed.join(', ')})` : '';
  return apiError(405, `Method ${method} is not allowed on ${path}${hint}.`, 'invalid_request_error');
}

function invalidRequest(message: string, param: string | null, code: string | null = null): ApiError {
  return apiError(400, message, 'invalid_request_error', param, code);
}

function unsupported(param: string, message: string): ApiError {
  return invalidRequest(message, param, 'unsupported_value');
}

/**
 * The context check, OpenAI's message and code. Exported because a text prompt's token count is
 * known only once the server has tokenized it; parseCompletionRequest applies it to id prompts.
 */
export function checkContext(promptTokens: number, maxTokens: number, maxSeqLen: number): ApiError | null {
  const total = promptTokens + maxTokens;
  if (total <= maxSeqLen) return null;
  return invalidRequest(
    `This model's maximum context length is ${maxSeqLen} tokens. However, you requested ${total} tokens ` +
      `(${promptTokens} in the prompt, ${maxTokens} for the completion). ` +
      'Please reduce the length of the prompt or the completion.',
    null,
    'context_length_exceeded',
  );
}

// ---------------------------------------------------------------------------------------------
// Requests

export interface CompletionRequest {
  model: string;
  /** Token ids (each in [0, vocabSize)) or a non-empty text; a one-element batch is unwrapped. */
  prompt: number[] | string;
  maxTokens: number;
  stream: boolean;
  /** stream_options.include_usage: a last chunk with usage before [DONE]; false when not streaming. */
  includeUsage: boolean;
  ignoreEos: boolean;
  /** How each token is chosen: temperature 0 is greedy; seed undefined: the server picks one. */
  sampling: { temperature: number; topK: number; topP: number; seed?: number };
}

export interface CompletionContext {
  /** The one model served; a request must name it. */
  modelName: string;
  vocabSize: number;
  maxSeqLen: number;
}

export type ParseResult = { ok: true; request: CompletionRequest } | { ok: false; error: ApiError };

/** OpenAI's default for the legacy completions API. */
export const DEFAULT_MAX_TOKENS = 16;

/** The JSON kind of a value, to tell a wrong type (`invalid_type`) from a wrong value of the right type. */
type Kind = 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object' | 'null';

function kindOf(v: unknown): Kind {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'boolean';
  return 'object';
}

const ARTICLE: Record<Kind, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a decimal number',
  boolean: 'a boolean',
  array: 'an array',
  object: 'an object',
  null: 'null',
};

interface FieldSpec {
  schema: z.ZodType;
  /** Kinds of the right type: a value of another kind is `invalid_type`, of these `invalid_value`. */
  kinds: readonly Kind[];
  expected: string;
}

const tokenIds = z.array(z.number().int()).min(1);
const text = z.string().min(1);

/**
 * Every field accepted, in the order they are checked. null is taken as absent (clients send
 * `"stop": null` and the like), so the schemas need not allow it.
 */
const FIELDS = {
  model: { schema: z.string(), kinds: ['string'], expected: 'a string' },
  prompt: {
    schema: z.union([text, tokenIds, z.tuple([text]), z.tuple([tokenIds])]),
    kinds: ['string', 'array'],
    expected: 'a non-empty string, a non-empty array of integer token ids, or an array holding one of those',
  },
  max_tokens: { schema: z.number().int().min(1), kinds: ['integer'], expected: 'an integer ≥ 1' },
  stream: { schema: z.boolean(), kinds: ['boolean'], expected: 'a boolean' },
  stream_options: {
    schema: z.object({ include_usage: z.boolean().nullish() }).strict(),
    kinds: ['object'],
    expected: "an object with an optional boolean 'include_usage'",
  },
  temperature: { schema: z.number(), kinds: ['integer', 'number'], expected: 'a number' },
  top_p: { schema: z.number(), kinds: ['integer', 'number'], expected: 'a number' },
  // vLLM's extension.
  top_k: { schema: z.number().int(), kinds: ['integer'], expected: 'an integer' },
  n: { schema: z.number().int(), kinds: ['integer'], expected: 'an integer' },
  echo: { schema: z.boolean(), kinds: ['boolean'], expected: 'a boolean' },
  logprobs: { schema: z.number().int(), kinds: ['integer'], expected: 'an integer or null' },
  stop: {
    schema: z.union([z.string(), z.array(z.string())]),
    kinds: ['string', 'array'],
    expected: 'a string, an array of strings, or null',
  },
  seed: { schema: z.number().int(), kinds: ['integer'], expected: 'an integer' },
  user: { schema: z.string(), kinds: ['string'], expected: 'a string' },
  // vLLM's and llama-server's extension; benchmark clients (vLLM's benchmark_serving) send it.
  ignore_eos: { schema: z.boolean(), kinds: ['boolean'], expected: 'a boolean' },
  // vLLM's extension.
  min_tokens: { schema: z.number().int().min(0), kinds: ['integer'], expected: 'an integer ≥ 0' },
} satisfies Record<string, FieldSpec>;

type Field = keyof typeof FIELDS;

function preview(v: unknown): string {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
}

/** A present field against its schema: null when it passes, else the 400 naming it. */
function checkField(field: Field, value: unknown): ApiError | null {
  const spec: FieldSpec = FIELDS[field];
  if (spec.schema.safeParse(value).success) return null;
  const kind = kindOf(value);
  if (!spec.kinds.includes(kind)) {
    return invalidRequest(
      `Invalid type for '${field}': expected ${spec.expected}, but got ${ARTICLE[kind]} instead.`,
      field,
      'invalid_type',
    );
  }
  return invalidRequest(
    `Invalid value for '${field}': expected ${spec.expected}, but got ${preview(value)} instead.`,
    field,
    'invalid_value',
  );
}

/**
 * A request body (already JSON-parsed) to a CompletionRequest, or the error OpenAI would answer.
 * Checks in this order, the first failure answering: the body is an object; no unrecognized field;
 * model and prompt present; model's type, then model is the one served (404); more than one prompt;
 * each field's type and range; the values this engine cannot serve; stream_options without stream;
 * min_tokens > max_tokens; token ids in the vocabulary; the context length (id prompts only: a text
 * prompt's length is the server's to check with checkContext once tokenized).
 */
export function parseCompletionRequest(body: unknown, ctx: CompletionContext): ParseResult {
  const fail = (error: ApiError): ParseResult => ({ ok: false, error });
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return fail(invalidRequest('The request body must be a JSON object.', null));
  }
  const b = body as Record<string, unknown>;
  for (const key of Object.keys(b)) {
    if (!Object.hasOwn(FIELDS, key)) {
      return fail(invalidRequest(`Unrecognized request argument supplied: ${key}`, key));
    }
  }
  const get = (f: Field): unknown => b[f] ?? undefined;
  for (const f of ['model', 'prompt'] as const) {
    if (get(f) === undefined) {
      return fail(invalidRequest(`Missing required parameter: '${f}'.`, f, 'missing_required_parameter'));
    }
  }
  const modelError = checkField('model', get('model'));
  if (modelError) return fail(modelError);
  const model = get('model') as string;
  if (model !== ctx.modelName) {
    return fail(
      apiError(
        404,
        `The model \`${model}\` does not exist.`,
        'invalid_request_error',
        null,
        'model_not_found',
      ),
    );
  }

  // Several prompts would pass the one-prompt schema's type check as "wrong value"; say what it is.
  const rawPrompt = get('prompt');
  if (
    Array.isArray(rawPrompt) &&
    rawPrompt.length > 1 &&
    rawPrompt.every((p) => typeof p === 'string' || Array.isArray(p))
  ) {
    return fail(
      unsupported(
        'prompt',
        `Batched prompts are not supported: 'prompt' must hold one prompt, got ${rawPrompt.length}.`,
      ),
    );
  }
  for (const f of Object.keys(FIELDS) as Field[]) {
    if (f === 'model' || get(f) === undefined) continue;
    const err = checkField(f, get(f));
    if (err) return fail(err);
  }

  // Sampling as OpenAI's API defines it: temperature absent is 1 (its default), 0 is greedy; top_p
  // in (0, 1]; top_k (vLLM's extension) 0 or −1 for all; seed absent: the server picks one per request.
  const temperature = (get('temperature') as number | undefined) ?? 1;
  if (temperature < 0 || temperature > 2) {
    return fail(
      invalidRequest(`'temperature' must be in [0, 2], got ${temperature}.`, 'temperature', 'invalid_value'),
    );
  }
  const topP = (get('top_p') as number | undefined) ?? 1;
  if (!(topP > 0 && topP <= 1)) {
    return fail(invalidRequest(`'top_p' must be in (0, 1], got ${topP}.`, 'top_p', 'invalid_value'));
  }
  const topK = (get('top_k') as number | undefined) ?? 0;
  if (topK < -1) {
    return fail(
      invalidRequest(
        `'top_k' must be −1 or 0 (every token) or a count ≥ 1, got ${topK}.`,
        'top_k',
        'invalid_value',
      ),
    );
  }
  const seed = get('seed') as number | undefined;
  if (seed !== undefined && (seed < 0 || seed > 0xffffffff)) {
    return fail(invalidRequest(`'seed' must be in [0, 2^32 − 1], got ${seed}.`, 'seed', 'invalid_value'));
  }
  const n = get('n') as number | undefined;
  if (n !== undefined && n !== 1) {
    return fail(unsupported('n', `Only one completion per request is served: 'n' must be 1, got ${n}.`));
  }
  if (get('echo') === true) {
    return fail(unsupported('echo', "Echoing the prompt is not supported: 'echo' must be false."));
  }
  if (get('logprobs') !== undefined) {
    return fail(unsupported('logprobs', "Log probabilities are not served: 'logprobs' must be null."));
  }
  const stop = get('stop') as string | string[] | undefined;
  if (stop !== undefined && !(Array.isArray(stop) && stop.length === 0)) {
    return fail(
      unsupported(
        'stop',
        'Stop sequences are not supported (the engine stops at the model’s end-of-generation tokens or ' +
          "at 'max_tokens'): 'stop' must be null or empty.",
      ),
    );
  }

  const maxTokens = (get('max_tokens') as number | undefined) ?? DEFAULT_MAX_TOKENS;
  const stream = (get('stream') as boolean | undefined) ?? false;
  const streamOptions = get('stream_options') as { include_usage?: boolean | null } | undefined;
  if (streamOptions !== undefined && !stream) {
    return fail(
      invalidRequest(
        "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
        'stream_options',
      ),
    );
  }
  // The engine generates exactly max_tokens, so any min_tokens ≤ max_tokens holds already; a larger one
  // cannot be met (vLLM refuses it too).
  const minTokens = get('min_tokens') as number | undefined;
  if (minTokens !== undefined && minTokens > maxTokens) {
    return fail(
      invalidRequest(
        `'min_tokens' must be ≤ 'max_tokens' (${maxTokens}), got ${minTokens}.`,
        'min_tokens',
        'invalid_value',
      ),
    );
  }

  const p = rawPrompt as string | number[] | [string] | [number[]];
  const prompt: string | number[] =
    typeof p === 'string' ? p : Array.isArray(p[0]) || typeof p[0] === 'string' ? p[0] : (p as number[]);
  if (typeof prompt !== 'string') {
    const bad = prompt.findIndex((id) => id < 0 || id >= ctx.vocabSize);
    if (bad >= 0) {
      return fail(
        invalidRequest(
          `Token id ${prompt[bad]} at position ${bad} of 'prompt' is outside the vocabulary [0, ${ctx.vocabSize}).`,
          'prompt',
          'invalid_value',
        ),
      );
    }
    const tooLong = checkContext(prompt.length, maxTokens, ctx.maxSeqLen);
    if (tooLong) return fail(tooLong);
  }

  return {
    ok: true,
    request: {
      model,
      prompt,
      maxTokens,
      stream,
      includeUsage: stream && (streamOptions?.include_usage ?? false),
      ignoreEos: (get('ignore_eos') as boolean | undefined) ?? false,
      sampling: { temperature, topK: Math.max(0, topK), topP, ...(seed === undefined ? {} : { seed }) },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Responses

/**
 * The server's own timeline of one request, sent with its usage (an extension of OpenAI's shape) so
 * the client can split its latency into network and server. Points (`*_ms` that are not durations)
 * are epoch milliseconds, fractional; durations are milliseconds; null when the request never got
 * there (failed, cancelled, or not yet: a point is null until it happens).
 */
export interface ServerTiming {
  /** When the server had parsed the request. */
  received_ms: number;
  /** When the scheduler admitted it to the running batch. */
  admitted_ms: number | null;
  /** When the engine step that produced its first token returned that step's readback. */
  first_token_ms: number | null;
  /** When its last token was read back. */
  finished_ms: number | null;
  /** admitted − received. */
  queue_ms: number | null;
  /** first_token − admitted: the prefill, with any steps shared with other requests. */
  prefill_ms: number | null;
  /** finished − first_token. */
  decode_ms: number | null;
}

export type FinishReason = 'length' | 'stop';

export interface CompletionChoice {
  index: number;
  text: string;
  logprobs: null;
  finish_reason: FinishReason | null;
  /**
   * The generated token ids, an extension: the benchmark's client counts tokens exactly from it,
   * where text is only a stand-in. vLLM offers the same with its `return_token_ids` request field.
   */
  token_ids?: number[];
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** OpenAI's field: prompt tokens served from the prefix cache (sent when the server keeps one). */
  prompt_tokens_details?: { cached_tokens: number };
}

/** One streamed chunk (a text delta) or the usage chunk (no choices), as OpenAI streams them. */
export interface CompletionChunk {
  id: string;
  object: 'text_completion';
  created: number;
  model: string;
  choices: CompletionChoice[];
  usage?: Usage;
  server_timing?: ServerTiming;
}

/** The whole answer of a request with `stream: false`. */
export interface CompletionResponse {
  id: string;
  object: 'text_completion';
  created: number;
  model: string;
  choices: CompletionChoice[];
  usage: Usage;
  server_timing?: ServerTiming;
}

function choice(
  index: number,
  text: string,
  finishReason: FinishReason | null,
  tokenIds: number[] | undefined,
): CompletionChoice {
  return {
    index,
    text,
    logprobs: null,
    finish_reason: finishReason,
    ...(tokenIds !== undefined ? { token_ids: tokenIds } : {}),
  };
}

function usage(promptTokens: number, completionTokens: number, cachedTokens?: number): Usage {
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    ...(cachedTokens !== undefined ? { prompt_tokens_details: { cached_tokens: cachedTokens } } : {}),
  };
}

/** `created` is in epoch seconds, as OpenAI's. */
export function completionChunk(o: {
  id: string;
  created: number;
  model: string;
  text: string;
  index?: number;
  finishReason: FinishReason | null;
  tokenIds?: number[];
}): CompletionChunk {
  return {
    id: o.id,
    object: 'text_completion',
    created: o.created,
    model: o.model,
    choices: [choice(o.index ?? 0, o.text, o.finishReason, o.tokenIds)],
  };
}

/** The last chunk before [DONE] when stream_options.include_usage is set: no choices, usage only. */
export function usageChunk(o: {
  id: string;
  created: number;
  model: string;
  promptTokens: number;
  completionTokens: number;
  cachedTokens?: number;
  timing?: ServerTiming;
}): CompletionChunk {
  return {
    id: o.id,
    object: 'text_completion',
    created: o.created,
    model: o.model,
    choices: [],
    usage: usage(o.promptTokens, o.completionTokens, o.cachedTokens),
    ...(o.timing ? { server_timing: o.timing } : {}),
  };
}

export function completionResponse(o: {
  id: string;
  created: number;
  model: string;
  text: string;
  tokenIds?: number[];
  promptTokens: number;
  completionTokens: number;
  cachedTokens?: number;
  finishReason: FinishReason;
  timing?: ServerTiming;
}): CompletionResponse {
  return {
    id: o.id,
    object: 'text_completion',
    created: o.created,
    model: o.model,
    choices: [choice(0, o.text, o.finishReason, o.tokenIds)],
    usage: usage(o.promptTokens, o.completionTokens, o.cachedTokens),
    ...(o.timing ? { server_timing: o.timing } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// Server-sent events

/** One event of a stream, as OpenAI sends them: a `data:` line and a blank line. */
export function sseData(obj: unknown): string {
  return `data: ${JSON.stringify(obj)}\n\n`;
}

/** The stream's end, OpenAI's sentinel (not JSON). */
export const SSE_DONE = 'data: [DONE]\n\n';

const LINE = /([^\r\n]*)(\r\n|\r|\n)/y;

/**
 * The complete events at the front of a stream's text, each event's `data:` lines joined by `\n`
 * (the event stream format of the HTML standard), and the rest, an incomplete event, to prepend to
 * the next chunk. Lines end in CRLF, LF or CR; comment lines (`:`) and other fields (`event:`, `id:`,
 * `retry:`) are skipped, and an event without data is not returned. A CR at the very end may be the
 * first half of a CRLF: if it ends a blank line the event is complete either way (the LF that may
 * follow reads as one more blank line, an event without data), and otherwise the event's text stays
 * in the rest and is read again whole.
 */
export function parseSseEvents(buffer: string): { events: string[]; rest: string } {
  const events: string[] = [];
  let data: string[] = [];
  let eventStart = 0;
  LINE.lastIndex = 0;
  for (let m = LINE.exec(buffer); m !== null; m = LINE.exec(buffer)) {
    const line = m[1];
    if (line === '') {
      if (data.length > 0) events.push(data.join('\n'));
      data = [];
      eventStart = LINE.lastIndex;
      continue;
    }
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    if (field !== 'data') continue;
    const value = colon < 0 ? '' : line.slice(colon + 1);
    data.push(value.startsWith(' ') ? value.slice(1) : value);
  }
  return { events, rest: buffer.slice(eventStart) };
}

// ---------------------------------------------------------------------------------------------
// Stand-in text

const utf8 = new TextEncoder();

/**
 * The engine's stand-in tokenizer for text prompts: one token per UTF-8 byte, id = byte mod
 * (vocabSize − 1) + 1, so deterministic, in [1, vocabSize) and never 0. Not a real tokenizer (the
 * weights are seeded, there is none to match): text prompts exist so that ordinary OpenAI clients
 * work; a benchmark that needs exact prompt lengths sends token ids.
 */
export function textTokens(text: string, vocabSize: number): number[] {
  if (!(Number.isInteger(vocabSize) && vocabSize >= 2)) {
    throw new RangeError(`vocabSize must be an integer ≥ 2, got ${vocabSize}`);
  }
  return Array.from(utf8.encode(text), (byte) => (byte % (vocabSize - 1)) + 1);
}

/** A printable stand-in for a generated token's text, ` t<id>`: the id is the real output. */
export function tokenText(id: number): string {
  return ` t${id}`;
}

/**
 * A request's generated ids as text, chunk by chunk: through the model's tokenizer (each token's
 * piece as llama.cpp's server streams it, never half a character; `flush` gives what is left at the
 * end) where the model has one, else the stand-in ` t<id>` per token. The whole answer is the
 * chunks joined, so a streamed and a non-streamed answer say the same.
 */
export class CompletionText {
  private readonly decoder: ReturnType<Tokenizer['decoder']> | undefined;

  constructor(tokenizer: Pick<Tokenizer, 'decoder'> | undefined) {
    this.decoder = tokenizer?.decoder();
  }

  push(ids: readonly number[]): string {
    const d = this.decoder;
    return d ? ids.map((id) => d.push(id)).join('') : ids.map(tokenText).join('');
  }

  flush(): string {
    return this.decoder?.flush() ?? '';
  }
}

/** Why an answer ended: 'stop' when its last token is an end-of-generation token that ended it, else 'length'. */
export function finishReason(
  tokens: readonly number[],
  stopAfter: ((token: number) => boolean) | undefined,
): FinishReason {
  const last = tokens[tokens.length - 1];
  return stopAfter !== undefined && last !== undefined && stopAfter(last) ? 'stop' : 'length';
}
