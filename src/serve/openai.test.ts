import { describe, expect, it } from 'vitest';
import {
  apiError,
  checkContext,
  completionChunk,
  completionResponse,
  invalidJson,
  methodNotAllowed,
  notFound,
  parseCompletionRequest,
  parseSseEvents,
  type ServerTiming,
  SSE_DONE,
  serverError,
  sseData,
  textTokens,
  tokenText,
  tooManyRequests,
  usageChunk,
} from './openai.ts';

const ctx = { modelName: 'bench-model', vocabSize: 100, maxSeqLen: 32 };

function parse(body: unknown) {
  return parseCompletionRequest(body, ctx);
}

/** The request of a body with the model and a text prompt plus `extra`. */
function ok(extra: Record<string, unknown> = {}) {
  const r = parse({ model: 'bench-model', prompt: 'hi', ...extra });
  if (!r.ok) throw new Error(`expected ok, got ${JSON.stringify(r.error)}`);
  return r.request;
}

/** The error of a body with the model and a text prompt plus `extra`. */
function err(body: unknown) {
  const r = parse(body);
  if (r.ok) throw new Error(`expected an error, got ${JSON.stringify(r.request)}`);
  return r.error;
}

function errWith(extra: Record<string, unknown>) {
  return err({ model: 'bench-model', prompt: 'hi', ...extra });
}

/** status, param and code of an error: what the tests pin for most paths. */
function spc(e: ReturnType<typeof err>) {
  return [e.status, e.body.error.param, e.body.error.code];
}

describe('parseCompletionRequest: the request', () => {
  it('defaults: 16 tokens, not streamed, no usage chunk, ignore_eos off', () => {
    expect(ok()).toEqual({
      model: 'bench-model',
      prompt: 'hi',
      maxTokens: 16,
      stream: false,
      includeUsage: false,
      ignoreEos: false,
      // OpenAI's default temperature is 1: sampled, with a seed the server picks.
      sampling: { temperature: 1, topK: 0, topP: 1 },
    });
  });

  it('takes null as absent for every optional field', () => {
    const nulls = {
      max_tokens: null,
      stream: null,
      stream_options: null,
      temperature: null,
      top_p: null,
      top_k: null,
      n: null,
      echo: null,
      logprobs: null,
      stop: null,
      seed: null,
      user: null,
      ignore_eos: null,
      min_tokens: null,
    };
    expect(ok(nulls)).toEqual(ok());
  });

  it('accepts every field at the values that mean greedy, full-length decoding', () => {
    expect(
      ok({
        max_tokens: 5,
        stream: true,
        stream_options: { include_usage: true },
        temperature: 0,
        top_p: 1,
        n: 1,
        echo: false,
        logprobs: null,
        stop: [],
        seed: 42,
        user: 'someone',
        ignore_eos: true,
        min_tokens: 5,
      }),
    ).toEqual({
      model: 'bench-model',
      prompt: 'hi',
      maxTokens: 5,
      stream: true,
      includeUsage: true,
      ignoreEos: true,
      sampling: { temperature: 0, topK: 0, topP: 1, seed: 42 },
    });
  });

  it('includeUsage only when streaming with include_usage true', () => {
    expect(ok({ stream: true }).includeUsage).toBe(false);
    expect(ok({ stream: true, stream_options: {} }).includeUsage).toBe(false);
    expect(ok({ stream: true, stream_options: { include_usage: false } }).includeUsage).toBe(false);
    expect(ok({ stream: true, stream_options: { include_usage: null } }).includeUsage).toBe(false);
    expect(ok({ stream: true, stream_options: { include_usage: true } }).includeUsage).toBe(true);
  });

  it('the prompt shapes: text, ids, and a one-element batch of either', () => {
    expect(ok({ prompt: 'hello' }).prompt).toBe('hello');
    expect(ok({ prompt: [1, 2, 3] }).prompt).toEqual([1, 2, 3]);
    expect(ok({ prompt: [[1, 2, 3]] }).prompt).toEqual([1, 2, 3]);
    expect(ok({ prompt: ['hello'] }).prompt).toBe('hello');
    // The vocabulary's ends.
    expect(ok({ prompt: [0, 99] }).prompt).toEqual([0, 99]);
  });
});

