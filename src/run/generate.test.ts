import { describe, expect, it } from 'vitest';
import { BYTE_BOS, BYTE_EOS, byteTokenizer } from '../../test-support/byte-tokenizer.ts';
import { InputError } from '../errors.ts';
import {
  checkGenerationFits,
  type GenerateEvent,
  type GreedyModel,
  generateGreedy,
  promptIds,
} from './generate.ts';

/**
 * The generation loop on a stand-in model that answers a script: the prefill's token is script[0],
 * the decode step fed script[i − 1] answers script[i]. The real model runs in e2e/generate.spec.ts.
 */
function scripted(script: readonly number[]) {
  const calls: string[] = [];
  const live = new Set<number>();
  let next = 0;
  let step = 0;
  const model: GreedyModel = {
    createSequence: () => {
      live.add(++next);
      return next;
    },
    freeSequence: (seq) => {
      live.delete(seq);
    },
    prefill: async (requests, mode) => {
      calls.push(`prefill ${requests[0].tokens.join(',')} ${mode}`);
      step = 0;
      return [{ seq: requests[0].seq, nextToken: script[0], nextTokens: [script[0]] }];
    },
    decode: async (requests) => {
      const fed = requests[0].token;
      expect(fed).toBe(script[step]);
      step++;
      calls.push(`decode ${fed}`);
      return { nextTokens: [script[step]] };
    },
  };
  return { model, calls, live };
}

const bytes = (text: string) => [...new TextEncoder().encode(text)];

function run(script: number[], maxTokens: number, ignoreEos: boolean) {
  const { model, calls, live } = scripted(script);
  const events: GenerateEvent[] = [];
  return generateGreedy(model, byteTokenizer(), [BYTE_BOS, 72], { maxTokens, ignoreEos }, (e) =>
    events.push(e),
  ).then((g) => ({ g, events, calls, live }));
}

describe('generateGreedy', () => {
  it('feeds each token back, streams whole characters only, and stops after an end-of-generation token', async () => {
    // "é" is two bytes, split over two tokens; "€" three.
    const script = [...bytes('aé€'), BYTE_EOS, ...bytes('zz')];
    const { g, events, calls, live } = await run(script, 32, false);
    // A warm-up prefill builds the plan before the timed one; every sequence is freed again.
    expect(calls.slice(0, 2)).toEqual([`prefill ${BYTE_BOS},72 none`, `prefill ${BYTE_BOS},72 none`]);
    expect(calls.filter((c) => c.startsWith('decode'))).toHaveLength(6);
    expect(live.size).toBe(0);
    expect(g.tokens).toEqual([...bytes('aé€'), BYTE_EOS]);
    expect(g.stop).toBe('eog');
    expect(g.text).toBe('aé€');
    const pieces = events.flatMap((e) => (e.type === 'token' ? [e.text] : []));
    expect(pieces).toEqual(['a', '', 'é', '', '', '€', '']);
    expect(events.map((e) => (e.type === 'token' ? e.index : -1))).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(g.promptTokens).toEqual([BYTE_BOS, 72]);
    expect(g.tokenTimesMs).toHaveLength(7);
    expect(g.tpotMs).toBeCloseTo((g.tokenTimesMs[6] - g.tokenTimesMs[0]) / 6, 9);
    expect(g.ttftMs).toBe(g.tokenTimesMs[0]);
    expect(g.clock).toMatch(/^wall clock/);
  });

  it('goes on past end-of-generation tokens with ignoreEos, to exactly maxTokens', async () => {
    const { g } = await run([...bytes('a'), BYTE_EOS, ...bytes('bc')], 4, true);
    expect(g.tokens).toEqual([97, BYTE_EOS, 98, 99]);
    expect(g.stop).toBe('length');
    expect(g.text).toBe('abc');
  });

  it('stops at maxTokens; a character cut off at the end is flushed as U+FFFD, once', async () => {
    const { g, events } = await run([...bytes('xé')], 2, false);
    expect(g.tokens).toEqual([120, 0xc3]);
    expect(g.stop).toBe('length');
    expect(g.text).toBe('x\ufffd');
    expect(events.at(-1)).toEqual({ type: 'flush', text: '\ufffd' });
  });

  it('a single token has a TTFT and no TPOT', async () => {
    const { g } = await run([BYTE_EOS], 8, false);
    expect(g.tokens).toEqual([BYTE_EOS]);
    expect(g.stop).toBe('eog');
    expect(g.tpotMs).toBeNull();
    expect(g.text).toBe('');
  });

  it('stops between tokens when cancelled', async () => {
    const { model } = scripted(bytes('abcdef'));
    const controller = new AbortController();
    const run = generateGreedy(
      model,
      byteTokenizer(),
      [1],
      { maxTokens: 6, ignoreEos: false },
      (e) => {
        if (e.type === 'token' && e.index === 1) controller.abort(new Error('cancelled'));
      },
      controller.signal,
    );
    await expect(run).rejects.toThrow('cancelled');
  });
});

