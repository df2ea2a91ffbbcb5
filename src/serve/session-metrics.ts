import { mean } from '../stats.ts';
import { type Dist, dist, type RequestRecord } from './metrics.ts';
import type { SessionTurn } from './traffic.ts';

/**
 * What agent sessions add to a serve run's figures: each session's duration split into the time
 * its turns queued, prefilled and decoded and the time it spent on its tools (measured: a turn's
 * arrival less the previous turn's finish), and, by turn index, TTFT, the prompt's length, the
 * tokens the turn added and those actually computed (prompt less the prefix-cache hit). Without the
 * cache, a turn computes its whole history; with it, about the new tokens alone.
 */

export type SessionRecord = RequestRecord & { session?: SessionTurn };

export interface TurnSummary {
  turn: number;
  /** Turns of this index, and those of them that finished. */
  total: number;
  finished: number;
  ttftMs: Dist | null;
  /** Means over the finished turns. */
  promptTokens: number | null;
  newTokens: number | null;
  /** Prompt tokens prefilled: prompt less the prefix-cache hit; null where the hit is not known. */
  computedTokens: number | null;
  /** The largest computed ÷ new over the finished turns of this index. */
  computedOverNewMax: number | null;
  /** Σ hit ÷ Σ prompt over the finished turns. */
  hitRate: number | null;
  /** Mean measured wait before the turn (its arrival less the previous turn's finish); null for turn 1. */
  toolWaitMs: number | null;
}

export interface SessionSummary {
  sessions: number;
  /** Sessions whose every turn finished: the duration and split are over these. */
  completed: number;
  turns: number;
  /** First turn's arrival to the last turn's finish. */
  durationMs: Dist | null;
  /** Means per completed session, ms: they add up to the mean duration. */
  split: { queueMs: number; prefillMs: number; decodeMs: number; toolWaitMs: number } | null;
  byTurn: TurnSummary[];
}

/**
 * The session figures of a run's records; null when no record is a session turn. `hitsKnown`:
 * whether prefixHitTokens holds the cache hit (in-process, or a server that reports it).
 */
export function summarizeSessions(
  records: readonly SessionRecord[],
  hitsKnown: boolean,
): SessionSummary | null {
  const turns = records.filter((r) => r.session !== undefined);
  if (turns.length === 0) return null;
  const bySession = new Map<number, SessionRecord[]>();
  for (const r of turns) {
    const id = r.session?.id ?? 0;
    bySession.set(id, [...(bySession.get(id) ?? []), r]);
  }
  const durations: number[] = [];
  const parts = {
    queueMs: [] as number[],
    prefillMs: [] as number[],
    decodeMs: [] as number[],
    toolWaitMs: [] as number[],
  };
  const waitBefore = new Map<SessionRecord, number>();
  for (const list of bySession.values()) {
    list.sort((a, b) => (a.session?.turn ?? 0) - (b.session?.turn ?? 0));
    for (let i = 1; i < list.length; i++) {
      const prev = list[i - 1];
      if (prev.finishMs !== null && list[i].status === 'finished')
        waitBefore.set(list[i], list[i].arrivalMs - prev.finishMs);
    }
    if (!list.every((r) => r.status === 'finished')) continue;
    const first = list[0];
    const last = list[list.length - 1];
    durations.push((last.finishMs as number) - first.arrivalMs);
    let q = 0;
    let p = 0;
    let d = 0;
    let w = 0;
    for (const r of list) {
      const admitted = r.admittedMs ?? r.arrivalMs;
      q += admitted - r.arrivalMs;
      p += r.tokenTimesMs[0] - admitted;
      d += (r.finishMs as number) - r.tokenTimesMs[0];
      w += waitBefore.get(r) ?? 0;
    }
    parts.queueMs.push(q);
    parts.prefillMs.push(p);
    parts.decodeMs.push(d);
    parts.toolWaitMs.push(w);
  }
  const maxTurn = Math.max(...turns.map((r) => r.session?.turn ?? 1));
  const byTurn: TurnSummary[] = [];
  for (let k = 1; k <= maxTurn; k++) {
    const all = turns.filter((r) => r.session?.turn === k);
    const fin = all.filter((r) => r.status === 'finished');
    const promptSum = fin.reduce((a, r) => a + r.promptTokens, 0);
    const hitSum = fin.reduce((a, r) => a + r.prefixHitTokens, 0);
    const ratios = fin.map((r) => (r.promptTokens - r.prefixHitTokens) / (r.session?.newTokens ?? 1));
    const waits = fin.flatMap((r) => (waitBefore.has(r) ? [waitBefore.get(r) as number] : []));
    byTurn.push({
      turn: k,
      total: all.length,
      finished: fin.length,
      ttftMs: dist(fin.map((r) => r.tokenTimesMs[0] - r.arrivalMs)),
      promptTokens: fin.length > 0 ? promptSum / fin.length : null,
      newTokens: fin.length > 0 ? mean(fin.map((r) => r.session?.newTokens ?? 0)) : null,
      computedTokens: hitsKnown && fin.length > 0 ? (promptSum - hitSum) / fin.length : null,
      computedOverNewMax: hitsKnown && ratios.length > 0 ? Math.max(...ratios) : null,
      hitRate: hitsKnown && promptSum > 0 ? hitSum / promptSum : null,
      toolWaitMs: waits.length > 0 ? mean(waits) : null,
    });
  }
  const avg = (xs: number[]) => (xs.length > 0 ? mean(xs) : 0);
  return {
    sessions: bySession.size,
    completed: durations.length,
    turns: turns.length,
    durationMs: dist(durations),
    split:
      durations.length > 0
        ? {
            queueMs: avg(parts.queueMs),
            prefillMs: avg(parts.prefillMs),
            decodeMs: avg(parts.decodeMs),
            toolWaitMs: avg(parts.toolWaitMs),
          }
        : null,
    byTurn,
  };
}
