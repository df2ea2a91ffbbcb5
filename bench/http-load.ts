import { Agent, request, errors as undiciErrors } from 'undici';
import { blankRecord, type ServeRecord, unsentRecord } from '../src/serve/driver.ts';
import { parseSseEvents } from '../src/serve/openai.ts';
import { gaugeValue, histogramTotals, parsePrometheus } from '../src/serve/prometheus.ts';
import { SessionBook } from '../src/serve/sessions.ts';
import { hashTokens } from '../src/serve/tokens-hash.ts';
import type { TraceRequest } from '../src/serve/traffic.ts';

/**
 * The load test's client over HTTP: the same trace the in-process load test runs, sent to any
 * OpenAI-compatible `/v1/completions` endpoint (this project's `npm run serve-api`, vLLM, llama.cpp's
 * `llama-server`) as streaming requests, from Node.
 *
 * The HTTP client is undici (the library behind Node's own fetch), used directly for its `Agent`:
 * connection reuse with a pool sized to the concurrency, keep-alive, and separate headers and body
 * timeouts, so a server that accepts and then stalls is told apart from one that refuses. Every time
 * is on this process's clock (performance.now), from the moment the request is handed to undici.
 */

/** What the request records of an HTTP arm add to the in-process ones. */
export type HttpRecord = ServeRecord & {
  /** Prompt tokens the server says it served from its cache (llama-server's timings.cache_n). */
  cachedTokens?: number;
  /** Client TTFT less the server's queue and prefill: request and response transit, HTTP and SSE framing. */
  networkMs?: number;
  /** The server's own timeline, where it returns one (this project's server does, in the last chunk). */
  queueMs?: number;
  prefillMs?: number;
  outputHash?: string;
};

export type HttpErrorType =
  | 'connection_refused'
  | 'timeout'
  | 'http_429'
  | 'http_4xx'
  | 'http_5xx'
  | 'dropped_stream'
  | 'stream_error'
  | 'other';

export interface HttpArmOptions {
  /** Base URL ending in /v1. */
  url: string;
  model: string;
  trace: readonly TraceRequest[];
  prompts: ReadonlyMap<number, readonly number[]>;
  /** Closed loop: this many in flight; null: open loop on the trace's arrival times. */
  concurrency: number | null;
  /**
   * Agent sessions (open loop): a later turn is sent its tool wait after the turn before it
   * finishes, with that turn's prompt and the token ids the server returned at its head. A server
   * that returns no ids (llama-server's /v1/completions) gets as many stand-in tokens of the
   * session's own stream in their place, and the run says so (`standIns`).
   */
  sessions?: SessionBook;
  /** A request with no byte for this long fails as a timeout. */
  timeoutMs: number;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number) => void;
}

/** Server-side totals read off `/metrics` before and after an arm (null where the server has none). */
export interface ScrapeDelta {
  requests: number;
  queueMsMean: number | null;
  prefillMsMean: number | null;
  ttftMsMean: number | null;
  source?: 'histograms' | 'llama.cpp counters';
  decodeMsPerToken?: number | null;
}

export interface HttpArmRun {
  records: HttpRecord[];
  durationMs: number;
  errors: Partial<Record<HttpErrorType, number>>;
  /**
   * How output tokens were counted: the `token_ids` of each chunk (exact), the server's `usage`
   * (exact, the server's word), or, with neither, one token per streamed chunk (a guess).
   */
  tokenCounting: 'token_ids' | 'usage' | 'chunks';
  /** The server's `/metrics`, differenced over the arm. */
  scrape: ScrapeDelta | null;
  /** Wall time of an empty `/health` or `/v1/models` round trip on a warm connection (median of 5). */
  roundTripMs: number | null;
  /** Session turns whose history carried stand-in tokens for an answer the server sent without ids. */
  standIns: number;
}

/** The origin that serves /metrics and /health next to a /v1 base URL. */
export function originOf(url: string): string {
  return url.replace(/\/v1\/?$/, '');
}

/** Error type of a failed request, from what undici threw or the status the server answered. */
export function classify(e: unknown, status?: number): HttpErrorType {
  if (status !== undefined) {
    if (status === 429) return 'http_429';
    if (status >= 500) return 'http_5xx';
    return 'http_4xx';
  }
  const err = e as { code?: string; cause?: { code?: string }; name?: string };
  const code = err?.code ?? err?.cause?.code;
  if (code === 'ECONNREFUSED') return 'connection_refused';
  if (
    e instanceof undiciErrors.HeadersTimeoutError ||
    e instanceof undiciErrors.BodyTimeoutError ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT' ||
    code === 'UND_ERR_CONNECT_TIMEOUT' ||
    err?.name === 'TimeoutError'
  ) {
    return 'timeout';
  }
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || err?.name === 'SocketError')
    return 'dropped_stream';
  return 'other';
}

