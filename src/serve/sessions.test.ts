import { describe, expect, it } from 'vitest';
import {
  longestSession,
  parseToolWait,
  parseTurns,
  sessionContextError,
  sessionShape,
} from '../spec/workloads/serve-sessions.ts';
import { type SessionRecord, summarizeSessions } from './session-metrics.ts';
import { generateSessionTrace, SessionBook, turnPrompt } from './sessions.ts';
import { traceFromJsonl, traceToJsonl } from './traffic.ts';

const shape = sessionShape(1024, 30, { min: 2, max: 5 }, { kind: 'lognormal', medianMs: 400, sigma: 1 });

describe('session traffic', () => {
  it('scales its lengths to the context: 16…L/32 user, L/16…L/12 tool, 8…L/64 answer', () => {
    expect(shape.userTokens).toEqual({ kind: 'uniform', min: 16, max: 32 });
    expect(shape.toolTokens).toEqual({ kind: 'uniform', min: 64, max: 85 });
    expect(shape.outputTokens).toEqual({ kind: 'uniform', min: 8, max: 16 });
  });

  it('a turn’s prompt is the history before it plus what it adds, recounted from the trace', () => {
    const trace = generateSessionTrace({
      seed: 7,
      shape,
      arrival: { kind: 'poisson', rateRps: 2 },
      prefix: { tokens: 40, share: 0.5 },
    });
    const sessions = new Map<number, typeof trace>();
    for (const r of trace)
      sessions.set(r.session?.id ?? -1, [...(sessions.get(r.session?.id ?? -1) ?? []), r]);
    expect(sessions.size).toBe(30);
    expect(trace.map((r) => r.id)).toEqual(trace.map((_, i) => i));
    for (const turns of sessions.values()) {
      expect(turns.length).toBeGreaterThanOrEqual(2);
      expect(turns.length).toBeLessThanOrEqual(5);
      let history = 0;
      turns.forEach((r, i) => {
        const s = r.session;
        expect(s?.turn).toBe(i + 1);
        expect(r.arrivalMs).toBe(turns[0].arrivalMs);
        if (i === 0) {
          expect(s?.toolWaitMs).toBe(0);
          expect(r.promptTokens).toBe(r.prefixTokens + (s?.newTokens ?? 0));
          expect(s?.newTokens).toBeGreaterThanOrEqual(16);
          expect(s?.newTokens).toBeLessThanOrEqual(32);
        } else {
          expect(s?.toolWaitMs).toBeGreaterThan(0);
          // tool 64…85 + user 16…32
          expect(s?.newTokens).toBeGreaterThanOrEqual(80);
          expect(s?.newTokens).toBeLessThanOrEqual(117);
          expect(r.promptTokens).toBe(history + (s?.newTokens ?? 0));
        }
        expect(r.prefixTokens).toBe(turns[0].prefixTokens);
        history = r.promptTokens + r.outputTokens;
      });
      expect(history).toBeLessThanOrEqual(longestSession(shape, 40));
    }
    // Some sessions carry the prefix and some do not, at a share of one half.
    const withPrefix = [...sessions.values()].filter((t) => t[0].prefixTokens === 40).length;
    expect(withPrefix).toBeGreaterThan(5);
    expect(withPrefix).toBeLessThan(25);
    expect(
      generateSessionTrace({
        seed: 7,
        shape,
        arrival: { kind: 'poisson', rateRps: 2 },
        prefix: { tokens: 40, share: 0.5 },
      }),
    ).toEqual(trace);
  });

  it('draws lognormal tool waits around their median', () => {
    const many = sessionShape(
      1024,
      400,
      { min: 6, max: 6 },
      { kind: 'lognormal', medianMs: 400, sigma: 0.5 },
    );
    const waits = generateSessionTrace({ seed: 1, shape: many, arrival: { kind: 'all-at-once' } })
      .filter((r) => (r.session?.turn ?? 1) > 1)
      .map((r) => r.session?.toolWaitMs ?? 0)
      .sort((a, b) => a - b);
    expect(waits).toHaveLength(2000);
    const median = waits[1000];
    expect(median).toBeGreaterThan(380);
    expect(median).toBeLessThan(420);
    // σ 0.5: the 84th percentile sits at median · e^0.5 ≈ 659.
    expect(waits[Math.round(0.8413 * 2000)]).toBeGreaterThan(600);
    expect(waits[Math.round(0.8413 * 2000)]).toBeLessThan(720);
  });

  it('a later turn’s prompt repeats the previous prompt and its answer, then its own new tokens', () => {
    const trace = generateSessionTrace({ seed: 3, shape, arrival: { kind: 'all-at-once' } });
    const book = new SessionBook(trace, 509, 3);
    const first = trace[0];
    const p1 = book.firstPrompt(first);
    expect(p1).toHaveLength(first.promptTokens);
    const answer = Array.from({ length: first.outputTokens }, (_, i) => 100 + i);
    const next = book.finished(first.id, answer);
    expect(next?.req.id).toBe(1);
    expect(next?.req.session?.turn).toBe(2);
    const p2 = next?.prompt ?? [];
    expect(p2.slice(0, p1.length)).toEqual(p1);
    expect(p2.slice(p1.length, p1.length + answer.length)).toEqual(answer);
    expect(p2).toHaveLength(trace[1].promptTokens);
    expect(p2.every((t) => t >= 1 && t < 509)).toBe(true);
    // The same request's own tokens whatever came before.
    expect(turnPrompt(trace[1], { prompt: [5], generated: [6] }, 509, 3).slice(2)).toEqual(
      p2.slice(p1.length + answer.length),
    );
    const turns = trace.filter((r) => r.session?.id === 0).length;
    expect(book.abandonedAfter(first.id).map((r) => r.session?.turn)).toEqual(
      Array.from({ length: turns - 1 }, (_, i) => i + 2),
    );
  });

  it('JSONL keeps the session fields, and a session missing a turn is refused', () => {
    const trace = generateSessionTrace({ seed: 3, shape, arrival: { kind: 'poisson', rateRps: 1 } });
    const back = traceFromJsonl(traceToJsonl(trace));
    expect(back.map((r) => r.session)).toEqual(
      trace.map((r) => ({ ...r.session, toolWaitMs: Number(r.session?.toolWaitMs.toFixed(3)) })),
    );
    const lines = traceToJsonl(trace).split('\n').filter(Boolean);
    expect(() => traceFromJsonl(lines.slice(1).join('\n'))).toThrow(
      /session 0 has turns 2(, \d)*, not 1…\d once each/,
    );
    expect(() =>
      traceFromJsonl(
        '{"arrival_s":0,"prompt_len":9,"output_len":2,"prefix_id":null,"class":"a","priority":0,"session_id":0}',
      ),
    ).toThrow(/a session turn needs all of session_id, turn, tool_wait_ms and new_len/);
  });
});

