import { z } from 'zod';
import { SpecError } from '../errors.ts';
import { fmix32, mulberry32 } from '../random.ts';

/**
 * The serve workload's traffic: who arrives when, asking for how much. Pure and seeded, so a trace
 * is the same in Node and in the browser, can be written to JSONL, edited, and replayed.
 *
 * Two independent random streams come from the seed: one for arrival times, one for what each
 * request asks (class, lengths, prefix, priority). Changing the rate or the burstiness therefore
 * replays the same requests at other times, which is what a load sweep compares. Each request takes
 * exactly five draws from the content stream whatever the options, so turning the prefix or the
 * priority share on does not reshuffle the classes and lengths either.
 */

/** Prompt or output length in tokens: one value, or uniform over the integers min…max (both included). */
export type LengthDist = { kind: 'fixed'; tokens: number } | { kind: 'uniform'; min: number; max: number };

/** A kind of request and its share of the traffic (shares sum to 1). */
export interface RequestClass {
  name: string;
  share: number;
  /** The whole prompt, shared prefix included. */
  prompt: LengthDist;
  output: LengthDist;
}

export type Arrival =
  /**
   * Open loop. Inter-arrival times are gamma-distributed with shape = burstiness and mean 1/rate, as
   * vLLM's `--burstiness`: 1 is a Poisson process (exponential gaps, CV 1); below 1 burstier (CV =
   * 1/√shape), above 1 more regular. The first request arrives at t = 0, as in vLLM's client.
   */
  | { kind: 'poisson'; rateRps: number; burstiness?: number }
  /** Closed loop: arrivals are decided at run time; the trace gives arrivalMs 0 and the driver keeps C in flight. */
  | { kind: 'concurrency'; concurrency: number }
  /** vLLM's `--request-rate inf`: every request at t = 0. */
  | { kind: 'all-at-once' };

export interface TrafficOptions {
  /** An integer; only its low 32 bits matter (mulberry32). */
  seed: number;
  requests: number;
  /** Stop generating arrivals after this many seconds (arrivals at exactly durationS are kept). */
  durationS?: number;
  arrival: Arrival;
  classes: RequestClass[];
  /**
   * A shared prefix (a system prompt) of `tokens` tokens on a `share` of the requests. It is the head
   * of the class's prompt, not added to it, so the classes' lengths (and `fitsContext` on them)
   * stay true; it is cut to promptTokens − 1 where the prompt is shorter, so every prompt keeps at
   * least one token of its own. One prefix, id 0.
   */
  prefix?: { tokens: number; share: number };
  /** Fraction of requests with priority 1 (high); the others get 0. Higher is more urgent (vLLM's is the other way). */
  priorityShare?: number;
}

export interface TraceRequest {
  /** 0…n−1 in arrival order for a generated trace; file order for an imported one. */
  id: number;
  arrivalMs: number;
  /** Includes prefixTokens. */
  promptTokens: number;
  outputTokens: number;
  /** null when the request shares no prefix (then prefixTokens is 0). */
  prefixId: number | null;
  /** ≤ promptTokens − 1. */
  prefixTokens: number;
  class: string;
  priority: number;
  /** A turn of an agent session (sessions.ts); absent for a single request. */
  session?: SessionTurn;
}

/** Where a request sits in an agent session (sessions.ts). */
export interface SessionTurn {
  /** The session, 0…sessions − 1. */
  id: number;
  /** 1-based. */
  turn: number;
  /** The tool wait before this turn (0 for the first): it arrives this long after the previous turn finishes. */
  toolWaitMs: number;
  /** Tokens the turn adds to the history: the tool result and the user message (the first turn: its own prompt, the shared prefix left out). */
  newTokens: number;
}

// ---------------------------------------------------------------------------------------------
// Mixes

/** Integer n/d, at least 1 (small models would otherwise get 0-token prompts). */
function frac(maxSeqLen: number, d: number): number {
  return Math.max(1, Math.floor(maxSeqLen / d));
}

/** uniform lo…hi with lo lowered to hi where a small maxSeqLen would cross them. */
function uniform(lo: number, hi: number): LengthDist {
  return { kind: 'uniform', min: Math.min(lo, hi), max: hi };
}

function checkMaxSeqLen(maxSeqLen: number): void {
  if (!Number.isInteger(maxSeqLen) || maxSeqLen < 2) {
    throw new SpecError(`maxSeqLen must be an integer ≥ 2 (a prompt and an output token), got ${maxSeqLen}`);
  }
}

