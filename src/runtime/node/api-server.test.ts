import { describe, expect, it } from 'vitest';
import { BYTE_BOS, BYTE_EOS, byteTokenizer } from '../../../test-support/byte-tokenizer.ts';
import { PageAllocator } from '../../kv/allocator.ts';
import type { Model } from '../../model/forward.ts';
import { OnlineEngine } from '../../serve/online.ts';
import { parseSseEvents } from '../../serve/openai.ts';
import { buildApiServer } from './api-server.ts';

/**
 * The server's text path with the model's own tokenizer, on a stand-in model (the real one is in
 * e2e/generate.spec.ts): each request's sequence answers `script` token by token after its prompt,
 * through the real online engine and scheduler. The tokenizer is byte-level (byte-tokenizer.ts), so
 * the text of each chunk can be told by hand.
 */
function server(
  script: readonly number[],
  extra: Partial<ConstructorParameters<typeof OnlineEngine>[1]> = {},
) {
  const allocator = new PageAllocator({
    numPages: 64,
    pageSize: 4,
    bytesPerTokenSlot: 1,
    prefixCache: extra.prefixCache,
  });
  const promptLength = new Map<number, number>();
  const prompts: number[][] = [];
  const model = {
    config: { vocabSize: 258 },
    kv: { allocator, pageSize: 4 },
    createSequence: () => allocator.createSequence(),
    freeSequence: (seq: number) => allocator.freeSequence(seq),
    step: async (req: {
      decodes: { seq: number; token: number }[];
      prefills: { seq: number; tokens: number[] }[];
    }) => {
      const answer = (seq: number, n: number) => {
        allocator.appendTokens(seq, n);
        return script[allocator.length(seq) - (promptLength.get(seq) ?? 0)];
      };
      for (const p of req.prefills) {
        prompts.push(p.tokens);
        promptLength.set(p.seq, p.tokens.length);
      }
      return {
        decodeTokens: req.decodes.map((d) => answer(d.seq, 1)),
        prefillTokens: req.prefills.map((p) => answer(p.seq, p.tokens.length)),
      };
    },
  } as unknown as Model;
  let t = 0;
  const now = () => ++t;
  const engine = new OnlineEngine(model, { maxBatch: 4, tokenBudget: 64, maxWaiting: 8, now, ...extra });
  const app = buildApiServer({
    engine,
    modelName: 'm.gguf',
    vocabSize: 258,
    maxSeqLen: 64,
    tokenizer: byteTokenizer(),
    now,
    prefixCache: extra.prefixCache,
  });
  return { app, prompts };
}

interface Chunk {
  choices: { text: string; finish_reason: string | null; token_ids?: number[] }[];
  usage?: { prompt_tokens: number; completion_tokens: number };
  server_timing?: { queue_ms: number };
}

async function stream(app: ReturnType<typeof server>['app'], body: Record<string, unknown>) {
  const res = await app.inject({
    method: 'POST',
    url: '/v1/completions',
    payload: { model: 'm.gguf', stream: true, ...body },
  });
  expect(res.statusCode).toBe(200);
  const { events } = parseSseEvents(res.payload);
  expect(events.at(-1)).toBe('[DONE]');
  return events.slice(0, -1).map((e) => JSON.parse(e) as Chunk);
}

const utf8 = (text: string) => [...new TextEncoder().encode(text)];