async function scrape(origin: string, agent: Agent): Promise<ReturnType<typeof parsePrometheus> | null> {
  try {
    const res = await request(`${origin}/metrics`, {
      dispatcher: agent,
      headersTimeout: 5000,
      bodyTimeout: 5000,
    });
    const text = await res.body.text();
    return res.statusCode === 200 ? parsePrometheus(text) : null;
  } catch {
    return null;
  }
}

/**
 * Server-side means over an arm, from two scrapes: the latency histograms of vLLM and of this
 * project's server, else llama-server's counters (`--metrics`): `llamacpp:prompt_seconds_total` is
 * the prompt time of every request it finished, so its growth over the arm's `finished` requests is
 * the mean prefill per request; `tokens_predicted_seconds_total` over `tokens_predicted_total` is
 * the time per generated token as its slots count it. It exposes no queue time.
 */
export function scrapeDelta(
  before: ReturnType<typeof parsePrometheus>,
  after: ReturnType<typeof parsePrometheus>,
  finished = 0,
): ScrapeDelta | null {
  const mean = (suffix: string) => {
    const a = histogramTotals(after, suffix);
    const b = histogramTotals(before, suffix) ?? { sum: 0, count: 0 };
    if (!a || a.count - b.count <= 0) return null;
    return { n: a.count - b.count, meanMs: (1000 * (a.sum - b.sum)) / (a.count - b.count) };
  };
  const queue = mean('request_queue_time_seconds');
  const prefill = mean('request_prefill_time_seconds');
  const ttft = mean('time_to_first_token_seconds');
  const n = queue?.n ?? prefill?.n ?? ttft?.n;
  if (n !== undefined)
    return {
      requests: n,
      queueMsMean: queue?.meanMs ?? null,
      prefillMsMean: prefill?.meanMs ?? null,
      ttftMsMean: ttft?.meanMs ?? null,
      source: 'histograms',
    };
  const grown = (suffix: string) => {
    const a = gaugeValue(after, suffix);
    return a === null ? null : a - (gaugeValue(before, suffix) ?? 0);
  };
  const promptS = grown('prompt_seconds_total');
  const predictedS = grown('tokens_predicted_seconds_total');
  const predicted = grown('tokens_predicted_total');
  if (promptS === null || finished <= 0) return null;
  return {
    requests: finished,
    queueMsMean: null,
    prefillMsMean: (1000 * promptS) / finished,
    ttftMsMean: null,
    source: 'llama.cpp counters',
    decodeMsPerToken:
      predictedS !== null && predicted !== null && predicted > 0 ? (1000 * predictedS) / predicted : null,
  };
}

