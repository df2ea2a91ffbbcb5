import { SpecError } from '../errors.ts';
import { mulberry32 } from '../random.ts';
import type { SessionShape, ToolWaitDist } from '../spec/workloads/serve-sessions.ts';
import {
  type Arrival,
  drawLength,
  normal,
  promptTokenIds,
  type SessionTurn,
  sampleGamma,
  subSeed,
  type TraceRequest,
} from './traffic.ts';

/**
 * Agent traffic: multi-turn sessions. A session sends a prompt, gets its answer, waits for a tool
 * (the tool wait), then comes back with its whole history: turn k's prompt is turn k − 1's prompt,
 * its generated tokens, a tool result and a new user message. The engine keeps nothing between
 * turns, as an OpenAI-compatible server does not; what saves the re-prefill is the prefix cache,
 * which holds the previous turn's pages if nothing evicted them during the wait.
 *
 * The trace is generated up front (lengths, waits, the first turns' arrivals); what only the run
 * can know is when a later turn arrives (its previous turn's finish plus its tool wait) and the
 * generated tokens its prompt repeats, so both drivers (in-process and HTTP) ask a SessionBook for
 * a turn's prompt when the turn before it finishes.
 */

const SESSION_STREAM = 5;
const SESSION_ARRIVAL_STREAM = 6;
const STAND_IN_STREAM = 7;

function drawWait(d: ToolWaitDist, rng: () => number): number {
  const u = rng();
  const z = normal(rng);
  if (d.kind === 'fixed') return d.ms;
  if (d.kind === 'uniform') return d.minMs + u * (d.maxMs - d.minMs);
  return d.medianMs * Math.exp(d.sigma * z);
}

export interface SessionTraceOptions {
  seed: number;
  shape: SessionShape;
  /** When sessions start (their first turns): Poisson at a rate of sessions/s, or all at t = 0. */
  arrival: Exclude<Arrival, { kind: 'concurrency' }>;
  /** A shared system prompt at the head of the first turn of a `share` of the sessions. */
  prefix?: { tokens: number; share: number };
}

/**
 * The session trace: every turn of every session as a request, session by session, turn by turn
 * (ids in that order). A first turn's arrivalMs is its session's start; a later turn's is the same
 * start, a placeholder: it arrives `toolWaitMs` after the turn before it finishes. promptTokens of
 * a later turn assumes every earlier answer was as long as asked (the run's record keeps the true
 * length). Each session takes the same number of draws whatever the options, so the same seed
 * gives the same sessions at any rate.
 */
export function generateSessionTrace(o: SessionTraceOptions): TraceRequest[] {
  const s = o.shape;
  if (!Number.isInteger(s.sessions) || s.sessions < 1)
    throw new SpecError(`sessions must be a whole number ≥ 1, got ${s.sessions}`);
  const starts = mulberry32(subSeed(o.seed, SESSION_ARRIVAL_STREAM));
  const a = o.arrival;
  const shape = a.kind === 'poisson' ? (a.burstiness ?? 1) : 1;
  const scaleMs = a.kind === 'poisson' ? 1000 / (a.rateRps * shape) : 0;
  const trace: TraceRequest[] = [];
  let t = 0;
  for (let sid = 0; sid < s.sessions; sid++) {
    if (sid > 0 && a.kind === 'poisson') t += sampleGamma(starts, shape) * scaleMs;
    const rng = mulberry32(subSeed(o.seed, SESSION_STREAM, sid));
    const turns = s.turns.min + Math.floor(rng() * (s.turns.max - s.turns.min + 1));
    const withPrefix = o.prefix !== undefined && rng() < o.prefix.share;
    let context = 0;
    for (let turn = 1; turn <= turns; turn++) {
      // Six draws a turn (three lengths, a wait), whatever is used, so lengths do not shift with the options.
      const [uUser, uTool, uOut] = [rng(), rng(), rng()];
      const wait = drawWait(s.toolWait, rng);
      const toolWaitMs = turn === 1 ? 0 : wait;
      const user = drawLength(s.userTokens, uUser);
      const tool = turn === 1 ? 0 : drawLength(s.toolTokens, uTool);
      const prefixTokens = turn === 1 && withPrefix && o.prefix ? o.prefix.tokens : 0;
      const newTokens = tool + user;
      const promptTokens = context + prefixTokens + newTokens;
      const outputTokens = drawLength(s.outputTokens, uOut);
      const session: SessionTurn = { id: sid, turn, toolWaitMs, newTokens };
      trace.push({
        id: trace.length,
        arrivalMs: t,
        promptTokens,
        outputTokens,
        // The shared system prompt is the head of every turn of the session.
        prefixId: withPrefix ? 0 : null,
        prefixTokens: withPrefix && o.prefix ? o.prefix.tokens : 0,
        class: 'agent',
        priority: 0,
        session,
      });
      context = promptTokens + outputTokens;
    }
  }
  return trace;
}