describe('promptIds and checkGenerationFits', () => {
  it('tokenizes as llama.cpp’s tools do (BOS where the vocabulary asks for it)', () => {
    expect(promptIds(byteTokenizer(true), 'Hi', 'm')).toEqual([BYTE_BOS, 72, 105]);
    expect(promptIds(byteTokenizer(false), 'Hi', 'm')).toEqual([72, 105]);
  });

  it('refuses a model without a tokenizer, naming it, and a prompt that makes no tokens', () => {
    expect(() => promptIds(undefined, 'Hi', 'ci-tiny')).toThrow(InputError);
    expect(() => promptIds(undefined, 'Hi', 'ci-tiny')).toThrow(
      /^ci-tiny has no tokenizer: a text prompt needs one/,
    );
    expect(() => promptIds(byteTokenizer(false), '', 'm')).toThrow(/makes no tokens/);
  });

  it('refuses a prompt and generation past the context, with both counts', () => {
    expect(() => checkGenerationFits(500, 12, 512)).not.toThrow();
    expect(() => checkGenerationFits(500, 13, 512)).toThrow(
      /The prompt is 500 tokens and 13 more are asked for: 513 tokens, past the model's context of 512/,
    );
  });
});

describe('generateGreedy with sampling', () => {
  /** A stand-in whose every step offers the same logits: token 65 ('A') likely, 66 and 67 less. */
  function offering() {
    const logits = new Float32Array(260).fill(-1e9);
    logits[65] = 2;
    logits[66] = 1;
    logits[67] = 0.5;
    const modes: string[] = [];
    const model: GreedyModel = {
      createSequence: () => 1,
      freeSequence: () => {},
      prefill: async (requests, mode) => {
        modes.push(`prefill ${mode}`);
        return [
          {
            seq: requests[0].seq,
            nextToken: 65,
            nextTokens: [65],
            logits: mode === 'last' ? logits : undefined,
          },
        ];
      },
      decode: async (_requests, options) => {
        modes.push(`decode ${options?.logits ? 'logits' : 'ids'}`);
        return { nextTokens: [65], logits: options?.logits ? logits : undefined };
      },
    };
    return { model, modes };
  }
  const sample = (seed: number, temperature = 1) => {
    const { model, modes } = offering();
    return generateGreedy(
      model,
      byteTokenizer(),
      [BYTE_BOS, 72],
      { maxTokens: 40, ignoreEos: true, sampling: { temperature, topK: 0, topP: 1, seed } },
      () => {},
    ).then((g) => ({ g, modes }));
  };

  it('reads logits back and draws from them: a seed repeats its text, another seed differs, greedy ignores both', async () => {
    const a = await sample(1);
    expect(a.modes.slice(0, 3)).toEqual(['prefill none', 'prefill last', 'decode logits']);
    expect(a.g.sampling).toEqual({ temperature: 1, topK: 0, topP: 1, seed: 1 });
    expect(new Set(a.g.tokens)).toEqual(new Set([65, 66, 67]));
    expect((await sample(1)).g.tokens).toEqual(a.g.tokens);
    expect((await sample(2)).g.tokens).not.toEqual(a.g.tokens);
    const greedy = await sample(1, 0);
    expect(greedy.g.tokens).toEqual(new Array(40).fill(65));
    expect(greedy.g.sampling).toBeUndefined();
    expect(greedy.modes.slice(0, 3)).toEqual(['prefill none', 'prefill none', 'decode ids']);
  });
});
