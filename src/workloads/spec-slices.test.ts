import { describe, expect, it } from 'vitest';
import type { TaskSlice } from '../model/task-set.ts';
import { slicePrompts } from './spec.ts';

// One id per character, BOS 1 first, EOS 2: counts by hand.
const tokenizer = {
  eos: 2,
  encode: (text: string) => [1, ...[...text].map((c) => c.charCodeAt(0))],
};

describe('speculative prompts by slice', () => {
  it('streams whole cases (BOS, case, newline, EOS) and cuts the last after its question', () => {
    const set: TaskSlice[] = [
      {
        name: 'add',
        kind: 'exact',
        cases: [
          { prompt: '1+1=', answer: '2' },
          { prompt: '2+2=', answer: '4' },
          { prompt: '3+3=', answer: '6' },
        ],
      },
    ];
    // A whole case is 1 + 4 + 1 + 1 + 1 = 8 ids; the question alone 5. 20 tokens: two cases, then a question.
    const { classes, skipped } = slicePrompts(set, tokenizer, 20, 1);
    expect(skipped).toEqual([]);
    const p = classes[0].prompts[0];
    expect(p).toHaveLength(16);
    expect(p.slice(0, 8)).toEqual([1, 49, 43, 49, 61, 50, 10, 2]);
    // 16 + 5 > 20: the third question does not fit, so the prompt ends after the second case's EOS.
    expect(p.at(-1)).toBe(2);
    // 21 tokens hold the third question too.
    expect(slicePrompts(set, tokenizer, 21, 1).classes[0].prompts[0].slice(16)).toEqual([1, 51, 43, 51, 61]);
  });

  it('skips a slice whose one case is longer than the prompt, and a text slice too short for the prompts asked', () => {
    const set: TaskSlice[] = [
      { name: 'recall', kind: 'recall', cases: [{ prompt: 'x'.repeat(40), answer: ' 1.' }] },
      { name: 'prose', kind: 'text', texts: [{ source: 'f', text: 'abcdefghij' }] },
    ];
    const { classes, skipped } = slicePrompts(set, tokenizer, 8, 2);
    // 11 ids (BOS and 10 letters) hold one window of 8 only, so 2 prompts cannot be made.
    expect(skipped).toEqual(['recall', 'prose']);
    expect(classes).toEqual([]);
    expect(slicePrompts(set, tokenizer, 5, 2).classes).toEqual([
      {
        name: 'prose',
        prompts: [
          [1, 97, 98, 99, 100],
          [101, 102, 103, 104, 105],
        ],
      },
    ]);
  });
});