/**
 * The default mix, shaped like chat traffic: mostly short Q&A, some retrieval-augmented requests
 * (long context, short answer: prefill-heavy), a few long generations (decode-heavy). Lengths are
 * fractions of maxSeqLen (L), floored, at least 1, so the mix means the same on a 1k and a 32k model:
 * - short 60%: prompt 8…L/16, output 8…L/16;
 * - rag 25%: prompt L/4…L/2, output 8…L/32;
 * - long-gen 15%: prompt 8…L/16, output L/8…L/4.
 * The worst case of each class (rag: L/2 + L/32) stays within L for every L ≥ 2, so no request of
 * the mix is ever refused for length.
 */
export function defaultMix(maxSeqLen: number): RequestClass[] {
  checkMaxSeqLen(maxSeqLen);
  const L = maxSeqLen;
  return [
    { name: 'short', share: 0.6, prompt: uniform(8, frac(L, 16)), output: uniform(8, frac(L, 16)) },
    { name: 'rag', share: 0.25, prompt: uniform(frac(L, 4), frac(L, 2)), output: uniform(8, frac(L, 32)) },
    {
      name: 'long-gen',
      share: 0.15,
      prompt: uniform(8, frac(L, 16)),
      output: uniform(frac(L, 8), frac(L, 4)),
    },
  ];
}

/**
 * The request-type matrix: short or long prompt × short or long output, a quarter each. Fixed
 * lengths, so each cell is one shape: short = L/16, long prompt = L/2, long output = L/4 (floored,
 * at least 1); the largest cell, L/2 + L/4, fits in L. With L = 2048: 128 or 1024 in, 128 or 512 out.
 */
export function requestTypeMatrix(maxSeqLen: number): RequestClass[] {
  checkMaxSeqLen(maxSeqLen);
  const L = maxSeqLen;
  const fixed = (tokens: number): LengthDist => ({ kind: 'fixed', tokens });
  const shortIn = fixed(frac(L, 16));
  const longIn = fixed(frac(L, 2));
  const shortOut = fixed(frac(L, 16));
  const longOut = fixed(frac(L, 4));
  return [
    { name: 'short-in/short-out', share: 0.25, prompt: shortIn, output: shortOut },
    { name: 'short-in/long-out', share: 0.25, prompt: shortIn, output: longOut },
    { name: 'long-in/short-out', share: 0.25, prompt: longIn, output: shortOut },
    { name: 'long-in/long-out', share: 0.25, prompt: longIn, output: longOut },
  ];
}

// ---------------------------------------------------------------------------------------------
// Validation

const count = z.number().int('must be an integer').min(1, 'must be an integer ≥ 1');
const fraction = z.number().min(0, 'must be in [0, 1]').max(1, 'must be in [0, 1]');

const LengthDistSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('fixed'), tokens: count }),
  z
    .object({ kind: z.literal('uniform'), min: count, max: count })
    .refine((d) => d.min <= d.max, { message: 'must be ≥ min', path: ['max'] }),
]);

const ArrivalSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('poisson'),
    rateRps: z.number().positive('must be > 0'),
    burstiness: z.number().positive('must be > 0').optional(),
  }),
  z.object({ kind: z.literal('concurrency'), concurrency: count }),
  z.object({ kind: z.literal('all-at-once') }),
]);

const RequestClassSchema = z.object({
  name: z.string().min(1, 'must not be empty').max(200),
  share: fraction,
  prompt: LengthDistSchema,
  output: LengthDistSchema,
});

/** How far the shares may sum from 1 (they are often written as decimals). */
const SHARE_TOLERANCE = 1e-6;

const TrafficOptionsSchema = z
  .object({
    seed: z.number().int('must be an integer'),
    requests: count,
    durationS: z.number().positive('must be > 0').optional(),
    arrival: ArrivalSchema,
    classes: z.array(RequestClassSchema).min(1, 'needs at least one class'),
    prefix: z.object({ tokens: count, share: fraction }).optional(),
    priorityShare: fraction.optional(),
  })
  .superRefine((o, ctx) => {
    const sum = o.classes.reduce((a, c) => a + c.share, 0);
    if (Math.abs(sum - 1) > SHARE_TOLERANCE) {
      ctx.addIssue({ code: 'custom', path: ['classes'], message: `shares sum to ${sum}, not 1` });
    }
    const seen = new Set<string>();
    o.classes.forEach((c, i) => {
      if (seen.has(c.name)) {
        ctx.addIssue({ code: 'custom', path: ['classes', i, 'name'], message: `"${c.name}" is used twice` });
      }
      seen.add(c.name);
    });
  });