describe('session flags and the context', () => {
  it('parses --tool-wait and --turns, and names the flag on bad input', () => {
    expect(parseToolWait('fixed:250')).toEqual({ kind: 'fixed', ms: 250 });
    expect(parseToolWait('uniform:100..900')).toEqual({ kind: 'uniform', minMs: 100, maxMs: 900 });
    expect(parseToolWait('lognormal:400')).toEqual({ kind: 'lognormal', medianMs: 400, sigma: 1 });
    expect(parseToolWait('lognormal:400:0.3')).toEqual({ kind: 'lognormal', medianMs: 400, sigma: 0.3 });
    for (const bad of ['lognormal', 'lognormal:0', 'uniform:9..1', 'gamma:3', 'fixed:-1', 'fixed:']) {
      expect(() => parseToolWait(bad), bad).toThrow(/^--tool-wait /);
    }
    expect(parseTurns('3..6')).toEqual({ min: 3, max: 6 });
    expect(parseTurns('4')).toEqual({ min: 4, max: 4 });
    for (const bad of ['6..3', '0..2', '1..2..3', 'a', '1.5', '..4'])
      expect(() => parseTurns(bad), bad).toThrow(/^--turns /);
  });

  it('a session longer than the context is refused naming --turns, with its length counted by hand', () => {
    // 6 turns of at most 32 user + 16 answer, 5 tool results of at most 85, a 64-token prefix.
    const six = sessionShape(1024, 4, { min: 3, max: 6 }, { kind: 'fixed', ms: 1 });
    expect(longestSession(six, 64)).toBe(64 + 6 * 48 + 5 * 85);
    expect(sessionContextError(six, 64, 1024)).toBeNull();
    const twelve = sessionShape(1024, 4, { min: 3, max: 12 }, { kind: 'fixed', ms: 1 });
    expect(sessionContextError(twelve, 0, 1024)).toMatch(
      /^--turns 3\.\.12: a session of 12 turns can reach 1511 tokens .* past the model's context of 1024/,
    );
  });
});

