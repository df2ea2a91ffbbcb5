import { describe, expect, it } from 'vitest';
import type { TaskQuality } from './formats.ts';
import { taskScoreCells, taskScoresTable } from './tasks.ts';

const base = { format: 'f16', deltaPoints: null, verdict: null, kld: null } as const;

describe("the run's task table", () => {
  it('writes each slice as the page does: its sample, its score and interval, perplexity on text', () => {
    const exact: TaskQuality = {
      ...base,
      slice: 'add-2digit',
      kind: 'exact',
      metric: 'exact match',
      cases: 8,
      score: 3 / 8,
      score95: [0.1368, 0.6943],
      exactMatch: undefined,
    };
    const json: TaskQuality = {
      ...base,
      slice: 'json',
      kind: 'json',
      metric: 'valid JSON',
      cases: 1,
      score: 1,
      score95: [0.207, 1],
      exactMatch: 0,
    };
    const text: TaskQuality = {
      ...base,
      slice: 'prose',
      kind: 'text',
      metric: 'next-token accuracy',
      cases: 64,
      score: 18 / 64,
      score95: [0.186, 0.401],
      perplexity: 87.134,
    };
    expect(taskScoreCells(exact)).toEqual(['add-2digit', 'exact match', '8', '37.5%', '13.7%–69.4%', '–']);
    expect(taskScoreCells(json)).toEqual([
      'json',
      'valid JSON (exact 0.0%)',
      '1',
      '100.0%',
      '20.7%–100.0%',
      '–',
    ]);
    expect(taskScoreCells(text)).toEqual([
      'prose',
      'next-token accuracy',
      '64 tokens',
      '28.1%',
      '18.6%–40.1%',
      '87.13',
    ]);
    const table = taskScoresTable([exact, json, text], 'trained-4m');
    expect(table[0]).toContain(
      'trained-4m: a model trained here, its f16 weights scored on its held-out set',
    );
    expect(table.filter((l) => l.startsWith('| add-2digit |') || l.startsWith('| json |'))).toHaveLength(2);
  });
});