/** `classes[1].prompt.min`, as a person would write the field. */
function fieldName(path: readonly PropertyKey[]): string {
  let s = '';
  for (const p of path) s += typeof p === 'number' ? `[${p}]` : s === '' ? String(p) : `.${String(p)}`;
  return s || '(root)';
}

function issuesText(issues: readonly z.core.$ZodIssue[]): string {
  return issues.map((i) => `${fieldName(i.path)}: ${i.message}`).join('; ');
}

function validate(o: TrafficOptions): void {
  const r = TrafficOptionsSchema.safeParse(o);
  if (!r.success) throw new SpecError(`Invalid traffic: ${issuesText(r.error.issues)}`);
}

// ---------------------------------------------------------------------------------------------
// Sampling

/** A seed for one stream of one user seed, so the streams do not overlap or track each other. */
export function subSeed(...parts: number[]): number {
  let h = 0x811c9dc5;
  for (const p of parts) h = fmix32(h ^ fmix32(p));
  return h;
}

const ARRIVAL_STREAM = 1;
const CONTENT_STREAM = 2;
const PREFIX_STREAM = 3;
const REQUEST_STREAM = 4;

/** Standard normal by Box–Muller (one of the pair; the other is dropped to keep the stream simple). */
export function normal(rng: () => number): number {
  const u1 = 1 - rng(); // (0, 1]: log is finite
  const u2 = rng();
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
}

/**
 * Gamma(shape, 1) by Marsaglia and Tsang (2000): a squeezed rejection from a transformed normal,
 * accepting about 96% of tries or more. Their method needs shape ≥ 1; below it, Gamma(shape) =
 * Gamma(shape + 1) · U^(1/shape) (their boost).
 */
export function sampleGamma(rng: () => number, shape: number): number {
  if (shape < 1) return sampleGamma(rng, shape + 1) * (1 - rng()) ** (1 / shape);
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    let x: number;
    let v: number;
    do {
      x = normal(rng);
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const u = 1 - rng(); // (0, 1]
    // The squeeze accepts most draws without a log; the exact test takes the rest.
    if (u < 1 - 0.0331 * x ** 4) return d * v;
    if (Math.log(u) < 0.5 * x * x + d * (1 - v + Math.log(v))) return d * v;
  }
}

export function drawLength(d: LengthDist, u: number): number {
  return d.kind === 'fixed' ? d.tokens : d.min + Math.floor(u * (d.max - d.min + 1));
}

function maxLength(d: LengthDist): number {
  return d.kind === 'fixed' ? d.tokens : d.max;
}

/** The class whose cumulative share first exceeds u; the last class with a share catches rounding. */
function pickClass(classes: readonly RequestClass[], u: number): RequestClass {
  let cum = 0;
  for (const c of classes) {
    cum += c.share;
    if (c.share > 0 && u < cum) return c;
  }
  for (let i = classes.length - 1; i > 0; i--) if (classes[i].share > 0) return classes[i];
  return classes[0];
}

/**
 * The trace: at most `requests` requests (fewer when durationS cuts the arrivals), sorted by arrival,
 * ids 0…n−1 in that order. The same options give the same trace.
 */
export function generateTrace(o: TrafficOptions): TraceRequest[] {
  validate(o);
  const arrivals = mulberry32(subSeed(o.seed, ARRIVAL_STREAM));
  const content = mulberry32(subSeed(o.seed, CONTENT_STREAM));
  const endMs = o.durationS === undefined ? Number.POSITIVE_INFINITY : o.durationS * 1000;
  const a = o.arrival;
  const shape = a.kind === 'poisson' ? (a.burstiness ?? 1) : 1;
  // Gamma(shape, scale) has mean shape · scale; the scale that makes the mean gap 1/rate, in ms.
  const scaleMs = a.kind === 'poisson' ? 1000 / (a.rateRps * shape) : 0;

  const trace: TraceRequest[] = [];
  let t = 0;
  for (let id = 0; id < o.requests; id++) {
    if (id > 0 && a.kind === 'poisson') t += sampleGamma(arrivals, shape) * scaleMs;
    if (t > endMs) break;
    const [uClass, uPrompt, uOutput, uPrefix, uPriority] = [0, 0, 0, 0, 0].map(() => content());
    const c = pickClass(o.classes, uClass);
    const promptTokens = drawLength(c.prompt, uPrompt);
    const prefixTokens =
      o.prefix && uPrefix < o.prefix.share ? Math.min(o.prefix.tokens, promptTokens - 1) : 0;
    trace.push({
      id,
      arrivalMs: t,
      promptTokens,
      outputTokens: drawLength(c.output, uOutput),
      prefixId: prefixTokens > 0 ? 0 : null,
      prefixTokens,
      class: c.name,
      priority: uPriority < (o.priorityShare ?? 0) ? 1 : 0,
    });
  }
  return trace;
}

