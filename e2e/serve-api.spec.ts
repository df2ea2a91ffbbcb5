import { expect, test } from '@playwright/test';
import { Agent, request } from 'undici';
import { type ApiServerProcess, startApiServer } from '../bench/api-process.ts';
import { gaugeValue, parsePrometheus } from '../src/serve/prometheus.ts';

/**
 * The engine's OpenAI-compatible server (npm run serve-api) for real: one server process on
 * loopback, on ci-tiny, shared by the tests of this file (they run in order). The bench's client
 * against it (`--target`) is tested with the serve suite, in serve-cli.spec.ts.
 */

let server: ApiServerProcess;
let base: string;
const agent = new Agent({ connections: 128 });

test.describe.configure({ mode: 'serial' });

test.beforeAll(async () => {
  test.setTimeout(180_000);
  server = await startApiServer({ preset: 'ci-tiny', port: 0, maxBatch: 8, tokenBudget: 128, pageSize: 16 });
  base = server.info.url;
});

test.afterAll(async () => {
  await agent.close();
  await server?.close();
});

/** The fields of OpenAI's completion and error bodies these tests read. */
interface Answer {
  choices: { token_ids?: number[] }[];
  usage?: unknown;
  server_timing: Record<string, number>;
  error?: { type: string; message: string; param: string | null; code: string | null };
}

async function post(body: unknown, raw?: string) {
  const res = await request(`${base}/completions`, {
    method: 'POST',
    dispatcher: agent,
    headers: { 'content-type': 'application/json' },
    body: raw ?? JSON.stringify(body),
  });
  return { status: res.statusCode, body: (await res.body.json()) as Answer };
}

async function metrics() {
  const res = await request(`${base.replace(/\/v1$/, '')}/metrics`, { dispatcher: agent });
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheus(await res.body.text());
}

