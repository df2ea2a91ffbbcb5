import { escapeMarkdown, fixed, markdownDelimiter, markdownRow } from '../../markdown.ts';
import type { ServeRun } from './serve-result.ts';

/**
 * The agent sessions' tables of a load test: where a session's time went (queue, prefill, decode,
 * tool wait: means per completed session, adding up to its mean duration), and by turn index the
 * TTFT, the prompt (the whole history), the tokens the turn added and those the engine computed.
 * Without a prefix cache a turn computes its whole history; with it, about the new tokens alone.
 */
type TurnSummary = NonNullable<ServeRun['sessions']>['byTurn'][number];

/** One turn index's cells after the run's label: turn, n, TTFT p50 / p99, prompt, new, computed, computed ÷ new, cache hit, tool wait (the report and the page). */
export function turnCells(t: TurnSummary): string[] {
  const n = (x: number | null, digits = 0) => (x === null ? '–' : fixed(x, digits));
  return [
    String(t.turn),
    `${t.finished}${t.finished < t.total ? ` of ${t.total}` : ''}`,
    t.ttftMs ? `${fixed(t.ttftMs.p50, 1)} / ${fixed(t.ttftMs.p99, 1)}` : '–',
    n(t.promptTokens),
    n(t.newTokens),
    n(t.computedTokens),
    n(t.computedOverNewMax, 2),
    t.hitRate === null ? '–' : `${fixed(t.hitRate * 100, 0)}%`,
    n(t.toolWaitMs),
  ];
}

export function sessionTables(runs: readonly ServeRun[]): string[] {
  const withSessions = runs.filter((r) => r.sessions);
  if (withSessions.length === 0) return [];
  const out: string[] = [
    '**Agent sessions: where a session’s time goes** (ms, means per session whose every turn finished; tool wait as measured: a turn’s arrival less the previous turn’s finish)',
    '',
    markdownRow([
      'run',
      'sessions done',
      'turns',
      'duration p50 / p99',
      'queue',
      'prefill',
      'decode',
      'tool wait',
    ]),
    markdownDelimiter('lrrrrrrr'),
  ];
  for (const r of withSessions) {
    const s = r.sessions;
    if (!s) continue;
    const sp = s.split;
    const d = s.durationMs;
    out.push(
      markdownRow([
        escapeMarkdown(r.label),
        `${s.completed} of ${s.sessions}`,
        String(s.turns),
        d ? `${fixed(d.p50, 0)} / ${fixed(d.p99, 0)}` : '–',
        sp ? fixed(sp.queueMs, 1) : '–',
        sp ? fixed(sp.prefillMs, 1) : '–',
        sp ? fixed(sp.decodeMs, 1) : '–',
        sp ? fixed(sp.toolWaitMs, 0) : '–',
      ]),
    );
  }
  out.push(
    '',
    '**By turn** (finished turns; prompt = the whole history sent; new = tool result + user message; computed = prompt less the prefix-cache hit, mean and the largest ÷ new)',
    '',
    markdownRow([
      'run',
      'turn',
      'n',
      'TTFT p50 / p99 ms',
      'prompt',
      'new',
      'computed',
      'computed ÷ new, max',
      'cache hit',
      'tool wait ms',
    ]),
    markdownDelimiter('lrrrrrrrrr'),
  );
  for (const r of withSessions) {
    for (const t of r.sessions?.byTurn ?? [])
      out.push(markdownRow([escapeMarkdown(r.label), ...turnCells(t)]));
  }
  const stood = withSessions.filter((r) => (r.target?.standIns ?? 0) > 0);
  for (const r of stood) {
    out.push(
      '',
      `- ${escapeMarkdown(r.label)}: the server streamed ${r.target?.standIns} answers as text without token ids, so the next turns carried as many seeded stand-in tokens in their place: the history sent is not what the server said, and its cache cannot hold the latest answer (it generated other tokens), only what earlier prompts sent.`,
    );
  }
  const unknown = withSessions.filter(
    (r) => r.target?.kind === 'http' && r.sessions?.byTurn.every((t) => t.hitRate === null),
  );
  for (const r of unknown) {
    out.push(
      '',
      `- ${escapeMarkdown(r.label)}: the server reports no cached prompt tokens, so computed tokens and the cache hit are not known (–).`,
    );
  }
  return out;
}