describe('parseCompletionRequest: errors', () => {
  it('a body that is not an object', () => {
    for (const body of [null, undefined, [], [{ model: 'bench-model' }], 'x', 5, true]) {
      expect(err(body)).toEqual({
        status: 400,
        body: {
          error: {
            message: 'The request body must be a JSON object.',
            type: 'invalid_request_error',
            param: null,
            code: null,
          },
        },
      });
    }
  });

  it('an unrecognized field, named as OpenAI names it', () => {
    expect(errWith({ frequency_penalty: 0 })).toEqual({
      status: 400,
      body: {
        error: {
          message: 'Unrecognized request argument supplied: frequency_penalty',
          type: 'invalid_request_error',
          param: 'frequency_penalty',
          code: null,
        },
      },
    });
    // Even with a null value, and before the model is looked at.
    expect(spc(err({ model: 'other', prompt: 'hi', best_of: null }))).toEqual([400, 'best_of', null]);
  });

  it('a missing model or prompt', () => {
    expect(err({ prompt: 'hi' }).body.error).toEqual({
      message: "Missing required parameter: 'model'.",
      type: 'invalid_request_error',
      param: 'model',
      code: 'missing_required_parameter',
    });
    expect(spc(err({ model: null, prompt: 'hi' }))).toEqual([400, 'model', 'missing_required_parameter']);
    expect(spc(err({ model: 'bench-model' }))).toEqual([400, 'prompt', 'missing_required_parameter']);
    expect(spc(err({ model: 'bench-model', prompt: null }))).toEqual([
      400,
      'prompt',
      'missing_required_parameter',
    ]);
  });

  it('a model of the wrong type, and a model not served (404)', () => {
    expect(err({ model: 7, prompt: 'hi' }).body.error).toEqual({
      message: "Invalid type for 'model': expected a string, but got an integer instead.",
      type: 'invalid_request_error',
      param: 'model',
      code: 'invalid_type',
    });
    expect(err({ model: 'gpt-4', prompt: 'hi' })).toEqual({
      status: 404,
      body: {
        error: {
          message: 'The model `gpt-4` does not exist.',
          type: 'invalid_request_error',
          param: null,
          code: 'model_not_found',
        },
      },
    });
    // The model is looked at before the other fields.
    expect(spc(err({ model: 'gpt-4', prompt: 'hi', max_tokens: 'x' }))).toEqual([
      404,
      null,
      'model_not_found',
    ]);
  });

  it('bad prompts', () => {
    expect(errWith({ prompt: '' }).body.error).toEqual({
      message:
        "Invalid value for 'prompt': expected a non-empty string, a non-empty array of integer token ids, " +
        'or an array holding one of those, but got "" instead.',
      type: 'invalid_request_error',
      param: 'prompt',
      code: 'invalid_value',
    });
    for (const prompt of [[], [[]], [''], [1.5], [1, 'a'], [[1, 'a']], [{}]]) {
      expect(spc(errWith({ prompt }))).toEqual([400, 'prompt', 'invalid_value']);
    }
    for (const prompt of [5, true, {}]) {
      expect(spc(errWith({ prompt }))).toEqual([400, 'prompt', 'invalid_type']);
    }
  });

  it('batches of more than one prompt are refused as unsupported', () => {
    expect(errWith({ prompt: [[1], [2]] }).body.error).toEqual({
      message: "Batched prompts are not supported: 'prompt' must hold one prompt, got 2.",
      type: 'invalid_request_error',
      param: 'prompt',
      code: 'unsupported_value',
    });
    expect(spc(errWith({ prompt: ['a', 'b', 'c'] }))).toEqual([400, 'prompt', 'unsupported_value']);
    expect(spc(errWith({ prompt: [[1], 'b'] }))).toEqual([400, 'prompt', 'unsupported_value']);
  });

  it('token ids outside [0, vocabSize)', () => {
    expect(errWith({ prompt: [100] }).body.error).toEqual({
      message: "Token id 100 at position 0 of 'prompt' is outside the vocabulary [0, 100).",
      type: 'invalid_request_error',
      param: 'prompt',
      code: 'invalid_value',
    });
    expect(errWith({ prompt: [[5, -1]] }).body.error.message).toBe(
      "Token id -1 at position 1 of 'prompt' is outside the vocabulary [0, 100).",
    );
  });

  it('max_tokens: a wrong type or a value below 1', () => {
    expect(errWith({ max_tokens: 0 }).body.error).toEqual({
      message: "Invalid value for 'max_tokens': expected an integer ≥ 1, but got 0 instead.",
      type: 'invalid_request_error',
      param: 'max_tokens',
      code: 'invalid_value',
    });
    expect(spc(errWith({ max_tokens: -3 }))).toEqual([400, 'max_tokens', 'invalid_value']);
    expect(errWith({ max_tokens: '5' }).body.error.message).toBe(
      "Invalid type for 'max_tokens': expected an integer ≥ 1, but got a string instead.",
    );
    expect(spc(errWith({ max_tokens: 1.5 }))).toEqual([400, 'max_tokens', 'invalid_type']);
    expect(spc(errWith({ max_tokens: [4] }))).toEqual([400, 'max_tokens', 'invalid_type']);
  });

  it('wrong types name their field', () => {
    const cases: [string, unknown][] = [
      ['stream', 'true'],
      ['stream_options', true],
      ['temperature', 'hot'],
      ['top_p', '1'],
      ['n', 1.5],
      ['echo', 0],
      ['logprobs', 'yes'],
      ['stop', 5],
      ['seed', 1.5],
      ['user', 5],
      ['ignore_eos', 'yes'],
      ['min_tokens', '2'],
    ];
    for (const [field, value] of cases) {
      expect(spc(errWith({ [field]: value })), field).toEqual([400, field, 'invalid_type']);
    }
    // The right type, a wrong value.
    expect(spc(errWith({ stop: [5] }))).toEqual([400, 'stop', 'invalid_value']);
    expect(spc(errWith({ min_tokens: -1 }))).toEqual([400, 'min_tokens', 'invalid_value']);
    expect(spc(errWith({ stream: true, stream_options: { include_usage: 'yes' } }))).toEqual([
      400,
      'stream_options',
      'invalid_value',
    ]);
    expect(spc(errWith({ stream: true, stream_options: { continuous_usage_stats: true } }))).toEqual([
      400,
      'stream_options',
      'invalid_value',
    ]);
  });

  it('sampling: temperature, top_p, top_k (vLLM) and seed are taken, out-of-range values named', () => {
    expect(ok({ temperature: 0.7, top_p: 0.9, top_k: 40, seed: 3 }).sampling).toEqual({
      temperature: 0.7,
      topK: 40,
      topP: 0.9,
      seed: 3,
    });
    // top_k −1 is vLLM's "every token", as 0 is.
    expect(ok({ top_k: -1 }).sampling.topK).toBe(0);
    expect(errWith({ temperature: 2.5 }).body.error).toEqual({
      message: "'temperature' must be in [0, 2], got 2.5.",
      type: 'invalid_request_error',
      param: 'temperature',
      code: 'invalid_value',
    });
    expect(spc(errWith({ top_p: 0 }))).toEqual([400, 'top_p', 'invalid_value']);
    expect(spc(errWith({ top_k: -2 }))).toEqual([400, 'top_k', 'invalid_value']);
    expect(spc(errWith({ seed: -1 }))).toEqual([400, 'seed', 'invalid_value']);
    expect(spc(errWith({ top_k: 1.5 }))).toEqual([400, 'top_k', 'invalid_type']);
  });

  it('the other values this engine does not serve', () => {
    const cases: [string, unknown][] = [
      ['n', 2],
      ['echo', true],
      ['logprobs', 0],
      ['logprobs', 5],
      ['stop', '\n'],
      ['stop', ['x']],
    ];
    for (const [field, value] of cases) {
      expect(spc(errWith({ [field]: value })), `${field}: ${value}`).toEqual([
        400,
        field,
        'unsupported_value',
      ]);
    }
    expect(errWith({ n: 2 }).body.error.message).toBe(
      "Only one completion per request is served: 'n' must be 1, got 2.",
    );
  });

  it('stream_options without stream', () => {
    const expected = {
      status: 400,
      body: {
        error: {
          message: "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
          type: 'invalid_request_error',
          param: 'stream_options',
          code: null,
        },
      },
    };
    expect(errWith({ stream_options: { include_usage: true } })).toEqual(expected);
    expect(errWith({ stream: false, stream_options: {} })).toEqual(expected);
  });

  it('min_tokens above max_tokens (default 16)', () => {
    expect(ok({ min_tokens: 16 }).maxTokens).toBe(16);
    expect(errWith({ min_tokens: 17 }).body.error).toEqual({
      message: "'min_tokens' must be ≤ 'max_tokens' (16), got 17.",
      type: 'invalid_request_error',
      param: 'min_tokens',
      code: 'invalid_value',
    });
    expect(spc(errWith({ max_tokens: 4, min_tokens: 5 }))).toEqual([400, 'min_tokens', 'invalid_value']);
  });
});