async function roundTrip(origin: string, agent: Agent): Promise<number | null> {
  const times: number[] = [];
  for (let i = 0; i < 6; i++) {
    const t0 = performance.now();
    try {
      const res = await request(`${origin}/v1/models`, { dispatcher: agent, headersTimeout: 5000 });
      await res.body.text();
      if (res.statusCode !== 200) return null;
    } catch {
      return null;
    }
    // The first opens the connection; the other five reuse it.
    if (i > 0) times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return times[2];
}

/**
 * An error body in OpenAI's shape as "code: message", else the body's start. llama-server's code is
 * the HTTP status again (a number) and its type names the error (`exceed_context_size_error`).
 */
export function errorText(body: string): string {
  try {
    const e = (
      JSON.parse(body) as { error?: { message?: string; code?: string | number | null; type?: string } }
    ).error;
    if (e?.message) return `${typeof e.code === 'string' ? e.code : (e.type ?? 'error')}: ${e.message}`;
  } catch {
    // Not JSON: the text as it came.
  }
  return body.slice(0, 300);
}

interface ChunkJson {
  choices?: { text?: string; token_ids?: number[]; finish_reason?: string | null }[];
  usage?: {
    completion_tokens?: number;
    prompt_tokens?: number;
    prompt_tokens_details?: { cached_tokens?: number };
  };
  server_timing?: {
    received_ms: number;
    queue_ms: number | null;
    prefill_ms: number | null;
    first_token_ms: number | null;
  };
  /** llama-server's own per-request timings, on its last chunk. */
  timings?: {
    prompt_ms?: number;
    prompt_n?: number;
    predicted_ms?: number;
    predicted_n?: number;
    cache_n?: number;
  };
  error?: { message?: string };
  message?: string;
}

/**
 * Sends one trace to `o.url` and returns a record per request, as the in-process driver does, with
 * the server's timeline where the server returns one. Faults are counted by type, never thrown: a
 * refused connection, a 429 or 5xx, a timeout or a dropped stream fails that request, and the run
 * goes on.
 */
export async function runHttpArm(o: HttpArmOptions): Promise<HttpArmRun> {
  const origin = originOf(o.url);
  const agent = new Agent({
    connections: o.concurrency ?? Math.max(1, o.trace.length),
    keepAliveTimeout: 30_000,
    headersTimeout: o.timeoutMs,
    bodyTimeout: o.timeoutMs,
    connect: { timeout: Math.min(o.timeoutMs, 10_000) },
  });
  const errors: Partial<Record<HttpErrorType, number>> = {};
  const count = (t: HttpErrorType) => {
    errors[t] = (errors[t] ?? 0) + 1;
  };
  const counted = new Set<'token_ids' | 'usage' | 'chunks'>();
  try {
    const before = await scrape(origin, agent);
    const rtt = await roundTrip(origin, agent);
    const t0 = performance.now();
    const now = () => performance.now() - t0;
    const records: HttpRecord[] = [];
    let done = 0;

    let standIns = 0;
    const one = async (t: TraceRequest, arrivalMs: number, given?: number[]): Promise<void> => {
      const prompt = given ?? o.prompts.get(t.id) ?? [];
      const record: HttpRecord = blankRecord(t, arrivalMs, prompt.length);
      records.push(record);
      const tokens: number[] = [];
      let usageTokens: number | null = null;
      let timing: ChunkJson['server_timing'];
      let llamaTimings: ChunkJson['timings'];
      const sentEpoch = performance.timeOrigin + performance.now();
      try {
        const res = await request(`${o.url}/completions`, {
          method: 'POST',
          dispatcher: agent,
          signal: o.signal,
          headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
          body: JSON.stringify({
            model: o.model,
            prompt,
            max_tokens: t.outputTokens,
            temperature: 0,
            ignore_eos: true,
            stream: true,
            stream_options: { include_usage: true },
          }),
        });
        if (res.statusCode !== 200) {
          const body = await res.body.text().catch(() => '');
          count(classify(undefined, res.statusCode));
          record.error = `HTTP ${res.statusCode}: ${errorText(body)}`.slice(0, 500);
          return;
        }
        let buffer = '';
        let sawDone = false;
        const decoder = new TextDecoder();
        let lastAt = 0;
        for await (const piece of res.body) {
          const at = now();
          lastAt = at;
          buffer += decoder.decode(piece as Buffer, { stream: true });
          const { events, rest } = parseSseEvents(buffer);
          buffer = rest;
          for (const data of events) {
            if (data === '[DONE]') {
              sawDone = true;
              continue;
            }
            const chunk = JSON.parse(data) as ChunkJson;
            if (chunk.error || chunk.message) {
              throw Object.assign(new Error(chunk.error?.message ?? chunk.message), { streamError: true });
            }
            const c = chunk.choices?.[0];
            if (c) {
              if (c.token_ids && c.token_ids.length > 0) {
                tokens.push(...c.token_ids);
                for (const _ of c.token_ids) record.tokenTimesMs.push(at);
              } else if (c.text) {
                // No ids from this server: one time per chunk, the count from `usage` at the end.
                record.tokenTimesMs.push(at);
              }
            }
            if (chunk.usage?.completion_tokens !== undefined) usageTokens = chunk.usage.completion_tokens;
            const cached = chunk.usage?.prompt_tokens_details?.cached_tokens;
            if (cached !== undefined) {
              record.cachedTokens = cached;
              record.prefixHitTokens = cached;
            }
            if (chunk.server_timing) timing = chunk.server_timing;
            if (chunk.timings) llamaTimings = chunk.timings;
          }
        }
        if (!sawDone) {
          count('dropped_stream');
          record.error = 'the stream ended without data: [DONE]';
          return;
        }
        const finishMs = now();
        record.finishMs = finishMs;
        if (tokens.length > 0) {
          counted.add('token_ids');
          record.outputTokens = tokens.length;
          record.outputHash = hashTokens(tokens);
        } else {
          counted.add(usageTokens !== null ? 'usage' : 'chunks');
          record.outputTokens = usageTokens ?? record.tokenTimesMs.length;
        }
        // Tokens the server counted (usage) but sent no text for until the end: llama-server holds
        // back the bytes of an unfinished UTF-8 character (a byte token) and sends them, or nothing,
        // on its last chunk. They arrived when the stream ended.
        if (record.tokenTimesMs.length === 0 && (usageTokens ?? 0) > 0) record.tokenTimesMs.push(lastAt);
        if (record.tokenTimesMs.length === 0) {
          count('stream_error');
          record.error = 'no token in the stream';
          return;
        }
        record.status = 'finished';
        const firstEpoch = performance.timeOrigin + t0 + record.tokenTimesMs[0];
        if (
          timing &&
          timing.queue_ms !== null &&
          timing.prefill_ms !== null &&
          timing.first_token_ms !== null
        ) {
          record.queueMs = timing.queue_ms;
          record.prefillMs = timing.prefill_ms;
          // Measured across the two processes on one clock: request transit (send → parsed) plus
          // response transit (the step's readback → the chunk in this process).
          record.networkMs = timing.received_ms - sentEpoch + (firstEpoch - timing.first_token_ms);
          record.admittedMs = arrivalMs + (timing.received_ms - sentEpoch) + timing.queue_ms;
        } else {
          record.admittedMs = arrivalMs;
          // llama-server times the request's prompt itself (its last chunk's `timings`), but not
          // its wait for a slot: the split is prefill, and the rest of TTFT is queue and network.
          if (llamaTimings?.prompt_ms !== undefined) record.prefillMs = llamaTimings.prompt_ms;
        }
        if (llamaTimings?.cache_n !== undefined) {
          record.cachedTokens = llamaTimings.cache_n;
          record.prefixHitTokens = llamaTimings.cache_n;
        }
        if (o.sessions) {
          // The answer as the history of the next turn: the server's ids, else stand-ins of its length.
          const answer = tokens.length > 0 ? tokens : o.sessions.standIn(t.id, record.outputTokens);
          if (tokens.length === 0) standIns++;
          const next = o.sessions.finished(t.id, answer);
          if (next) follow(next.req, next.prompt, finishMs);
        }
      } catch (e) {
        if (o.signal?.aborted) {
          record.status = 'cancelled';
          record.error = 'cancelled';
          return;
        }
        const type = (e as { streamError?: boolean }).streamError ? 'stream_error' : classify(e);
        count(type);
        record.error = `${type}: ${(e as Error)?.message ?? e}`.slice(0, 500);
      } finally {
        done++;
        o.onProgress?.(done, o.trace.length);
      }
    };

    const inflight: Promise<void>[] = [];
    /** A later session turn: sent its tool wait after `afterMs`, the finish of the turn before it. */
    const follow = (req: TraceRequest, prompt: number[], afterMs: number) => {
      const due = afterMs + (req.session?.toolWaitMs ?? 0);
      const sent = (async () => {
        // Timers run on a millisecond clock and may fire a fraction early: wait out the rest.
        while (now() < due) await new Promise((resolve) => setTimeout(resolve, Math.max(1, due - now())));
        if (!o.signal?.aborted) await one(req, now(), prompt);
      })();
      inflight.push(sent);
    };
    const order = [...o.trace]
      .filter((t) => !o.sessions || !SessionBook.isFollowUp(t))
      .sort((a, b) => a.arrivalMs - b.arrivalMs || a.id - b.id);
    if (o.sessions && o.concurrency !== null) throw new Error('sessions run open loop only');
    if (o.concurrency === null) {
      for (const t of order) {
        const wait = t.arrivalMs - now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        if (o.signal?.aborted) break;
        inflight.push(one(t, now(), o.sessions?.firstPrompt(t)));
      }
      // Follow-up turns join `inflight` while earlier ones run.
      for (let settled = 0; settled < inflight.length; ) {
        const n = inflight.length;
        await Promise.all(inflight.slice(settled, n));
        settled = n;
      }
    } else {
      let next = 0;
      const worker = async () => {
        while (next < order.length && !o.signal?.aborted) {
          const t = order[next++];
          await one(t, now());
        }
      };
      await Promise.all(Array.from({ length: Math.min(o.concurrency, order.length) }, worker));
    }
    const durationMs = now();
    const after = await scrape(origin, agent);
    // Turns never sent: the turn before them did not finish.
    const sent = new Set(records.map((r) => r.id));
    for (const t of o.trace) if (!sent.has(t.id)) records.push(unsentRecord(t, o.signal?.aborted === true));
    records.sort((a, b) => a.id - b.id);
    return {
      records,
      durationMs,
      errors,
      // The weakest way any request was counted.
      tokenCounting: counted.has('chunks') ? 'chunks' : counted.has('usage') ? 'usage' : 'token_ids',
      scrape:
        before && after
          ? scrapeDelta(before, after, records.filter((r) => r.status === 'finished').length)
          : null,
      roundTripMs: rtt,
      standIns,
    };
  } finally {
    await agent.close().catch(() => {});
  }
}