/** The first class or request that cannot fit in the model's context, for the CLI to name. */
export interface ContextOverflow {
  kind: 'class' | 'request';
  /** The class's name, or the request's class. */
  class: string;
  /** The request's id; null for a class. */
  id: number | null;
  /** Prompt + output tokens (a class's largest). */
  tokens: number;
  message: string;
}

/**
 * The first class (at its largest lengths) or request whose prompt + output exceeds maxSeqLen;
 * null when everything fits.
 */
export function fitsContext(
  items: readonly RequestClass[] | readonly TraceRequest[],
  maxSeqLen: number,
): ContextOverflow | null {
  for (const item of items) {
    if ('share' in item) {
      const tokens = maxLength(item.prompt) + maxLength(item.output);
      if (tokens > maxSeqLen) {
        return {
          kind: 'class',
          class: item.name,
          id: null,
          tokens,
          message: `class "${item.name}" can ask for ${tokens} tokens (prompt + output), over the model's maxSeqLen ${maxSeqLen}`,
        };
      }
    } else {
      const tokens = item.promptTokens + item.outputTokens;
      if (tokens > maxSeqLen) {
        return {
          kind: 'request',
          class: item.class,
          id: item.id,
          tokens,
          message: `request ${item.id} (class "${item.class}") needs ${tokens} tokens (prompt ${item.promptTokens} + output ${item.outputTokens}), over the model's maxSeqLen ${maxSeqLen}`,
        };
      }
    }
  }
  return null;
}

/**
 * A request's prompt as token ids in 1…vocab−1 (0 is left out: it is often a special token in real
 * vocabularies). The first prefixTokens come from the prefix's own stream, so every request sharing
 * a prefixId starts with the same ids whatever its length; the rest come from the request's stream.
 */
export function promptTokenIds(req: TraceRequest, vocab: number, seed: number): number[] {
  if (!Number.isInteger(vocab) || vocab < 2)
    throw new SpecError(`vocab must be an integer ≥ 2, got ${vocab}`);
  if (!Number.isInteger(seed)) throw new SpecError(`seed must be an integer, got ${seed}`);
  const ids = new Array<number>(req.promptTokens);
  const draw = (rng: () => number) => 1 + Math.floor(rng() * (vocab - 1));
  if (req.prefixId !== null && req.prefixTokens > 0) {
    const rng = mulberry32(subSeed(seed, PREFIX_STREAM, req.prefixId));
    for (let i = 0; i < req.prefixTokens; i++) ids[i] = draw(rng);
  }
  const rng = mulberry32(subSeed(seed, REQUEST_STREAM, req.id));
  for (let i = req.prefixTokens; i < req.promptTokens; i++) ids[i] = draw(rng);
  return ids;
}

// ---------------------------------------------------------------------------------------------
// JSONL

/**
 * One request per line, with the field names of common trace formats: arrival_s (seconds from the
 * start, rounded to the nanosecond), prompt_len (prefix included), output_len, prefix_id (null for
 * none), class, priority; and prefix_len, our extra: how many of the prompt's tokens are the prefix
 * (required when prefix_id is set, since other tools' traces do not say). A turn of an agent session
 * adds session_id, turn, tool_wait_ms (the wait before it) and new_len (the tokens it adds to the
 * history). A later turn's arrival_s is not used on replay (a generated trace has its session's
 * start there, a run's --trace-out the time it arrived): it arrives tool_wait_ms after the turn
 * before it finishes.
 */
export function traceToJsonl(trace: readonly TraceRequest[]): string {
  return trace
    .map((r) =>
      JSON.stringify({
        arrival_s: Number((r.arrivalMs / 1000).toFixed(9)),
        prompt_len: r.promptTokens,
        output_len: r.outputTokens,
        prefix_id: r.prefixId,
        class: r.class,
        priority: r.priority,
        prefix_len: r.prefixTokens,
        ...(r.session
          ? {
              session_id: r.session.id,
              turn: r.session.turn,
              tool_wait_ms: Number(r.session.toolWaitMs.toFixed(3)),
              new_len: r.session.newTokens,
            }
          : {}),
      }),
    )
    .map((line) => `${line}\n`)
    .join('');
}