describe('the context length', () => {
  // maxSeqLen 32: 10 prompt ids + 22 = 32 fits, + 23 = 33 does not.
  const ten = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];

  it('checkContext by hand', () => {
    expect(checkContext(10, 22, 32)).toBeNull();
    expect(checkContext(10, 23, 32)).toEqual({
      status: 400,
      body: {
        error: {
          message:
            "This model's maximum context length is 32 tokens. However, you requested 33 tokens " +
            '(10 in the prompt, 23 for the completion). Please reduce the length of the prompt or the completion.',
          type: 'invalid_request_error',
          param: null,
          code: 'context_length_exceeded',
        },
      },
    });
    expect(checkContext(1, 1, 2)).toBeNull();
    expect(checkContext(0, 3, 2)?.body.error.message).toContain('you requested 3 tokens (0 in the prompt');
  });

  it('is applied to id prompts, not to text prompts (their length is the server’s to check)', () => {
    expect(ok({ prompt: ten, max_tokens: 22 }).maxTokens).toBe(22);
    expect(ok({ prompt: [ten], max_tokens: 22 }).maxTokens).toBe(22);
    expect(errWith({ prompt: ten, max_tokens: 23 })).toEqual(checkContext(10, 23, 32));
    // The default 16: 17 ids + 16 = 33.
    expect(spc(errWith({ prompt: [...ten, 1, 2, 3, 4, 5, 6, 7] }))).toEqual([
      400,
      null,
      'context_length_exceeded',
    ]);
    expect(ok({ prompt: 'a long text', max_tokens: 1000 }).maxTokens).toBe(1000);
  });
});

