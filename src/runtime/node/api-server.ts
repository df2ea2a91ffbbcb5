import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import type { Tokenizer } from '../../model/tokenizer/index.ts';
import { fmix32 } from '../../random.ts';
import type { OnlineEnd, OnlineEngine, OnlineTimeline } from '../../serve/online.ts';
import {
  type ApiError,
  apiError,
  CompletionText,
  checkContext,
  completionChunk,
  completionResponse,
  finishReason,
  invalidJson,
  notFound,
  parseCompletionRequest,
  type ServerTiming,
  SSE_DONE,
  serverError,
  sseData,
  textTokens,
  tooManyRequests,
  usageChunk,
} from '../../serve/openai.ts';
import {
  CONTENT_TYPE,
  Counter,
  Gauge,
  Histogram,
  LATENCY_BUCKETS_S,
  Registry,
  TOKEN_LATENCY_BUCKETS_S,
} from '../../serve/prometheus.ts';
import { PROMPT_TOKENIZE } from '../../spec/prompt.ts';

/**
 * The engine as an OpenAI-compatible endpoint (Fastify): `POST /v1/completions` (streamed as
 * OpenAI streams, server-sent events ending in `data: [DONE]`), `GET /v1/models`, `GET /metrics`
 * (Prometheus, named after vLLM's metrics where the meaning is the same, under our own prefix) and
 * `GET /health`. Every request's server-side timeline goes back to the client in the last chunk
 * (`server_timing`), so the client can split its TTFT into network and HTTP, queue and prefill.
 */

export const METRIC_PREFIX = 'webgpu_bench:';

export interface ApiServerOptions {
  engine: OnlineEngine;
  modelName: string;
  vocabSize: number;
  maxSeqLen: number;
  /**
   * The model's own tokenizer (a GGUF file that carries one): text prompts are tokenized with it,
   * answers are its text, and generation stops at its end-of-generation tokens unless `ignore_eos`.
   * Without one, the stand-in text of openai.ts and always `max_tokens` tokens.
   */
  tokenizer?: Tokenizer;
  /** The server's clock (epoch ms, sub-millisecond): the engine's `now`. */
  now: () => number;
  /** The engine keeps a prefix cache: usage then says how many prompt tokens it served (cached_tokens). */
  prefixCache?: boolean;
}

/** Epoch milliseconds with sub-millisecond resolution, shared by processes on one machine. */
export const epochMs = (): number => performance.timeOrigin + performance.now();

export function timingOf(t: OnlineTimeline): ServerTiming {
  const span = (a: number | null, b: number | null) => (a !== null && b !== null ? b - a : null);
  return {
    received_ms: t.receivedMs,
    admitted_ms: t.admittedMs,
    first_token_ms: t.firstTokenMs,
    finished_ms: t.finishMs,
    queue_ms: span(t.receivedMs, t.admittedMs),
    prefill_ms: span(t.admittedMs, t.firstTokenMs),
    decode_ms: span(t.firstTokenMs, t.finishMs),
  };
}

