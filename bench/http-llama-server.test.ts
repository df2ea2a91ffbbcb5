import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePrometheus } from '../src/serve/prometheus.ts';
import type { TraceRequest } from '../src/serve/traffic.ts';
import { runHttpArm, scrapeDelta } from './http-load.ts';

/**
 * The client against what a real llama-server answered (built from the release source
 * node-llama-cpp ships, run as `llama-server -m models/trained-4m.gguf --metrics --parallel 4
 * --cont-batching -c 4608`), recorded byte for byte in test-support/fixtures/llama-server/: a
 * streamed completion of 6 tokens (text only, no token ids; `usage` and its own `timings` on the
 * last chunk), `/metrics` after that one request, and the error body of a prompt past the context.
 * A server on loopback replays them.
 */
const FIXTURES = join(import.meta.dirname, '..', 'test-support', 'fixtures', 'llama-server');
const read = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');
const STREAM = read('completions-stream.sse');
const METRICS = read('metrics-after-one.txt');
const TOO_LONG = read('error-context.json');
/** The same counters before any request: every one at 0. */
const METRICS_BEFORE = METRICS.replace(/^(llamacpp:\S+) .*$/gm, '$1 0');

let server: Server;
let url: string;
let scrapes = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/metrics') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(scrapes++ === 0 ? METRICS_BEFORE : METRICS);
      return;
    }
    if (req.url === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"object":"list","data":[{"id":"models/trained-4m.gguf","owned_by":"llamacpp"}]}');
      return;
    }
    let raw = '';
    req.on('data', (d) => {
      raw += d;
    });
    req.on('end', () => {
      const body = JSON.parse(raw) as { prompt: number[] };
      if (body.prompt.length > 1152) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(TOO_LONG);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // A two-token prompt gets the same stream with every text held back (as llama-server does
      // with the bytes of an unfinished character): only the usage says tokens came.
      res.end(body.prompt.length === 2 ? STREAM.replace(/"text":"[^"]*"/g, '"text":""') : STREAM);
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((ok) => server.close(ok));
});

const trace = (id: number, promptTokens: number): TraceRequest => ({
  id,
  arrivalMs: 0,
  promptTokens,
  outputTokens: 6,
  prefixId: null,
  prefixTokens: 0,
  class: 'short',
  priority: 0,
});

describe('llama-server, as it answered', () => {
  it('a stream of text chunks: counted by its usage, its prompt time per request, the context error named', async () => {
    scrapes = 0;
    const run = await runHttpArm({
      url,
      model: 'models/trained-4m.gguf',
      trace: [trace(0, 4), trace(1, 1500)],
      prompts: new Map([
        [0, [1, 400, 401, 402]],
        [1, Array(1500).fill(5)],
      ]),
      concurrency: 1,
      timeoutMs: 5000,
    });
    // No token ids in its chunks: the count is usage's 6, and each of the 6 text chunks is a time.
    expect(run.tokenCounting).toBe('usage');
    const [ok, tooLong] = run.records;
    expect(ok.status).toBe('finished');
    expect(ok.outputTokens).toBe(6);
    expect(ok.tokenTimesMs).toHaveLength(6);
    expect(ok.outputHash).toBeUndefined();
    // Its own prompt time, from the last chunk's timings; no queue time, so no network split.
    expect(ok.prefillMs).toBe(2.117);
    expect(ok.queueMs).toBeUndefined();
    expect(ok.networkMs).toBeUndefined();
    expect(tooLong.status).toBe('failed');
    expect(tooLong.error).toBe(
      'HTTP 400: exceed_context_size_error: request (1500 tokens) exceeds the available context size (1152 tokens), try increasing it',
    );
    expect(run.errors).toEqual({ http_4xx: 1 });
    // /metrics differenced over the arm: its counters over the one finished request.
    expect(run.scrape?.source).toBe('llama.cpp counters');
  });

  it('a stream whose text is all held back: finished, its 6 tokens arriving when the stream ends', async () => {
    const run = await runHttpArm({
      url,
      model: 'models/trained-4m.gguf',
      trace: [trace(0, 2)],
      prompts: new Map([[0, [1, 400]]]),
      concurrency: 1,
      timeoutMs: 5000,
    });
    const [r] = run.records;
    expect(r.status).toBe('finished');
    expect(r.outputTokens).toBe(6);
    expect(r.tokenTimesMs).toHaveLength(1);
    expect(r.tokenTimesMs[0]).toBeLessThanOrEqual(r.finishMs ?? 0);
    expect(run.errors).toEqual({});
  });

  it('its counters as means: prompt seconds per finished request, generation seconds per token (by hand)', () => {
    const d = scrapeDelta(parsePrometheus(METRICS_BEFORE), parsePrometheus(METRICS), 1);
    // prompt_seconds_total 0.001894 s over 1 request; tokens_predicted_seconds_total 0.003507 s over 6 tokens.
    expect(d).toEqual({
      requests: 1,
      queueMsMean: null,
      prefillMsMean: expect.closeTo(1.894, 9),
      ttftMsMean: null,
      source: 'llama.cpp counters',
      decodeMsPerToken: expect.closeTo(3.507 / 6, 9),
    });
    // Nothing finished: no mean to take.
    expect(scrapeDelta(parsePrometheus(METRICS_BEFORE), parsePrometheus(METRICS), 0)).toBeNull();
  });
});