describe('error helpers', () => {
  it('apiError defaults param and code to null', () => {
    expect(apiError(418, 'teapot', 'x')).toEqual({
      status: 418,
      body: { error: { message: 'teapot', type: 'x', param: null, code: null } },
    });
  });

  it('the ready-made errors', () => {
    expect(invalidJson('Unexpected token } at 5')).toEqual({
      status: 400,
      body: {
        error: {
          message: 'We could not parse the JSON body of your request: Unexpected token } at 5',
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_json',
        },
      },
    });
    expect(tooManyRequests('queue full')).toEqual({
      status: 429,
      body: {
        error: { message: 'queue full', type: 'rate_limit_error', param: null, code: 'rate_limit_exceeded' },
      },
    });
    expect(serverError('device lost')).toEqual({
      status: 500,
      body: { error: { message: 'device lost', type: 'server_error', param: null, code: null } },
    });
    expect(notFound('/v1/chat/completions', 'POST')).toEqual({
      status: 404,
      body: {
        error: {
          message: 'Invalid URL (POST /v1/chat/completions)',
          type: 'invalid_request_error',
          param: null,
          code: null,
        },
      },
    });
    expect(notFound('/nope').body.error.message).toBe('Invalid URL (/nope)');
    expect(methodNotAllowed('GET', '/v1/completions', ['POST'])).toEqual({
      status: 405,
      body: {
        error: {
          message: 'Method GET is not allowed on /v1/completions (allowed: POST).',
          type: 'invalid_request_error',
          param: null,
          code: null,
        },
      },
    });
    expect(methodNotAllowed('PUT', '/v1/models').body.error.message).toBe(
      'Method PUT is not allowed on /v1/models.',
    );
  });
});