function serverMetrics(o: ApiServerOptions) {
  const registry = new Registry({ model_name: o.modelName });
  const h = (name: string, help: string, buckets = LATENCY_BUCKETS_S) =>
    registry.add(new Histogram(`${METRIC_PREFIX}${name}`, help, buckets));
  const m = {
    queue: h(
      'request_queue_time_seconds',
      'Time from the request being received to its admission to the batch.',
    ),
    prefill: h(
      'request_prefill_time_seconds',
      'Time from admission to the first token (the prompt prefill).',
    ),
    decode: h('request_decode_time_seconds', 'Time from the first token to the last.'),
    ttft: h('time_to_first_token_seconds', 'Time from the request being received to its first token.'),
    tpot: h(
      'time_per_output_token_seconds',
      'Gap between consecutive output tokens of a request.',
      TOKEN_LATENCY_BUCKETS_S,
    ),
    e2e: h('e2e_request_latency_seconds', 'Time from the request being received to its last token.'),
    promptTokens: registry.add(
      new Counter(`${METRIC_PREFIX}prompt_tokens_total`, 'Prompt tokens processed.'),
    ),
    generationTokens: registry.add(
      new Counter(`${METRIC_PREFIX}generation_tokens_total`, 'Tokens generated.'),
    ),
    success: registry.add(
      new Counter(`${METRIC_PREFIX}request_success_total`, 'Requests that finished with all their tokens.'),
    ),
    aborted: registry.add(
      new Counter(`${METRIC_PREFIX}request_aborted_total`, 'Requests cancelled (client gone) or failed.'),
    ),
  };
  registry.add(
    new Gauge(
      `${METRIC_PREFIX}num_requests_running`,
      'Requests in the running batch.',
      () => o.engine.stats().running,
    ),
  );
  registry.add(
    new Gauge(
      `${METRIC_PREFIX}num_requests_waiting`,
      'Requests waiting for a batch slot.',
      () => o.engine.stats().waiting,
    ),
  );
  registry.add(
    new Gauge(`${METRIC_PREFIX}kv_cache_usage_perc`, 'Fraction of KV pages in use (0 to 1).', () => {
      const s = o.engine.stats();
      return s.kvUsedPages / s.kvTotalPages;
    }),
  );
  registry.add(
    new Gauge(
      `${METRIC_PREFIX}kv_pages_used`,
      'KV cache pages held by sequences.',
      () => o.engine.stats().kvUsedPages,
    ),
  );
  registry.add(
    new Gauge(
      `${METRIC_PREFIX}kv_pages_total`,
      'KV cache pages in the pool.',
      () => o.engine.stats().kvTotalPages,
    ),
  );

  const record = (end: OnlineEnd, promptTokens: number) => {
    m.promptTokens.inc(promptTokens);
    m.generationTokens.inc(end.tokens.length);
    if (end.status !== 'finished') {
      m.aborted.inc();
      return;
    }
    const t = end.timeline;
    const s = (a: number | null, b: number | null) => ((b ?? 0) - (a ?? 0)) / 1000;
    m.success.inc();
    m.queue.observe(s(t.receivedMs, t.admittedMs));
    m.prefill.observe(s(t.admittedMs, t.firstTokenMs));
    m.decode.observe(s(t.firstTokenMs, t.finishMs));
    m.ttft.observe(s(t.receivedMs, t.firstTokenMs));
    m.e2e.observe(s(t.receivedMs, t.finishMs));
    for (let i = 1; i < end.tokenTimesMs.length; i++) {
      m.tpot.observe((end.tokenTimesMs[i] - end.tokenTimesMs[i - 1]) / 1000);
    }
  };
  return { registry, record };
}

function sendError(reply: FastifyReply, e: ApiError): FastifyReply {
  return reply.code(e.status).type('application/json').send(e.body);
}