describe('serve-api with the model’s tokenizer', () => {
  // "é" is two bytes: its first byte's chunk has no text, its second has the whole character.
  const script = [...utf8('aé'), BYTE_EOS, ...utf8('bc')];

  it('tokenizes a text prompt, streams text and token ids, and stops at end-of-generation', async () => {
    const { app, prompts } = server(script);
    const chunks = await stream(app, {
      prompt: 'Hi',
      max_tokens: 10,
      stream_options: { include_usage: true },
    });
    expect(prompts[0]).toEqual([BYTE_BOS, ...utf8('Hi')]);
    const tokenChunks = chunks.filter((c) => c.choices.length > 0);
    expect(tokenChunks.map((c) => c.choices[0].token_ids)).toEqual([[97], [0xc3], [0xa9], [BYTE_EOS]]);
    expect(tokenChunks.map((c) => c.choices[0].text)).toEqual(['a', '', 'é', '']);
    expect(tokenChunks.map((c) => c.choices[0].finish_reason)).toEqual([null, null, null, 'stop']);
    expect(chunks.at(-1)?.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 4 });
    await app.close();
  });

  it('one chunk of a stream carries the finish reason, and one the server timing, whatever ends it', async () => {
    const { app } = server(script);
    const cases = [
      // Stopped at the end-of-generation token; at max_tokens; at max_tokens inside a character
      // (its bytes end the text after the finish); each with and without the usage chunk.
      { body: { max_tokens: 10 }, reason: 'stop' },
      { body: { max_tokens: 6, ignore_eos: true }, reason: 'length' },
      { body: { max_tokens: 2 }, reason: 'length' },
    ];
    for (const { body, reason } of cases) {
      for (const includeUsage of [false, true]) {
        const chunks = await stream(app, {
          prompt: 'Hi',
          ...body,
          ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
        });
        const what = JSON.stringify({ body, includeUsage });
        const finishes = chunks
          .flatMap((c) => c.choices.map((x) => x.finish_reason))
          .filter((f) => f !== null);
        expect(finishes, what).toEqual([reason]);
        expect(chunks.filter((c) => c.server_timing).length, what).toBe(1);
        expect(chunks.at(-1)?.server_timing, what).toBeDefined();
        if (includeUsage) expect(chunks.at(-1)?.usage, what).toBeDefined();
      }
    }
    await app.close();
  });

  it('goes on to max_tokens with ignore_eos, the end-of-generation token rendered as nothing', async () => {
    const { app } = server(script);
    const chunks = await stream(app, { prompt: 'Hi', max_tokens: 6, ignore_eos: true });
    const text = chunks.map((c) => c.choices[0]?.text ?? '').join('');
    expect(text).toBe('aébc');
    expect(chunks.flatMap((c) => c.choices[0]?.token_ids ?? [])).toEqual([97, 0xc3, 0xa9, BYTE_EOS, 98, 99]);
    expect(chunks.flatMap((c) => c.choices.map((x) => x.finish_reason)).filter(Boolean)).toEqual(['length']);
    await app.close();
  });

  it('answers the same text without streaming; a character cut off at max_tokens ends as U+FFFD', async () => {
    const { app } = server(script);
    const whole = await app.inject({
      method: 'POST',
      url: '/v1/completions',
      payload: { model: 'm.gguf', prompt: 'Hi', max_tokens: 10 },
    });
    expect(whole.json()).toMatchObject({
      choices: [{ text: 'aé', finish_reason: 'stop', token_ids: [97, 0xc3, 0xa9, BYTE_EOS] }],
      usage: { completion_tokens: 4 },
    });
    const cut = await stream(app, { prompt: 'Hi', max_tokens: 2 });
    expect(cut.map((c) => c.choices[0]?.text ?? '').join('')).toBe('a\ufffd');
    expect(cut.flatMap((c) => c.choices.map((x) => x.finish_reason)).filter(Boolean)).toEqual(['length']);
    await app.close();
  });

  it('token-id prompts pass as they are; a prompt past the context counts its tokenized length', async () => {
    const { app, prompts } = server(script);
    await stream(app, { prompt: [5, 6], max_tokens: 1 });
    expect(prompts[0]).toEqual([5, 6]);
    const long = await app.inject({
      method: 'POST',
      url: '/v1/completions',
      payload: { model: 'm.gguf', prompt: 'x'.repeat(60), max_tokens: 4 },
    });
    expect(long.statusCode).toBe(400);
    expect(long.json().error.code).toBe('context_length_exceeded');
    expect(long.json().error.message).toMatch(
      /you requested 65 tokens \(61 in the prompt, 4 for the completion\)/,
    );
    await app.close();
  });

  it('a per-request KV budget: over it, reject answers 400 kv_budget_exceeded before queueing; truncate runs the newest tokens', async () => {
    const rejecting = server(script, { kvBudget: { tokens: 10, policy: 'reject' } });
    const over = await rejecting.app.inject({
      method: 'POST',
      url: '/v1/completions',
      payload: { model: 'm.gguf', prompt: [1, 2, 3, 4, 5, 6, 7, 8], max_tokens: 4 }, // 8 + 4 − 1 = 11
    });
    expect(over.statusCode).toBe(400);
    expect(over.json().error.code).toBe('kv_budget_exceeded');
    expect(over.json().error.message).toMatch(/would hold 11 KV tokens .* budget of 10/);
    expect(rejecting.prompts).toEqual([]);
    await stream(rejecting.app, { prompt: [1, 2, 3, 4, 5, 6, 7], max_tokens: 4 }); // 10: runs
    await rejecting.app.close();
    const cutting = server(script, { kvBudget: { tokens: 10, policy: 'truncate' } });
    await stream(cutting.app, { prompt: [1, 2, 3, 4, 5, 6, 7, 8, 9], max_tokens: 4 });
    // Room for 10 − 4 + 1 = 7 prompt tokens: the newest.
    expect(cutting.prompts[0]).toEqual([3, 4, 5, 6, 7, 8, 9]);
    await cutting.app.close();
  });

  it('with a prefix cache, usage says how many prompt tokens came from it', async () => {
    const cached = server(script, { prefixCache: true });
    const first = await stream(cached.app, {
      prompt: [1, 2, 3, 4, 5, 6, 7, 8, 9],
      max_tokens: 2,
      stream_options: { include_usage: true },
    });
    expect(first.at(-1)?.usage).toMatchObject({
      prompt_tokens: 9,
      prompt_tokens_details: { cached_tokens: 0 },
    });
    const again = await stream(cached.app, {
      prompt: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
      max_tokens: 2,
      stream_options: { include_usage: true },
    });
    // Two full pages of 4 of the first prompt were committed.
    expect(again.at(-1)?.usage).toMatchObject({
      prompt_tokens: 10,
      prompt_tokens_details: { cached_tokens: 8 },
    });
    await cached.app.close();
  });
});