const TraceLineSchema = z
  .object({
    arrival_s: z.number().min(0, 'must be a finite number ≥ 0'),
    prompt_len: count,
    output_len: count,
    prefix_id: z.number().int('must be an integer or null').min(0, 'must be ≥ 0 or null').nullable(),
    prefix_len: z.number().int('must be an integer').min(0, 'must be ≥ 0').optional(),
    class: z.string().min(1, 'must not be empty').max(200),
    priority: z.number().int('must be an integer'),
    session_id: z.number().int('must be an integer').min(0, 'must be ≥ 0').optional(),
    turn: z.number().int('must be an integer').min(1, 'must be ≥ 1').optional(),
    tool_wait_ms: z.number().min(0, 'must be ≥ 0').optional(),
    new_len: count.optional(),
  })
  .superRefine((l, ctx) => {
    const sessionFields = [l.session_id, l.turn, l.tool_wait_ms, l.new_len].filter((v) => v !== undefined);
    if (sessionFields.length !== 0 && sessionFields.length !== 4)
      ctx.addIssue({
        code: 'custom',
        path: ['session_id'],
        message: 'a session turn needs all of session_id, turn, tool_wait_ms and new_len',
      });
    if (l.new_len !== undefined && l.new_len > l.prompt_len)
      ctx.addIssue({ code: 'custom', path: ['new_len'], message: 'must be ≤ prompt_len' });
    const path = ['prefix_len'];
    if (l.prefix_id === null) {
      if ((l.prefix_len ?? 0) !== 0)
        ctx.addIssue({ code: 'custom', path, message: 'must be 0 without a prefix_id' });
    } else if (l.prefix_len === undefined || l.prefix_len < 1) {
      ctx.addIssue({ code: 'custom', path, message: 'must be ≥ 1 when prefix_id is set' });
    } else if (l.prefix_len > l.prompt_len - 1) {
      ctx.addIssue({
        code: 'custom',
        path,
        message: 'must be ≤ prompt_len − 1 (a prompt keeps one token of its own)',
      });
    }
  });

/** A session's turns must be 1…n once each, each later one at least as long as the history before it. */
function checkSessions(trace: readonly TraceRequest[]): void {
  const bySession = new Map<number, TraceRequest[]>();
  for (const r of trace) {
    if (!r.session) continue;
    bySession.set(r.session.id, [...(bySession.get(r.session.id) ?? []), r]);
  }
  for (const [sid, turns] of bySession) {
    const sorted = [...turns].sort((a, b) => (a.session?.turn ?? 0) - (b.session?.turn ?? 0));
    sorted.forEach((r, i) => {
      if (r.session?.turn !== i + 1)
        throw new SpecError(
          `trace: session ${sid} has turns ${sorted.map((q) => q.session?.turn).join(', ')}, not 1…${sorted.length} once each`,
        );
    });
  }
}

/**
 * Reads a trace written by traceToJsonl (or by hand, or by another tool with these field names).
 * Blank lines are skipped; unknown fields are ignored; requests are sorted by arrival (stably) and
 * keep their file order as ids. Throws SpecError naming the line (1-based) and the field.
 */
export function traceFromJsonl(text: string): TraceRequest[] {
  const trace: TraceRequest[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === '') continue;
    let data: unknown;
    try {
      data = JSON.parse(line);
    } catch (e) {
      throw new SpecError(
        `trace line ${i + 1}: not valid JSON (${e instanceof Error ? e.message : String(e)})`,
      );
    }
    const r = TraceLineSchema.safeParse(data);
    if (!r.success) throw new SpecError(`trace line ${i + 1}: ${issuesText(r.error.issues)}`);
    const l = r.data;
    trace.push({
      id: trace.length,
      arrivalMs: l.arrival_s * 1000,
      promptTokens: l.prompt_len,
      outputTokens: l.output_len,
      prefixId: l.prefix_id,
      prefixTokens: l.prefix_len ?? 0,
      class: l.class,
      priority: l.priority,
      ...(l.session_id !== undefined &&
      l.turn !== undefined &&
      l.tool_wait_ms !== undefined &&
      l.new_len !== undefined
        ? { session: { id: l.session_id, turn: l.turn, toolWaitMs: l.tool_wait_ms, newTokens: l.new_len } }
        : {}),
    });
  }
  if (trace.length === 0) throw new SpecError('trace: no requests (every line is blank)');
  checkSessions(trace);
  return trace.sort((a, b) => a.arrivalMs - b.arrivalMs);
}