export function buildApiServer(o: ApiServerOptions): FastifyInstance {
  const app = Fastify({ logger: false, bodyLimit: 8 * 1024 * 1024, forceCloseConnections: true });
  const metrics = serverMetrics(o);
  const created = Math.floor(Date.now() / 1000);
  // A request that samples without a seed gets the next of these: distinct per request, and the
  // same sequence on every start of the server.
  let nextSeed = 0;

  // Fastify's own errors (a body that is not JSON, a wrong content type, too large) in OpenAI's shape.
  app.setErrorHandler((error, _req, reply) => {
    const err = error as { statusCode?: number; message: string };
    const status = err.statusCode ?? 500;
    if (status >= 500) return sendError(reply, serverError(err.message));
    return sendError(
      reply,
      status === 400 ? invalidJson(err.message) : apiError(status, err.message, 'invalid_request_error'),
    );
  });
  app.setNotFoundHandler((req, reply) => sendError(reply, notFound(req.url)));

  app.get('/health', async () => ({ status: 'ok' }));
  app.get('/v1/models', async () => ({
    object: 'list',
    data: [
      {
        id: o.modelName,
        object: 'model',
        created,
        owned_by: 'webgpu-inference-bench',
        max_model_len: o.maxSeqLen,
      },
    ],
  }));
  app.get('/metrics', async (_req, reply) => reply.type(CONTENT_TYPE).send(metrics.registry.render()));

  app.post('/v1/completions', (req, reply) => {
    const parsed = parseCompletionRequest(req.body, {
      modelName: o.modelName,
      vocabSize: o.vocabSize,
      maxSeqLen: o.maxSeqLen,
    });
    if (!parsed.ok) return sendError(reply, parsed.error);
    const r = parsed.request;
    const tokenizer = o.tokenizer;
    const prompt =
      typeof r.prompt !== 'string'
        ? r.prompt
        : tokenizer
          ? tokenizer.encode(r.prompt, PROMPT_TOKENIZE)
          : textTokens(r.prompt, o.vocabSize);
    if (prompt.length === 0) {
      return sendError(
        reply,
        apiError(400, 'The prompt makes no tokens.', 'invalid_request_error', 'prompt', 'invalid_value'),
      );
    }
    const sampling = { ...r.sampling, seed: r.sampling.seed ?? fmix32(nextSeed++) };
    // Where the model has a tokenizer, its end-of-generation tokens end a request (llama-server's and vLLM's default).
    const stopAfter = tokenizer && !r.ignoreEos ? (token: number) => tokenizer.isEog(token) : undefined;
    const text = new CompletionText(tokenizer);
    const tooLong = checkContext(prompt.length, r.maxTokens, o.maxSeqLen);
    if (tooLong) return sendError(reply, tooLong);
    const refused = o.engine.refusal(prompt.length, r.maxTokens);
    if (refused) {
      return sendError(
        reply,
        refused.status === 503
          ? apiError(503, refused.message, 'server_error', null, 'engine_unavailable')
          : apiError(
              400,
              refused.message,
              'invalid_request_error',
              'max_tokens',
              refused.code ?? 'kv_cache_exceeded',
            ),
      );
    }

    const id = `cmpl-${req.id}-${Math.floor(o.now())}`;
    const base = { id, created: Math.floor(Date.now() / 1000), model: o.modelName };
    const raw = reply.raw;
    let sent = 0;
    let settled = false;
    // One chunk of a stream carries the finish reason, as OpenAI's and vLLM's do: the last token's
    // when it is known there, else one at the end.
    let finishSent = false;

    if (r.stream) {
      const handle = o.engine.submit({
        prompt,
        maxTokens: r.maxTokens,
        stopAfter,
        sampling,
        onTokens: (tokens) => {
          if (raw.destroyed) return;
          sent += tokens.length;
          const stopped = stopAfter?.(tokens[tokens.length - 1]) === true;
          const finish = stopped ? 'stop' : sent >= r.maxTokens ? 'length' : null;
          finishSent ||= finish !== null;
          raw.write(
            sseData(
              completionChunk({ ...base, text: text.push(tokens), tokenIds: tokens, finishReason: finish }),
            ),
          );
        },
        onEnd: (end) => {
          settled = true;
          metrics.record(end, prompt.length);
          if (raw.destroyed) return;
          if (end.status !== 'finished') {
            // Headers are gone: an error in the stream, as vLLM sends one, then the end.
            raw.write(sseData(serverError(end.error).body));
            raw.end(SSE_DONE);
            return;
          }
          const timing = timingOf(end.timeline);
          // Bytes the tokenizer still held (a character the last tokens never finished) end the text.
          const rest = text.flush();
          // The rest of the text, and the finish reason where no token's chunk carried it.
          const last =
            rest || !finishSent
              ? completionChunk({
                  ...base,
                  text: rest,
                  finishReason: finishSent ? null : finishReason(end.tokens, stopAfter),
                })
              : null;
          // The timeline rides on the last chunk whether or not the client asked for usage: the
          // usage chunk, else the one above, else a chunk of its own with no choice (so no finish).
          if (r.includeUsage) {
            if (last) raw.write(sseData(last));
            raw.write(
              sseData(
                usageChunk({
                  ...base,
                  promptTokens: prompt.length,
                  completionTokens: end.tokens.length,
                  cachedTokens: o.prefixCache ? end.cachedTokens : undefined,
                  timing,
                }),
              ),
            );
          } else {
            raw.write(
              sseData({
                ...(last ?? { ...completionChunk({ ...base, text: '', finishReason: null }), choices: [] }),
                server_timing: timing,
              }),
            );
          }
          raw.end(SSE_DONE);
        },
      });
      if (handle === null) return sendError(reply, tooManyRequests('The server queue is full; retry later.'));
      reply.hijack();
      raw.writeHead(200, {
        'Content-Type': 'text/event-stream',
        'Cache-Control': 'no-cache',
        Connection: 'keep-alive',
      });
      raw.flushHeaders();
      raw.on('close', () => {
        if (!settled) handle.cancel('the client disconnected');
      });
      return;
    }

    return new Promise<void>((resolve) => {
      const handle = o.engine.submit({
        prompt,
        maxTokens: r.maxTokens,
        stopAfter,
        sampling,
        onTokens: () => {},
        onEnd: (end) => {
          settled = true;
          metrics.record(end, prompt.length);
          if (end.status !== 'finished') {
            void sendError(reply, serverError(end.error));
          } else {
            void reply.send({
              ...completionResponse({
                ...base,
                text: text.push(end.tokens) + text.flush(),
                tokenIds: end.tokens,
                promptTokens: prompt.length,
                completionTokens: end.tokens.length,
                cachedTokens: o.prefixCache ? end.cachedTokens : undefined,
                finishReason: finishReason(end.tokens, stopAfter),
                timing: timingOf(end.timeline),
              }),
            });
          }
          resolve();
        },
      });
      if (handle === null) {
        void sendError(reply, tooManyRequests('The server queue is full; retry later.'));
        resolve();
        return;
      }
      raw.on('close', () => {
        if (!settled && !raw.writableFinished) handle.cancel('the client disconnected');
      });
    });
  });
  return app;
}