test('serve-api: models, a completion, and every malformed request answered as OpenAI does, the server still up', async () => {
  const models = await request(`${base}/models`, { dispatcher: agent });
  const list = (await models.body.json()) as { data: { id: string; max_model_len: number }[] };
  expect(list.data.map((m) => m.id)).toEqual(['ci-tiny']);

  const ok = await post({ model: 'ci-tiny', prompt: [5, 6, 7], max_tokens: 4 });
  expect(ok.status).toBe(200);
  expect(ok.body.choices[0].token_ids).toHaveLength(4);
  expect(ok.body.usage).toEqual({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
  // Sampling (OpenAI's default temperature of 1 above): a seed repeats its tokens, temperature 0 is greedy.
  const seeded = { model: 'ci-tiny', prompt: [5, 6, 7], max_tokens: 8, temperature: 0.9, top_k: 50, seed: 7 };
  const [s1, s2] = [await post(seeded), await post(seeded)];
  expect(s1.body.choices[0].token_ids).toEqual(s2.body.choices[0].token_ids);
  const greedy = { model: 'ci-tiny', prompt: [5, 6, 7], max_tokens: 8, temperature: 0 };
  const [g1, g2] = [await post(greedy), await post(greedy)];
  expect(g1.body.choices[0].token_ids).toEqual(g2.body.choices[0].token_ids);
  expect(s1.body.choices[0].token_ids).not.toEqual(g1.body.choices[0].token_ids);
  const t = ok.body.server_timing;
  // The timeline's spans are differences of its points.
  expect(t.queue_ms).toBeCloseTo(t.admitted_ms - t.received_ms, 6);
  expect(t.prefill_ms).toBeCloseTo(t.first_token_ms - t.admitted_ms, 6);

  const cases: [string, { body?: unknown; raw?: string }, number, string | null, string | null][] = [
    ['not JSON', { raw: '{"model": "ci-tiny", ' }, 400, null, 'invalid_json'],
    ['a JSON array', { body: [1, 2] }, 400, null, null],
    ['an unknown field', { body: { model: 'ci-tiny', prompt: [1], frobnicate: 1 } }, 400, 'frobnicate', null],
    [
      'a temperature past 2',
      { body: { model: 'ci-tiny', prompt: [1], temperature: 3 } },
      400,
      'temperature',
      'invalid_value',
    ],
    [
      'a token id past the vocabulary',
      { body: { model: 'ci-tiny', prompt: [1, 10_000_000] } },
      400,
      'prompt',
      null,
    ],
    ['max_tokens 0', { body: { model: 'ci-tiny', prompt: [1], max_tokens: 0 } }, 400, 'max_tokens', null],
    [
      'longer than the context',
      { body: { model: 'ci-tiny', prompt: [1, 2], max_tokens: server.info.maxSeqLen } },
      400,
      null,
      'context_length_exceeded',
    ],
    ['another model', { body: { model: 'gpt-4', prompt: [1] } }, 404, null, 'model_not_found'],
  ];
  for (const [what, c, status, param, code] of cases) {
    const r = await post(c.body, c.raw);
    expect(r.status, what).toBe(status);
    expect(r.body.error?.type, what).toBe('invalid_request_error');
    expect(typeof r.body.error?.message, what).toBe('string');
    if (param !== null) expect(r.body.error?.param, what).toBe(param);
    if (code !== null) expect(r.body.error?.code, what).toBe(code);
  }
  const missing = await request(`${base}/chat/nothing`, { dispatcher: agent });
  expect(missing.statusCode).toBe(404);
  await missing.body.dump();
  const health = await request(`${base.replace(/\/v1$/, '')}/health`, { dispatcher: agent });
  expect(health.statusCode).toBe(200);
  await health.body.dump();
});

test('serve-api: 100 concurrent streams, half aborted mid-stream: no server error, the other half whole, the KV pool back to its size', async () => {
  test.setTimeout(120_000);
  const before = await metrics();
  const totalPages = gaugeValue(before, 'kv_pages_total');
  const abortedBefore = gaugeValue(before, 'request_aborted_total') ?? 0;
  expect(totalPages).toBe(server.info.kvPages);
  const maxTokens = 24;
  const one = async (i: number) => {
    const abort = new AbortController();
    const res = await request(`${base}/completions`, {
      method: 'POST',
      dispatcher: agent,
      signal: abort.signal,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'ci-tiny',
        prompt: Array.from({ length: 8 + (i % 5) }, (_, k) => 1 + ((i * 31 + k) % 500)),
        max_tokens: maxTokens,
        stream: true,
        stream_options: { include_usage: true },
      }),
    });
    expect(res.statusCode).toBe(200);
    let text = '';
    try {
      for await (const piece of res.body) {
        text += piece.toString();
        // Odd requests go away once their first token has arrived.
        if (i % 2 === 1 && text.includes('token_ids')) {
          abort.abort();
          break;
        }
      }
    } catch (e) {
      if (i % 2 === 0) throw e;
    }
    return { i, text };
  };
  const all = await Promise.all(Array.from({ length: 100 }, (_, i) => one(i)));
  for (const { i, text } of all.filter((r) => r.i % 2 === 0)) {
    expect(text, `request ${i}`).toContain('data: [DONE]');
    expect(text, `request ${i}`).not.toContain('"error"');
    const usage = text.match(/"completion_tokens":(\d+)/);
    expect(Number(usage?.[1]), `request ${i}`).toBe(maxTokens);
  }
  // The server frees an aborted request's pages after the step in flight: wait for it to go idle.
  let after = await metrics();
  for (let k = 0; k < 50 && (gaugeValue(after, 'num_requests_running') ?? 1) > 0; k++) {
    await new Promise((r) => setTimeout(r, 100));
    after = await metrics();
  }
  expect(gaugeValue(after, 'num_requests_running')).toBe(0);
  expect(gaugeValue(after, 'num_requests_waiting')).toBe(0);
  expect(gaugeValue(after, 'kv_pages_used')).toBe(0);
  expect(gaugeValue(after, 'kv_pages_total')).toBe(totalPages);
  expect((gaugeValue(after, 'request_aborted_total') ?? 0) - abortedBefore).toBe(50);
  // Still serving.
  const ok = await post({ model: 'ci-tiny', prompt: [3, 4], max_tokens: 2 });
  expect(ok.status).toBe(200);
});
