import { describe, expect, it } from 'vitest';
import { parseGgufHeader } from '../model/gguf.ts';
import { encodeGgufHeader, type MetaEntry, tokenizerMeta, VOCAB_IDS } from '../model/gguf-writer.ts';
import { TOKENIZER_GGUF_OPTIONS, type Tokenizer, tokenizerFromGguf } from '../model/tokenizer/index.ts';
import type { BenchSpec } from '../spec/schema.ts';
import { promptTokens } from './measure.ts';
import { agreementPrompt, peerContextSize, peerPlan, promptSource, wllamaInput } from './record.ts';

/** A tokenizer from a bare tokenizer block, as a file carrying it would give. */
function fromMeta(meta: MetaEntry[]): Tokenizer {
  const bytes = encodeGgufHeader({ version: 3, meta, tensors: [] });
  const tok = tokenizerFromGguf(parseGgufHeader(bytes, 'block', TOKENIZER_GGUF_OPTIONS), 'block');
  if (!tok) throw new Error('no tokenizer');
  return tok;
}

describe('the agreement prompt', () => {
  const stub = promptSource(fromMeta(tokenizerMeta(509)));

  it('32 compared positions, spelled by the file’s tokenizer: after "▁" and a letter, then each letter', () => {
    const p = agreementPrompt(1024, 509, stub);
    // "▁" and 32 letters: 33 ids; the first position with a text of its own is after 2 tokens.
    expect(p.ids).toHaveLength(33);
    expect(p.ids[0]).toBe(VOCAB_IDS.space);
    expect(p.from).toBe(1);
    expect(p.texts).toHaveLength(32);
    expect(p.texts?.[0]).toMatch(/^[A-Za-z]$/);
    expect(p.texts?.[31]).toMatch(/^[A-Za-z]{32}$/);
    // A 16-token model: 16 ids, 15 positions.
    const short = agreementPrompt(16, 509, stub);
    expect([short.ids.length, short.texts?.length]).toEqual([16, 15]);
  });

  it('positions asked for, and cut from a text: the text’s own tokens, then refused past its end', () => {
    // The writer's vocabulary spells ASCII letters one byte token each, after "▁".
    // "▁" alone has no text: the first position compared is after "▁a".
    const p = agreementPrompt(1024, 509, stub, { positions: 5, text: 'abcdefghij' });
    expect(p.from).toBe(1);
    expect(p.ids).toEqual([
      VOCAB_IDS.space,
      ...Array.from('abcde', (c) => VOCAB_IDS.firstByte + c.charCodeAt(0)),
    ]);
    expect(p.texts).toEqual(['a', 'ab', 'abc', 'abcd', 'abcde']);
    expect(agreementPrompt(1024, 509, stub, { positions: 100 }).ids).toHaveLength(101);
    expect(() => agreementPrompt(1024, 509, stub, { positions: 20, text: 'abc' })).toThrow(
      /gives 3 positions to compare, fewer than the 20 asked for/,
    );
  });

  it('without a tokenizer: the stride’s ids, every position compared, and no text for wllama', () => {
    const p = agreementPrompt(1024, 509, { noText: 'the file carries no tokenizer' });
    expect(p).toEqual({ ids: promptTokens(32, 509, 2), from: 0, noText: 'the file carries no tokenizer' });
    expect(() => wllamaInput(p, { noText: 'the file carries no tokenizer' })).toThrow(
      'wllama takes text only, and no text spells the prompts: the file carries no tokenizer',
    );
  });
});

describe('the plan’s prompts', () => {
  const spec = (prefill: number[], depths: number[]) =>
    ({
      workloads: [
        { kind: 'prefill', lengths: prefill, reps: 3, warmup: 1 },
        { kind: 'decode', depths, gen: 4, reps: 3, warmup: 1 },
      ],
    }) as unknown as BenchSpec;

  it('one per length and depth, as many tokens, with text; a context below the shortest text is lengthened', () => {
    const plan = peerPlan(spec([1, 16], [0, 8]), 509, promptSource(fromMeta(tokenizerMeta(509))));
    const [p1, p16] = plan.prompts?.prefill ?? [];
    // One token: no text gives it ("▁" comes before a letter), the ids are the stride's.
    expect(p1).toMatchObject({
      ids: promptTokens(1, 509, 0),
      noText: expect.stringMatching(/shortest is 2/),
    });
    expect(p16.ids).toHaveLength(16);
    expect(p16.text).toMatch(/^[A-Za-z]{15}$/);
    // Depth 0 runs on the 2-token context a text gives, for both peers; depth 8 on 8 tokens.
    expect(plan.prompts?.decode.map((p) => [p.ids.length, p.text?.length])).toEqual([
      [2, 1],
      [8, 7],
    ]);
    // Without a source, no prompts: measure.ts's stride.
    expect(peerPlan(spec([16], [0]), 509).prompts).toBeUndefined();
  });
});

describe('the peer’s context', () => {
  const plan = { prefill: [16, 64], depths: [0, 32], gen: 5, reps: 3, warmup: 1, vocabSize: 509 };
  it('holds the longest prefill, the deepest decode with its tokens and the prompt, plus 16', () => {
    // max(16, 64, max(1, 0) + 5, 32 + 5, 33) = 64, + 16 = 80.
    expect(peerContextSize(plan, 1024, 33)).toBe(80);
    // At least 64, at most the model's length.
    expect(peerContextSize({ ...plan, prefill: [8], depths: [] }, 1024, 9)).toBe(64);
    expect(peerContextSize(plan, 72, 33)).toBe(72);
  });
});
