import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseTaskSet } from './task-set.ts';

const enc = (x: unknown) => new TextEncoder().encode(JSON.stringify(x));
const RECALL = { head: 'Key {key}. ', filler: ['A.', 'B.'], tail: ' Key?', answer: ' {key}.' };

describe('the evaluation set', () => {
  it('rebuilds a recall prompt from its key and filler order, and keeps the other slices as they are', () => {
    const slices = parseTaskSet(
      enc({
        about: 'x',
        recall: RECALL,
        slices: [
          { name: 'recall-2', kind: 'recall', cases: [{ key: '42', filler: '101' }] },
          { name: 'add', kind: 'exact', cases: [{ prompt: '1 + 2 =', answer: ' 3' }] },
          { name: 'prose', kind: 'text', texts: [{ source: 'f', text: 'hello' }] },
        ],
      }),
      'set.json',
    );
    expect(slices[0]).toEqual({
      name: 'recall-2',
      kind: 'recall',
      cases: [{ prompt: 'Key 42. B. A. B. Key?', answer: ' 42.' }],
    });
    expect(slices[1]).toEqual({ name: 'add', kind: 'exact', cases: [{ prompt: '1 + 2 =', answer: ' 3' }] });
    expect(slices[2].kind).toBe('text');
  });

  it('refuses a filler index outside the list, a file that is not JSON, and a wrong shape, by name', () => {
    const bad = {
      about: 'x',
      recall: RECALL,
      slices: [{ name: 'r', kind: 'recall', cases: [{ key: '1', filler: '7' }] }],
    };
    expect(() => parseTaskSet(enc(bad), 'set.json')).toThrow(/filler index 7/);
    expect(() => parseTaskSet(new TextEncoder().encode('{'), 'set.json')).toThrow(/set.json is not JSON/);
    expect(() => parseTaskSet(enc({ about: 'x', recall: RECALL, slices: [] }), 'set.json')).toThrow(
      /set.json is not an evaluation set: slices/,
    );
  });

  it("the shipped set: every slice has at least 200 cases or its texts, and a recall prompt reads as the corpus's", () => {
    const slices = parseTaskSet(new Uint8Array(readFileSync('models/trained-4m-eval.json')), 'shipped');
    for (const s of slices) {
      if (s.kind === 'text') expect(s.texts.length, s.name).toBeGreaterThan(0);
      else expect(s.cases.length, s.name).toBeGreaterThanOrEqual(200);
    }
    const recall = slices.find((s) => s.name === 'recall-64');
    if (!recall || recall.kind === 'text') throw new Error('no recall-64 slice');
    const { prompt, answer } = recall.cases[0];
    const key = /^The pass key is (\d{5})\. Remember it\. /.exec(prompt)?.[1];
    expect(key).toBeDefined();
    expect(prompt.endsWith(' What is the pass key? The pass key is')).toBe(true);
    expect(answer).toBe(` ${key}.`);
  });
});
