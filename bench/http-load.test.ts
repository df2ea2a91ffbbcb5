import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TraceRequest } from '../src/serve/traffic.ts';
import { runHttpArm } from './http-load.ts';

/**
 * The client against a scripted HTTP server (node:http, for real over loopback): each request's
 * first prompt id picks what the server does, so one arm meets every fault the client must count.
 */
const BEHAVIOURS = ['ok', '429', '500', 'drop', 'stall', 'ok-usage-only', 'error-event'] as const;

function chunk(res: ServerResponse, body: unknown) {
  res.write(`data: ${JSON.stringify(body)}\n\n`);
}

let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url !== '/v1/completions') {
      res.writeHead(404).end();
      return;
    }
    let raw = '';
    req.on('data', (d) => {
      raw += d;
    });
    req.on('end', () => {
      const body = JSON.parse(raw) as { prompt: number[]; max_tokens: number };
      const what = BEHAVIOURS[body.prompt[0]];
      if (what === '429' || what === '500') {
        res.writeHead(Number(what), { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: what, type: 'x', param: null, code: null } }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (what === 'stall') return; // headers, then nothing: the body timeout
      const ids = Array.from({ length: body.max_tokens }, (_, i) => 100 + i);
      if (what === 'drop') {
        chunk(res, { choices: [{ text: 'a', token_ids: [ids[0]] }] });
        // Split mid-event, then the socket is destroyed: no [DONE].
        res.write('data: {"choi');
        setTimeout(() => res.destroy(), 20);
        return;
      }
      if (what === 'error-event') {
        chunk(res, { error: { message: 'engine step failed' } });
        res.end('data: [DONE]\n\n');
        return;
      }
      for (const id of ids) {
        chunk(res, { choices: [{ text: ` t${id}`, ...(what === 'ok' ? { token_ids: [id] } : {}) }] });
      }
      chunk(res, { choices: [], usage: { prompt_tokens: 1, completion_tokens: ids.length } });
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((ok) => server.close(ok));
});

const request = (id: number): TraceRequest => ({
  id,
  arrivalMs: 0,
  promptTokens: 1,
  outputTokens: 3,
  prefixId: null,
  prefixTokens: 0,
  class: 'short',
  priority: 0,
});

describe('runHttpArm against faults', () => {
  it('counts each fault by type, keeps the finished requests, and goes on', async () => {
    const trace = BEHAVIOURS.map((_, i) => request(i));
    const prompts = new Map(trace.map((t) => [t.id, [t.id]]));
    const run = await runHttpArm({ url, model: 'm', trace, prompts, concurrency: null, timeoutMs: 300 });
    const status = Object.fromEntries(run.records.map((r) => [BEHAVIOURS[r.id], r.status]));
    expect(status).toEqual({
      ok: 'finished',
      '429': 'failed',
      '500': 'failed',
      drop: 'failed',
      stall: 'failed',
      'ok-usage-only': 'finished',
      'error-event': 'failed',
    });
    expect(run.errors).toEqual({
      http_429: 1,
      http_5xx: 1,
      dropped_stream: 1,
      timeout: 1,
      stream_error: 1,
    });
    const ok = run.records[0];
    expect(ok.outputTokens).toBe(3);
    expect(ok.outputHash).toMatch(/^3:/);
    expect(ok.tokenTimesMs).toHaveLength(3);
    // Without token ids the server's usage counts, and the arm says so.
    expect(run.records[5].outputTokens).toBe(3);
    expect(run.tokenCounting).toBe('usage');
    expect(run.records[1].error).toBe('HTTP 429: x: 429');
    // No /metrics on this server: no scrape, no split.
    expect(run.scrape).toBeNull();
    expect(ok.networkMs).toBeUndefined();
  });

  it('a server that is not there: every request refused, none thrown', async () => {
    const probe = createServer();
    await new Promise<void>((ok) => probe.listen(0, '127.0.0.1', ok));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((ok) => probe.close(ok));
    const trace = [request(0), request(1)];
    const run = await runHttpArm({
      url: `http://127.0.0.1:${port}/v1`,
      model: 'm',
      trace,
      prompts: new Map([
        [0, [0]],
        [1, [0]],
      ]),
      concurrency: 1,
      timeoutMs: 1000,
    });
    expect(run.errors).toEqual({ connection_refused: 2 });
    expect(run.records.map((r) => r.status)).toEqual(['failed', 'failed']);
  });
});