/**
 * A turn's prompt at run time: the previous turn's prompt, what it generated, then this turn's new
 * tokens (tool result and user message) from the request's own stream. A first turn's prompt is
 * promptTokenIds's (the shared prefix, then its own tokens).
 */
export function turnPrompt(
  req: TraceRequest,
  previous: { prompt: readonly number[]; generated: readonly number[] } | null,
  vocab: number,
  seed: number,
): number[] {
  if (!req.session || req.session.turn === 1 || previous === null) return promptTokenIds(req, vocab, seed);
  const own = promptTokenIds(
    { ...req, prefixId: null, prefixTokens: 0, promptTokens: req.session.newTokens },
    vocab,
    seed,
  );
  return [...previous.prompt, ...previous.generated, ...own];
}

/**
 * The run-time side of a session trace, for a driver: which turn follows a finished one, its
 * prompt, and which turns will never be sent because an earlier one failed.
 */
export class SessionBook {
  private readonly nextOf = new Map<number, TraceRequest>();
  private readonly prompts = new Map<number, number[]>();

  constructor(
    trace: readonly TraceRequest[],
    private readonly vocab: number,
    private readonly seed: number,
  ) {
    const bySession = new Map<number, TraceRequest[]>();
    for (const r of trace) {
      if (!r.session) continue;
      const list = bySession.get(r.session.id) ?? [];
      list.push(r);
      bySession.set(r.session.id, list);
    }
    for (const list of bySession.values()) {
      list.sort((a, b) => (a.session?.turn ?? 0) - (b.session?.turn ?? 0));
      for (let i = 0; i + 1 < list.length; i++) this.nextOf.set(list[i].id, list[i + 1]);
    }
  }

  /** Whether `req` waits for an earlier turn (it is not sent at its trace arrival). */
  static isFollowUp(req: TraceRequest): boolean {
    return req.session !== undefined && req.session.turn > 1;
  }

  /** The prompt a first turn (or a request outside any session) is sent with. */
  firstPrompt(req: TraceRequest): number[] {
    const p = turnPrompt(req, null, this.vocab, this.seed);
    this.prompts.set(req.id, p);
    return p;
  }

  /** Turn `id` finished having generated `generated`: the next turn and its prompt, or null after the last. */
  finished(id: number, generated: readonly number[]): { req: TraceRequest; prompt: number[] } | null {
    const next = this.nextOf.get(id);
    const prompt = this.prompts.get(id);
    if (!next || !prompt) return null;
    const p = turnPrompt(next, { prompt, generated }, this.vocab, this.seed);
    this.prompts.set(next.id, p);
    return { req: next, prompt: p };
  }

  /** The turns after `id` in its session (none will be sent once `id` failed). */
  abandonedAfter(id: number): TraceRequest[] {
    const out: TraceRequest[] = [];
    for (let n = this.nextOf.get(id); n; n = this.nextOf.get(n.id)) out.push(n);
    return out;
  }

  /**
   * `n` tokens to stand in for request `id`'s answer where a server streamed text without token
   * ids: seeded, so two runs send the same history.
   */
  standIn(id: number, n: number): number[] {
    const rng = mulberry32(subSeed(this.seed, STAND_IN_STREAM, id));
    return Array.from({ length: n }, () => 1 + Math.floor(rng() * (this.vocab - 1)));
  }
}
