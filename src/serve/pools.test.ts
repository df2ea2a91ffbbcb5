import { describe, expect, it } from 'vitest';
import { parsePools, parseRoute, splitCapacity } from '../spec/workloads/serve-pools.ts';
import { PooledScheduler, poolPort, routeOf } from './pools.ts';
import type { KvPort } from './scheduler.ts';

describe('pools: flags', () => {
  it('parses two named shares summing to 1, and names --pools on anything else', () => {
    expect(parsePools('short:0.7,long:0.3')).toEqual([
      { name: 'short', share: 0.7 },
      { name: 'long', share: 0.3 },
    ]);
    expect(parsePools('short:0.5,long:0.4')).toMatch(
      /^--pools short:0\.5,long:0\.4: the shares sum to 0\.9, not 1/,
    );
    expect(parsePools('short:1')).toMatch(/share of "short" must be in \(0, 1\)/);
    expect(parsePools('a:0.5,b:0.3,c:0.2')).toMatch(/give two pools/);
    expect(parsePools('a:0.5,a:0.5')).toMatch(/"a" is named twice/);
    expect(parsePools('a0.5,b:0.5')).toMatch(/"a0\.5" is not NAME:SHARE/);
  });

  it('parses a rule on prompt, output or class, and names --route on an unknown field', () => {
    expect(parseRoute('prompt>512')).toEqual({ field: 'prompt', op: '>', value: 512 });
    expect(parseRoute('output<8')).toEqual({ field: 'output', op: '<', value: 8 });
    expect(parseRoute('class=rag')).toEqual({ field: 'class', op: '=', value: 'rag' });
    expect(parseRoute('tokens>5')).toMatch(
      /^--route tokens>5: unknown field "tokens" \(fields: prompt, output, class\)/,
    );
    expect(parseRoute('prompt=5')).toMatch(/prompt takes > or </);
    expect(parseRoute('prompt>x')).toMatch(/not a whole number/);
    expect(parseRoute('prompt')).toMatch(/give FIELD>N/);
  });
});

describe('pools: capacity and routing', () => {
  it('splits pages, slots and step tokens by share, the second pool taking the rest', () => {
    const caps = splitCapacity(
      {
        pools: [
          { name: 's', share: 0.75 },
          { name: 'l', share: 0.25 },
        ],
        route: { field: 'prompt', op: '>', value: 9 },
      },
      { pages: 101, slots: 8, tokenBudget: 64 },
    );
    expect(caps.map((c) => [c.pages, c.slots, c.tokenBudget])).toEqual([
      [76, 6, 48],
      [25, 2, 16],
    ]);
    expect(() =>
      splitCapacity(
        {
          pools: [
            { name: 's', share: 0.5 },
            { name: 'l', share: 0.5 },
          ],
          route: { field: 'prompt', op: '>', value: 9 },
        },
        { pages: 100, slots: 1, tokenBudget: 64 },
      ),
    ).toThrow(/1 batch slots \(--max-batch\) cannot be split so each pool gets one/);
  });

  it('routes to the second pool exactly when the rule holds', () => {
    const t = { promptTokens: 300, outputTokens: 10, class: 'rag' };
    expect(routeOf({ field: 'prompt', op: '>', value: 299 }, t)).toBe(1);
    expect(routeOf({ field: 'prompt', op: '>', value: 300 }, t)).toBe(0);
    expect(routeOf({ field: 'output', op: '<', value: 11 }, t)).toBe(1);
    expect(routeOf({ field: 'class', op: '=', value: 'rag' }, t)).toBe(1);
    expect(routeOf({ field: 'class', op: '=', value: 'short' }, t)).toBe(0);
  });
});

/** A pool of pages counted per sequence, shared by the pools' views. */
function sharedKv(totalPages: number, pageSize: number) {
  const lengths = new Map<number, number>();
  let next = 0;
  const pages = (n: number) => Math.ceil(n / pageSize);
  const used = () => [...lengths.values()].reduce((a, n) => a + pages(n), 0);
  const port: KvPort = {
    pageSize,
    totalPages,
    availablePages: () => totalPages - used(),
    pagesToGrow: (seq, n) => {
      const len = seq === null ? 0 : (lengths.get(seq) ?? 0);
      return pages(len + n) - pages(len);
    },
    open: () => {
      lengths.set(next, 0);
      return { seq: next++, hitTokens: 0 };
    },
    close: (seq) => {
      lengths.delete(seq);
    },
  };
  const grow = (seq: number, n: number) => lengths.set(seq, (lengths.get(seq) ?? 0) + n);
  return { port, lengths, pages, used, grow };
}

describe('pools: one engine, two schedulers', () => {
  it('a pool never takes more than its pages, whatever the other leaves free', () => {
    const kv = sharedKv(20, 4);
    const view = poolPort(kv.port, 5, (seq) => kv.pages(kv.lengths.get(seq) ?? 0));
    const { seq } = view.open([1]);
    kv.grow(seq, 12); // 3 pages of its 5
    expect(view.usedPages()).toBe(3);
    expect(view.availablePages()).toBe(2);
    expect(kv.port.availablePages()).toBe(17);
  });

  it('steps both pools together: a long prompt in one does not hold up the other, and every token goes back to its own request', () => {
    const kv = sharedKv(40, 4);
    const caps = splitCapacity(
      {
        pools: [
          { name: 'short', share: 0.5 },
          { name: 'long', share: 0.5 },
        ],
        route: { field: 'prompt', op: '>', value: 20 },
      },
      { pages: 40, slots: 2, tokenBudget: 16 },
    );
    const s = new PooledScheduler(kv.port, (seq) => kv.pages(kv.lengths.get(seq) ?? 0), caps, {
      batching: 'continuous',
      policy: 'fcfs',
      tokenBudget: 16,
      maxBatch: 2,
    });
    const req = (id: number, len: number) => ({
      id,
      class: 'c',
      priority: 0,
      prompt: Array.from({ length: len }, (_, i) => i + 1),
      outputTokens: 2,
      arrivalMs: 0,
    });
    const long = s.arrive(
      req(1, 60),
      routeOf({ field: 'prompt', op: '>', value: 20 }, { promptTokens: 60, outputTokens: 2, class: 'c' }),
    );
    const short = s.arrive(req(2, 6), 0);
    expect(s.poolOf(long)).toBe(1);
    expect(s.poolOf(short)).toBe(0);
    const plan = s.plan(0);
    // Each pool spends its own 8 tokens: the long prompt's first chunk, the short prompt whole.
    expect(plan.prefills.map((p) => [p.req.id, p.tokens.length])).toEqual([
      [2, 6],
      [1, 8],
    ]);
    for (const p of plan.prefills) kv.grow(p.req.seq as number, p.tokens.length);
    s.complete(plan, [], [700, 800], 1);
    expect(short.generated).toEqual([700]);
    expect(long.generated).toEqual([]);
    expect(s.lastStepTokens()).toEqual([6, 8]);
  });
});