describe('responses', () => {
  const timing: ServerTiming = {
    received_ms: 1000.5,
    admitted_ms: 1002,
    first_token_ms: 1010.25,
    finished_ms: 1050,
    queue_ms: 1.5,
    prefill_ms: 8.25,
    decode_ms: 39.75,
  };

  it('a streamed chunk, with and without token_ids', () => {
    expect(
      completionChunk({ id: 'cmpl-1', created: 1700000000, model: 'm', text: ' t5', finishReason: null }),
    ).toEqual({
      id: 'cmpl-1',
      object: 'text_completion',
      created: 1700000000,
      model: 'm',
      choices: [{ index: 0, text: ' t5', logprobs: null, finish_reason: null }],
    });
    const last = completionChunk({
      id: 'cmpl-1',
      created: 1700000000,
      model: 'm',
      text: ' t5 t6',
      finishReason: 'length',
      tokenIds: [5, 6],
    });
    expect(last).toEqual({
      id: 'cmpl-1',
      object: 'text_completion',
      created: 1700000000,
      model: 'm',
      choices: [{ index: 0, text: ' t5 t6', logprobs: null, finish_reason: 'length', token_ids: [5, 6] }],
    });
    // Absent, not undefined: JSON.stringify would drop it anyway, but toEqual and `in` would not.
    expect(
      'token_ids' in
        completionChunk({ id: 'a', created: 1, model: 'm', text: '', finishReason: null }).choices[0],
    ).toBe(false);
    expect(
      completionChunk({ id: 'a', created: 1, model: 'm', text: '', finishReason: 'stop', index: 3 })
        .choices[0].index,
    ).toBe(3);
  });

  it('the usage chunk', () => {
    expect(
      usageChunk({ id: 'cmpl-1', created: 1, model: 'm', promptTokens: 7, completionTokens: 3 }),
    ).toEqual({
      id: 'cmpl-1',
      object: 'text_completion',
      created: 1,
      model: 'm',
      choices: [],
      usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 },
    });
    const withTiming = usageChunk({
      id: 'cmpl-1',
      created: 1,
      model: 'm',
      promptTokens: 7,
      completionTokens: 3,
      timing,
    });
    expect(withTiming).toEqual({
      id: 'cmpl-1',
      object: 'text_completion',
      created: 1,
      model: 'm',
      choices: [],
      usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 },
      server_timing: timing,
    });
    expect(
      Object.keys(usageChunk({ id: 'a', created: 1, model: 'm', promptTokens: 1, completionTokens: 1 })),
    ).toEqual(['id', 'object', 'created', 'model', 'choices', 'usage']);
  });

  it('the non-streamed response', () => {
    expect(
      completionResponse({
        id: 'cmpl-2',
        created: 5,
        model: 'm',
        text: ' t1 t2',
        tokenIds: [1, 2],
        promptTokens: 4,
        completionTokens: 2,
        finishReason: 'length',
        timing,
      }),
    ).toEqual({
      id: 'cmpl-2',
      object: 'text_completion',
      created: 5,
      model: 'm',
      choices: [{ index: 0, text: ' t1 t2', logprobs: null, finish_reason: 'length', token_ids: [1, 2] }],
      usage: { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 },
      server_timing: timing,
    });
    expect(
      completionResponse({
        id: 'c',
        created: 5,
        model: 'm',
        text: '',
        promptTokens: 1,
        completionTokens: 0,
        finishReason: 'stop',
      }),
    ).toEqual({
      id: 'c',
      object: 'text_completion',
      created: 5,
      model: 'm',
      choices: [{ index: 0, text: '', logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 1, completion_tokens: 0, total_tokens: 1 },
    });
  });
});

/** Feeds pieces as a client reads a stream: each piece after the previous call's rest. */
function feed(pieces: string[]): { events: string[]; rest: string } {
  const events: string[] = [];
  let rest = '';
  for (const piece of pieces) {
    const r = parseSseEvents(rest + piece);
    events.push(...r.events);
    rest = r.rest;
  }
  return { events, rest };
}

