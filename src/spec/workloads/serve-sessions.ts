import { SpecError } from '../../errors.ts';
import type { ToolWait } from './serve-settings.ts';

/**
 * Agent sessions' shape (`--sessions N --turns A..B --tool-wait DIST`): lengths scaled to the
 * model's context, the longest a session can grow, and the flags' parsers. The traffic itself
 * (src/serve/sessions.ts) is generated in the workload; what is here is what the CLI and the spec
 * check before any model is built.
 */

/** Milliseconds a session waits on its tool between a turn's answer and the next turn. */
export type ToolWaitDist = ToolWait;

/** A length uniform over the integers min…max (both included). */
export interface TokenRange {
  kind: 'uniform';
  min: number;
  max: number;
}

export interface SessionShape {
  sessions: number;
  /** Turns per session, uniform over min…max. */
  turns: { min: number; max: number };
  toolWait: ToolWaitDist;
  /** Each turn's user message. */
  userTokens: TokenRange;
  /** The tool's result, added before the user message from the second turn on. */
  toolTokens: TokenRange;
  /** Tokens generated per turn. */
  outputTokens: TokenRange;
}

/** --turns and --tool-wait when --sessions is given alone. */
export const SESSION_DEFAULTS = { turns: '3..6', toolWait: 'lognormal:400' } as const;

/** The σ of `lognormal:MEDIAN` when none is given. */
export const LOGNORMAL_SIGMA = 1;

/**
 * Agent sessions scaled to maxSeqLen (L), as the default mix is: a user message of 16…L/32 tokens,
 * a tool result of L/16…L/12 (tool output is the bulk of what a turn adds), an answer of 8…L/64.
 * A turn after the first adds at least 16 + L/16 new tokens, several KV pages at any page size,
 * so a cached history leaves little but the new tokens to compute.
 */
export function sessionShape(
  maxSeqLen: number,
  sessions: number,
  turns: { min: number; max: number },
  toolWait: ToolWaitDist,
): SessionShape {
  const L = maxSeqLen;
  const f = (d: number) => Math.max(1, Math.floor(L / d));
  const uni = (lo: number, hi: number): TokenRange => ({ kind: 'uniform', min: Math.min(lo, hi), max: hi });
  return {
    sessions,
    turns,
    toolWait,
    userTokens: uni(16, f(32)),
    toolTokens: uni(f(16), f(12)),
    outputTokens: uni(8, f(64)),
  };
}

function maxOf(d: TokenRange): number {
  return d.max;
}

/** The longest a session can grow (its last turn's prompt and answer), with a shared prefix of `prefixTokens`. */
export function longestSession(s: SessionShape, prefixTokens: number): number {
  const n = s.turns.max;
  return prefixTokens + n * (maxOf(s.userTokens) + maxOf(s.outputTokens)) + (n - 1) * maxOf(s.toolTokens);
}

/** The error for a session shape the model's context cannot hold, naming the flag; null when it fits. */
export function sessionContextError(s: SessionShape, prefixTokens: number, maxSeqLen: number): string | null {
  const need = longestSession(s, prefixTokens);
  if (need <= maxSeqLen) return null;
  return `--turns ${s.turns.min}..${s.turns.max}: a session of ${s.turns.max} turns can reach ${need} tokens (${prefixTokens > 0 ? `a ${prefixTokens}-token prefix, ` : ''}each turn up to ${maxOf(s.userTokens)} user + ${maxOf(s.outputTokens)} generated tokens, each tool result up to ${maxOf(s.toolTokens)}), past the model's context of ${maxSeqLen}; ask for fewer turns`;
}

/** Parses `fixed:MS`, `uniform:A..B` or `lognormal:MEDIAN[:SIGMA]` (ms); throws SpecError naming --tool-wait. */
export function parseToolWait(text: string): ToolWaitDist {
  const bad = (why: string) =>
    new SpecError(
      `--tool-wait ${text}: ${why}; give fixed:MS, uniform:A..B or lognormal:MEDIAN[:SIGMA] (milliseconds)`,
    );
  const [kind, ...rest] = text.split(':');
  const num = (s: string | undefined, what: string) => {
    const v = Number(s);
    if (s === undefined || s.trim() === '' || !Number.isFinite(v) || v < 0)
      throw bad(`${what} must be a number ≥ 0`);
    return v;
  };
  if (kind === 'fixed' && rest.length === 1) return { kind: 'fixed', ms: num(rest[0], 'the wait') };
  if (kind === 'uniform' && rest.length === 1) {
    const [a, b] = rest[0].split('..');
    const minMs = num(a, 'A');
    const maxMs = num(b, 'B');
    if (maxMs < minMs) throw bad('B must be ≥ A');
    return { kind: 'uniform', minMs, maxMs };
  }
  if (kind === 'lognormal' && (rest.length === 1 || rest.length === 2)) {
    const medianMs = num(rest[0], 'the median');
    if (medianMs <= 0) throw bad('the median must be > 0');
    const sigma = rest.length === 2 ? num(rest[1], 'sigma') : LOGNORMAL_SIGMA;
    return { kind: 'lognormal', medianMs, sigma };
  }
  throw bad('unknown form');
}

/** Parses `A..B` (or one number) as turns per session, each ≥ 1; throws SpecError naming --turns. */
export function parseTurns(text: string): { min: number; max: number } {
  const parts = text.split('..');
  const nums = parts.map((p) => Number(p));
  if (
    parts.length > 2 ||
    nums.some((n) => !Number.isInteger(n) || n < 1 || n > 64) ||
    parts.some((p) => p.trim() === '')
  )
    throw new SpecError(`--turns ${text}: give A..B or N, whole numbers in 1…64`);
  const [min, max] = [nums[0], nums[nums.length - 1]];
  if (max < min) throw new SpecError(`--turns ${text}: B must be ≥ A`);
  return { min, max };
}

export function describeToolWait(d: ToolWaitDist): string {
  if (d.kind === 'fixed') return `fixed ${d.ms} ms`;
  if (d.kind === 'uniform') return `uniform ${d.minMs}…${d.maxMs} ms`;
  return `lognormal, median ${d.medianMs} ms, σ ${d.sigma}`;
}