describe('session metrics', () => {
  /** Two turns of session 0 with round numbers, and a session 1 whose second turn failed. */
  const rec = (o: Partial<SessionRecord> & Pick<SessionRecord, 'id'>): SessionRecord => ({
    class: 'agent',
    priority: 0,
    promptTokens: 100,
    outputTokens: 4,
    prefixHitTokens: 0,
    preemptions: 0,
    status: 'finished',
    arrivalMs: 0,
    admittedMs: 0,
    tokenTimesMs: [10],
    finishMs: 20,
    ...o,
  });
  const records: SessionRecord[] = [
    rec({
      id: 0,
      session: { id: 0, turn: 1, toolWaitMs: 0, newTokens: 100 },
      arrivalMs: 0,
      admittedMs: 5,
      tokenTimesMs: [15, 20, 25, 30],
      finishMs: 30,
    }),
    rec({
      id: 1,
      promptTokens: 300,
      prefixHitTokens: 192,
      session: { id: 0, turn: 2, toolWaitMs: 400, newTokens: 96 },
      arrivalMs: 430,
      admittedMs: 432,
      tokenTimesMs: [450, 460],
      finishMs: 460,
    }),
    rec({ id: 2, session: { id: 1, turn: 1, toolWaitMs: 0, newTokens: 100 } }),
    rec({
      id: 3,
      session: { id: 1, turn: 2, toolWaitMs: 50, newTokens: 90 },
      status: 'failed',
      admittedMs: null,
      tokenTimesMs: [],
      finishMs: null,
    }),
  ];

  it('splits a session’s duration into queue, prefill, decode and the measured tool wait', () => {
    const s = summarizeSessions(records, true);
    expect(s?.sessions).toBe(2);
    expect(s?.completed).toBe(1);
    expect(s?.turns).toBe(4);
    expect(s?.durationMs?.p50).toBe(460);
    // queue 5 + 2, prefill 10 + 18, decode 15 + 10, tool wait 430 − 30 = 400: 460 in all.
    expect(s?.split).toEqual({ queueMs: 7, prefillMs: 28, decodeMs: 25, toolWaitMs: 400 });
    const t2 = s?.byTurn[1];
    expect(t2).toMatchObject({
      turn: 2,
      total: 2,
      finished: 1,
      promptTokens: 300,
      newTokens: 96,
      computedTokens: 108,
      toolWaitMs: 400,
    });
    expect(t2?.computedOverNewMax).toBeCloseTo(108 / 96, 12);
    expect(t2?.hitRate).toBeCloseTo(0.64, 12);
    expect(t2?.ttftMs?.p50).toBe(20);
  });

  it('leaves the cache figures out where the hit is not known, and is null without sessions', () => {
    const s = summarizeSessions(records, false);
    expect(s?.byTurn[1].computedTokens).toBeNull();
    expect(s?.byTurn[1].hitRate).toBeNull();
    expect(
      summarizeSessions(
        records.map(({ session: _, ...r }) => r),
        true,
      ),
    ).toBeNull();
  });
});