describe('server-sent events', () => {
  it('sseData and SSE_DONE', () => {
    expect(sseData({ a: 1, b: 'x' })).toBe('data: {"a":1,"b":"x"}\n\n');
    expect(SSE_DONE).toBe('data: [DONE]\n\n');
  });

  it('parses whole events and keeps the incomplete tail', () => {
    expect(parseSseEvents('data: a\n\ndata: b\n\ndata: c')).toEqual({ events: ['a', 'b'], rest: 'data: c' });
    expect(parseSseEvents('data: a\n\ndata: c\n')).toEqual({ events: ['a'], rest: 'data: c\n' });
    expect(parseSseEvents('')).toEqual({ events: [], rest: '' });
    expect(parseSseEvents('data: a\r\n\r\n')).toEqual({ events: ['a'], rest: '' });
    expect(parseSseEvents('data: a\r\rdata: b\r\r')).toEqual({ events: ['a', 'b'], rest: '' });
  });

  it('multi-line data, comments, other fields, and the one space after the colon', () => {
    const text =
      ': keep-alive\n\n' +
      'event: completion\nid: 7\ndata: line one\ndata:line two\ndata:  two spaces\nretry: 10\n\n' +
      'data\n\n' +
      'event: ping\n\n' +
      'data: {"x":"a:b"}\n\n';
    expect(parseSseEvents(text)).toEqual({
      events: ['line one\nline two\n two spaces', '', '{"x":"a:b"}'],
      rest: '',
    });
  });

  // An OpenAI stream of three chunks, the usage chunk and [DONE], with CRLF line ends and a comment.
  const payloads = [
    completionChunk({ id: 'c', created: 1, model: 'm', text: ' t1', finishReason: null, tokenIds: [1] }),
    completionChunk({ id: 'c', created: 1, model: 'm', text: ' t2', finishReason: null, tokenIds: [2] }),
    completionChunk({ id: 'c', created: 1, model: 'm', text: ' t3', finishReason: 'length', tokenIds: [3] }),
    usageChunk({ id: 'c', created: 1, model: 'm', promptTokens: 2, completionTokens: 3 }),
  ];
  const expected = [...payloads.map((p) => JSON.stringify(p)), '[DONE]'];

  it('the same events however a LF stream is cut into two or three pieces', () => {
    const lf = `: hello\n\n${payloads.map(sseData).join('')}${SSE_DONE}`;
    for (let i = 0; i <= lf.length; i++) {
      expect(feed([lf.slice(0, i), lf.slice(i)]), `cut at ${i}`).toEqual({ events: expected, rest: '' });
    }
    for (let i = 0; i <= lf.length; i += 7) {
      for (let j = i; j <= lf.length; j += 5) {
        expect(feed([lf.slice(0, i), lf.slice(i, j), lf.slice(j)]).events).toEqual(expected);
      }
    }
  });

  it('the same events however a CRLF stream is cut, mid-CRLF included', () => {
    const crlf = `: hello\r\n\r\n${payloads.map(sseData).join('')}${SSE_DONE}`.replace(/(?<!\r)\n/g, '\r\n');
    expect(crlf).not.toMatch(/[^\r]\n/);
    for (let i = 0; i <= crlf.length; i++) {
      for (const j of [i, i + 1, i + 2, i + 3, crlf.length]) {
        if (j > crlf.length) continue;
        expect(feed([crlf.slice(0, i), crlf.slice(i, j), crlf.slice(j)]), `cut at ${i}, ${j}`).toEqual({
          events: expected,
          rest: '',
        });
      }
    }
    // Byte by byte: every cut at once.
    expect(feed([...crlf])).toEqual({ events: expected, rest: '' });
  });

  it('cut between the CR and LF of a data line, and of a blank line', () => {
    expect(feed(['data: a\r', '\n\r\n'])).toEqual({ events: ['a'], rest: '' });
    expect(parseSseEvents('data: a\r')).toEqual({ events: [], rest: 'data: a\r' });
    // The blank line's CR completes the event; the LF after it is an empty line, no event.
    expect(parseSseEvents('data: a\r\n\r')).toEqual({ events: ['a'], rest: '' });
    expect(feed(['data: a\r\n\r', '\ndata: b\r\n\r\n'])).toEqual({ events: ['a', 'b'], rest: '' });
  });
});

describe('stand-in text', () => {
  it('textTokens: one token per UTF-8 byte, byte mod (vocabSize − 1) + 1', () => {
    // 'A' = 65; 'é' = C3 A9 = 195, 169; 195 mod 99 = 96, 169 mod 99 = 70.
    expect(textTokens('A', 100)).toEqual([66]);
    expect(textTokens('é', 100)).toEqual([97, 71]);
    // 'b' = 98 = 0 mod 98: never 0, 1 instead.
    expect(textTokens('b', 99)).toEqual([1]);
    expect(textTokens('xyz', 2)).toEqual([1, 1, 1]);
    expect(textTokens('', 100)).toEqual([]);
    expect(textTokens('hello', 100)).toEqual(textTokens('hello', 100));
    expect(() => textTokens('a', 1)).toThrow(RangeError);
    expect(() => textTokens('a', 10.5)).toThrow(RangeError);
  });

  it('textTokens ids are inside the vocabulary and never 0', () => {
    const all = String.fromCharCode(...Array.from({ length: 128 }, (_, i) => i));
    for (const vocab of [2, 3, 100, 256, 257, 32000]) {
      for (const id of textTokens(all, vocab)) {
        expect(id >= 1 && id < vocab).toBe(true);
      }
    }
  });

  it('tokenText', () => {
    expect(tokenText(123)).toBe(' t123');
    expect(tokenText(0)).toBe(' t0');
  });
});
