import { SpecError } from '../errors.ts';
import { Model } from '../model/forward.ts';
import { type ArmOptions, type ArmRun, runArm, warmUp } from '../serve/driver.ts';
import { applyKvBudget, type KvBudget } from '../serve/kv-budget.ts';
import { byClass, type RequestRecord, type Slo, slowdown, summarize } from '../serve/metrics.ts';
import { saturationRate } from '../serve/saturation.ts';
import { summarizeSessions } from '../serve/session-metrics.ts';
import { generateSessionTrace, SessionBook } from '../serve/sessions.ts';
import {
  type Arrival,
  defaultMix,
  generateTrace,
  promptTokenIds,
  type RequestClass,
  requestTypeMatrix,
  type TraceRequest,
} from '../serve/traffic.ts';
import {
  CASE_DEFAULTS,
  CASE_LABELS,
  CASE_LONG,
  CASE_ROLES,
  CASE_SHORT,
  type CaseRole,
  caseShape,
} from '../spec/workloads/serve-case.ts';
import { resolveKvBudget } from '../spec/workloads/serve-kv-budget.ts';
import { describeRoute, type PoolCapacity, splitCapacity } from '../spec/workloads/serve-pools.ts';
import type { ServeRun } from '../spec/workloads/serve-result.ts';
import { sessionShape } from '../spec/workloads/serve-sessions.ts';
import { SERVE_DEFAULTS, type ServeWorkload } from '../spec/workloads/serve-settings.ts';
import { type ServeRunRecord, serveResult, serveTargets } from './serve-section.ts';
import type { WorkloadContext, WorkloadEngine, WorkloadRunner } from './workload.ts';

/**
 * The load test on the real engine. One trace (generated from the seed, or imported), then the
 * experiment's arms, each on a fresh model (an empty KV pool, a cold prefix cache) built from the
 * same weights: continuous against static batching and/or prefix cache off against on; or a rate
 * sweep; or the request-type matrix. Then every request alone on an idle engine: its solo TTFT and
 * E2E (the slowdown baseline) and its tokens, which every arm's tokens must equal exactly.
 */
export const serveLoad: WorkloadRunner<'serve', ServeRunRecord> = async (ctx, w) => {
  const config = ctx.config;
  const vocab = config.vocabSize;
  const classes = w.mix === 'matrix' ? requestTypeMatrix(config.maxSeqLen) : defaultMix(config.maxSeqLen);
  const sessions = w.sessions;
  const trace = (arrival: Arrival, only?: RequestClass[]): TraceRequest[] =>
    w.trace ??
    (sessions
      ? generateSessionTrace({
          seed: w.seed,
          shape: sessionShape(config.maxSeqLen, sessions.count, sessions.turns, sessions.toolWait),
          arrival: arrival.kind === 'concurrency' ? { kind: 'all-at-once' } : arrival,
          ...(w.prefixShare > 0 && w.prefixTokens > 0
            ? { prefix: { tokens: w.prefixTokens, share: w.prefixShare } }
            : {}),
        })
      : null) ??
    generateTrace({
      seed: w.seed,
      requests: w.requests,
      ...(w.durationS !== null ? { durationS: w.durationS } : {}),
      arrival,
      classes: only ?? classes,
      ...(w.prefixShare > 0 && w.prefixTokens > 0
        ? { prefix: { tokens: w.prefixTokens, share: w.prefixShare } }
        : {}),
      priorityShare: w.priorityShare,
    });
  const promptsOf = (t: readonly TraceRequest[]) =>
    new Map(t.map((r) => [r.id, promptTokenIds(r, vocab, w.seed)]));
  /** A trace's sessions, for one arm (null: single requests). Its prompts are made as turns finish. */
  const bookOf = (t: readonly TraceRequest[]) =>
    t.some((r) => r.session) ? new SessionBook(t, vocab, w.seed) : null;

  let unitsTotal = 0;
  let unitsDone = 0;
  const runs: ServeRun[] = [];
  const arm = async (
    label: string,
    experiment: ServeRun['experiment'],
    t: readonly TraceRequest[],
    arrival: Arrival,
    batching: 'continuous' | 'static',
    prefixCache: boolean,
    over: ArmOverrides = {},
  ): Promise<{ run: ServeRun; raw: ArmRun }> => {
    // An arm may change the engine's settings (the case study's remedies): its own w.
    const aw: ServeWorkload = { ...w, ...over };
    const armKv = aw.kvTokens ?? aw.maxBatch * config.maxSeqLen;
    const armBudget = budgetOf(aw, armKv);
    const book = bookOf(t);
    const o: ArmOptions = {
      batching,
      policy: aw.policy,
      tokenBudget: aw.tokenBudget,
      maxBatch: aw.maxBatch,
      concurrency: arrival.kind === 'concurrency' ? arrival.concurrency : null,
      prefixCache,
      ...(book ? { sessions: book } : {}),
      ...(armBudget ? { kvBudget: armBudget } : {}),
    };
    const prompts = book
      ? new Map(t.filter((r) => !SessionBook.isFollowUp(r)).map((r) => [r.id, book.firstPrompt(r)]))
      : promptsOf(t);
    const model = await buildModel(ctx, aw, armKv, prefixCache);
    if (aw.pools) {
      const capacity = splitCapacity(aw.pools, {
        pages: model.kv.allocator.stats().totalPages,
        slots: aw.maxBatch,
        tokenBudget: aw.tokenBudget,
      });
      o.pools = { capacity, rule: aw.pools.route };
    }
    try {
      await warmUp(model, aw.maxBatch);
      const base = unitsDone;
      ctx.progress(base, unitsTotal, `${label}: 0 of ${t.length} requests`);
      const raw = await runArm(model, t, prompts, o, ctx.signal, (p) => {
        ctx.progress(
          base + p.done,
          unitsTotal,
          `${label}: ${p.done} of ${p.total} requests, batch ${p.running}, KV ${p.kvUsedPct.toFixed(0)}%`,
        );
      });
      unitsDone = base + t.length;
      const run = toRun(label, experiment, raw, arrival, batching, prefixCache, aw, armKv, o.pools?.capacity);
      if (raw.stoppedBy !== undefined) {
        // Keep the finished requests: the arm goes into the result, then the run stops as it was told.
        ctx.emit({ type: 'serveRun', run });
        throw raw.stoppedBy;
      }
      return { run, raw };
    } finally {
      model.destroy();
    }
  };

  if (w.sweep > 0) {
    // GuideLLM's sweep: one request at a time, then everything at once, then rates in between.
    const base = trace({ kind: 'all-at-once' });
    unitsTotal = base.length * (2 + w.sweep);
    const sync = await arm(
      'synchronous',
      'sweep',
      base,
      { kind: 'concurrency', concurrency: 1 },
      'continuous',
      false,
    );
    const sat = await arm('saturating', 'sweep', base, { kind: 'all-at-once' }, 'continuous', false);
    for (const r of [sync, sat]) finishArm(ctx, r, null, runs);
    const lo = sync.run.summary.requestsPerSec;
    const hi = sat.run.summary.requestsPerSec;
    for (let i = 1; i <= w.sweep; i++) {
      const rateRps = lo + ((hi - lo) * i) / (w.sweep + 1);
      const arrival: Arrival = { kind: 'poisson', rateRps, burstiness: burstinessOf(w) };
      const r = await arm(
        `${rateRps.toFixed(2)} req/s`,
        'sweep',
        trace(arrival),
        arrival,
        'continuous',
        false,
      );
      finishArm(ctx, r, null, runs);
    }
    return;
  }

  if (w.mix === 'matrix') {
    // Each request type alone, then the four mixed, on the same arrival process.
    unitsTotal = w.requests * (classes.length + 2);
    const arrival = await resolveArrival(w, async (a) => {
      const t = trace(a);
      const r = await arm('saturation (calibration)', 'calibration', t, a, 'continuous', false);
      finishArm(ctx, r, null, runs);
      return { ...r, trace: t };
    });
    for (const c of classes) {
      const t = trace(arrival, [{ ...c, share: 1 }]);
      finishArm(ctx, await arm(`${c.name} alone`, 'matrix', t, arrival, 'continuous', false), null, runs);
    }
    finishArm(
      ctx,
      await arm('all four mixed', 'matrix', trace(arrival), arrival, 'continuous', false),
      null,
      runs,
    );
    return;
  }

  if (w.mix === 'case') {
    // The seed's case 8.1 (spec/workloads/serve-case.ts): calibrate on the baseline, then the
    // baseline, the incident, each remedy alone and all together, on the incident's one trace.
    const shape = caseShape(config.maxSeqLen);
    const uni = (r: { min: number; max: number }) => ({ kind: 'uniform' as const, min: r.min, max: r.max });
    const short: RequestClass = {
      name: CASE_SHORT,
      share: 1 - CASE_DEFAULTS.longShare,
      prompt: uni(shape.short.prompt),
      output: uni(shape.short.output),
    };
    const long: RequestClass = {
      name: CASE_LONG,
      share: CASE_DEFAULTS.longShare,
      prompt: uni(shape.long.prompt),
      output: { kind: 'fixed', tokens: shape.long.output },
    };
    const caseTrace = (a: Arrival, classes: RequestClass[]) =>
      generateTrace({
        seed: w.seed,
        requests: w.requests,
        arrival: a,
        classes,
        prefix: { tokens: shape.systemTokens, share: 1 },
      });
    const baselineClasses = [{ ...short, share: 1 }];
    unitsTotal = w.requests * (1 + CASE_ROLES.length) + (w.solo ? 2 * w.requests : 0);
    const cal = caseTrace({ kind: 'all-at-once' }, baselineClasses);
    const c = await arm(
      'saturation (calibration)',
      'calibration',
      cal,
      { kind: 'all-at-once' },
      'continuous',
      false,
    );
    finishArm(ctx, c, null, runs);
    const meanOut = cal.reduce((n, r) => n + r.outputTokens, 0) / cal.length;
    const saturated = Math.max(saturationRate(c.raw.timeline, meanOut) ?? 0, c.run.summary.requestsPerSec);
    const rate = Math.max(1e-3, CASE_DEFAULTS.load * saturated);
    // The short requests arrive at the same rate in every arm; the incident's summaries come on top.
    const baseArrival: Arrival = { kind: 'poisson', rateRps: rate, burstiness: 1 };
    const incArrival: Arrival = { kind: 'poisson', rateRps: rate / short.share, burstiness: 1 };
    const baseTrace = caseTrace(baseArrival, baselineClasses);
    const incTrace = caseTrace(incArrival, [short, long]);
    const done: { run: ServeRun; raw: ArmRun; role: CaseRole; trace: readonly TraceRequest[] }[] = [];
    const caseArm = async (role: CaseRole, over: ArmOverrides, prefixCache = false) => {
      const t = role === 'baseline' ? baseTrace : incTrace;
      const a = role === 'baseline' ? baseArrival : incArrival;
      const r = await arm(CASE_LABELS[role], 'case', t, a, 'continuous', prefixCache, over);
      r.run.caseRole = role;
      done.push({ ...r, role, trace: t });
      return r;
    };
    try {
      const baseline = await caseArm('baseline', {});
      // Goodput's SLO: as given, else a short request within twice the baseline's short TTFT p99.
      const baseP99 = baseline.run.byClass[CASE_SHORT]?.ttftMs?.p99;
      const slo =
        Object.keys(w.slo).length > 0 || baseP99 === undefined
          ? w.slo
          : { ttftMs: CASE_DEFAULTS.sloFactor * baseP99 };
      baseline.run.slo = { ...slo };
      baseline.run.summary = summarize(baseline.raw.records, { durationMs: baseline.raw.durationMs, slo });
      baseline.run.byClass = byClass(baseline.raw.records, { durationMs: baseline.raw.durationMs, slo });
      const routing: ArmOverrides['pools'] = {
        pools: [
          { name: 'short', share: CASE_DEFAULTS.shortPoolShare },
          { name: 'long', share: 1 - CASE_DEFAULTS.shortPoolShare },
        ],
        route: { field: 'class', op: '=', value: CASE_LONG },
      };
      const capacity = {
        kvTokens: CASE_DEFAULTS.capacityFactor * (w.kvTokens ?? w.maxBatch * config.maxSeqLen),
        tokenBudget: CASE_DEFAULTS.capacityFactor * w.tokenBudget,
      };
      const budget: ArmOverrides['kvBudget'] = {
        tokens: shape.kvBudgetTokens,
        sharePct: null,
        policy: 'truncate',
      };
      await caseArm('incident', { slo });
      await caseArm('routing', { slo, pools: routing });
      await caseArm('prefix-cache', { slo }, true);
      await caseArm('capacity', { slo, ...capacity });
      await caseArm('kv-budget', { slo, kvBudget: budget });
      await caseArm('all', { slo, pools: routing, ...capacity, kvBudget: budget }, true);
      if (w.solo) {
        const tick = () => unitsDone++;
        const soloBase = await soloRuns(
          ctx,
          w,
          config.maxSeqLen,
          baseTrace,
          promptsOf(baseTrace),
          tick,
          unitsTotal,
        );
        const soloInc = await soloRuns(
          ctx,
          w,
          config.maxSeqLen,
          incTrace,
          promptsOf(incTrace),
          tick,
          unitsTotal,
        );
        // The budget's arms cut the long prompts: those requests alone, cut alike.
        const cut = new Set(
          done
            .find((d) => d.role === 'kv-budget')
            ?.raw.records.filter((q) => (q.truncatedTokens ?? 0) > 0)
            .map((q) => q.id),
        );
        // Not counted in the progress: a handful, the cut ones.
        const soloCut = await soloRuns(
          ctx,
          { ...w, kvBudget: budget },
          config.maxSeqLen,
          incTrace,
          promptsOf(incTrace),
          () => unitsDone,
          unitsTotal,
          cut,
        );
        const merged: Solo = {
          tokens: new Map([...soloInc.tokens, ...soloCut.tokens]),
          ttftMs: new Map([...soloInc.ttftMs, ...soloCut.ttftMs]),
          e2eMs: new Map([...soloInc.e2eMs, ...soloCut.e2eMs]),
        };
        for (const d of done.splice(0)) {
          const cuts = d.role === 'kv-budget' || d.role === 'all';
          finishArm(ctx, d, d.role === 'baseline' ? soloBase : cuts ? merged : soloInc, runs);
        }
      }
    } finally {
      for (const d of done) finishArm(ctx, d, null, runs);
    }
    return;
  }

  // The A/B arms on one trace.
  const calibrate = w.arrival.kind === 'poisson' && w.arrival.rateRps === null && !w.trace;
  const arms = w.batching.flatMap((b) => w.prefixCache.map((p) => ({ batching: b, prefixCache: p })));
  // Sessions: every turn is a request.
  const n = sessions ? trace({ kind: 'all-at-once' }).length : w.requests;
  unitsTotal = n * (arms.length + (calibrate ? 1 : 0)) + (w.solo ? n : 0);
  const arrival = await resolveArrival(w, async (a) => {
    const ct = trace(a);
    const r = await arm('saturation (calibration)', 'calibration', ct, a, 'continuous', false);
    finishArm(ctx, r, null, runs);
    return { ...r, trace: ct };
  });
  const t = trace(arrival);
  const done: { run: ServeRun; raw: ArmRun }[] = [];
  try {
    for (const a of arms) {
      const label = `${a.batching}${w.prefixCache.length > 1 ? `, prefix cache ${a.prefixCache ? 'on' : 'off'}` : ''}`;
      done.push(await arm(label, 'ab', t, arrival, a.batching, a.prefixCache));
    }
    const solo = w.solo
      ? await soloRuns(ctx, w, ctx.config.maxSeqLen, t, promptsOf(t), () => unitsDone++, unitsTotal)
      : null;
    for (const r of done.splice(0)) finishArm(ctx, r, solo, runs);
  } finally {
    // A cancel or a lost device in a later arm or the solo runs: the finished arms are kept, unchecked.
    for (const r of done) finishArm(ctx, r, null, runs);
  }
};

/** What an arm may change of the workload's engine settings (the case study's remedies). */
export type ArmOverrides = Partial<
  Pick<ServeWorkload, 'pools' | 'kvBudget' | 'kvTokens' | 'tokenBudget' | 'slo'>
>;

/** Arrival of the A/B arms: as given, or (rate not given) 90% of the saturating throughput, measured first. */
async function resolveArrival(
  w: ServeWorkload,
  calibrate: (a: Arrival) => Promise<{ run: ServeRun; raw: ArmRun; trace: readonly TraceRequest[] }>,
): Promise<Arrival> {
  const a = w.arrival;
  if (a.kind === 'concurrency') return { kind: 'concurrency', concurrency: a.concurrency };
  if (a.kind === 'all-at-once') return { kind: 'all-at-once' };
  if (a.rateRps !== null || w.trace)
    return { kind: 'poisson', rateRps: a.rateRps ?? 1, burstiness: a.burstiness };
  const { run, raw, trace } = await calibrate({ kind: 'all-at-once' });
  const meanOut = trace.reduce((n, r) => n + r.outputTokens, 0) / trace.length;
  // Sessions: the rate is of sessions (their first turns), each bringing its turns.
  const perArrival = w.sessions ? trace.length / new Set(trace.map((r) => r.session?.id)).size : 1;
  // Both readings understate the capacity in their own way: the whole run's throughput by its drain,
  // the queued phase's by its ramp-up (long prompts admitted one chunk at a time with few requests).
  // The larger is the closer.
  const saturated = Math.max(saturationRate(raw.timeline, meanOut) ?? 0, run.summary.requestsPerSec);
  const rateRps = Math.max(1e-3, (SERVE_DEFAULTS.autoRateShare * saturated) / perArrival);
  return { kind: 'poisson', rateRps, burstiness: a.burstiness };
}

function burstinessOf(w: ServeWorkload): number {
  return w.arrival.kind === 'poisson' ? w.arrival.burstiness : 1;
}

/** Each pool's figures over an arm: its requests' summary, the steps it had work in, its budget and KV use. */
function poolSummaries(
  capacity: readonly PoolCapacity[],
  raw: ArmRun,
  opts: { durationMs: number; slo: Slo },
): NonNullable<ServeRun['pools']> {
  const steps = raw.timeline.filter((p) => p.pools);
  return capacity.map((c, i) => {
    const at = steps.map((p) => p.pools?.[i]).filter((p) => p !== undefined);
    const n = Math.max(1, at.length);
    return {
      name: c.name,
      share: c.share,
      pages: c.pages,
      slots: c.slots,
      tokenBudget: c.tokenBudget,
      summary: summarize(
        raw.records.filter((r) => r.pool === c.name),
        opts,
      ),
      busyStepShare: at.filter((p) => p.tokens > 0).length / n,
      budgetUse: Math.min(1, at.reduce((a, p) => a + p.tokens, 0) / n / c.tokenBudget),
      kvPeak: Math.min(1, Math.max(0, ...at.map((p) => p.kvUsedPages / p.kvTotalPages))),
      kvMean: Math.min(1, at.reduce((a, p) => a + p.kvUsedPages / p.kvTotalPages, 0) / n),
    };
  });
}

/** The per-request KV budget in tokens for a pool of `kvTokens` (the spec was checked: it is at least a page). */
function budgetOf(w: ServeWorkload, kvTokens: number): KvBudget | null {
  if (!w.kvBudget) return null;
  const tokens = resolveKvBudget(w.kvBudget, kvTokens, w.pageSize);
  if (typeof tokens === 'string') throw new SpecError(tokens);
  return { tokens, policy: w.kvBudget.policy };
}

async function buildModel(
  ctx: WorkloadContext<ServeRunRecord>,
  w: ServeWorkload,
  kvTokens: number,
  prefixCache: boolean,
) {
  return Model.create(
    ctx.gpu,
    ctx.weights,
    {
      kv: { mode: 'paged', pageSize: w.pageSize, capacityTokens: kvTokens, prefixCache },
      maxBatch: w.maxBatch,
      pipelines: ctx.pipelines,
      variants: ctx.variants,
    },
    'serve',
  );
}

interface Solo {
  tokens: Map<number, number[]>;
  ttftMs: Map<number, number>;
  e2eMs: Map<number, number>;
}

/** Each request alone on an idle engine (no prefix cache): one prefill of its prompt, then its decode steps. */
async function soloRuns(
  ctx: WorkloadContext<ServeRunRecord>,
  w: ServeWorkload,
  kvTokens: number,
  t: readonly TraceRequest[],
  prompts: ReadonlyMap<number, readonly number[]>,
  tick: () => number,
  total: number,
  /** Only these requests (the others' solo runs are another set's). */
  only?: ReadonlySet<number>,
): Promise<Solo> {
  const model = await buildModel(ctx, w, kvTokens, false);
  const solo: Solo = { tokens: new Map(), ttftMs: new Map(), e2eMs: new Map() };
  // Sessions: a later turn alone is sent with the history its own earlier turns made alone.
  const book = t.some((r) => r.session) ? new SessionBook(t, ctx.config.vocabSize, w.seed) : null;
  const later = new Map<number, number[]>();
  try {
    await warmUp(model, 1);
    for (const r of [...t].sort((a, b) => a.id - b.id)) {
      ctx.signal.throwIfAborted();
      if (only && !only.has(r.id)) continue;
      const prompt = book
        ? SessionBook.isFollowUp(r)
          ? later.get(r.id)
          : book.firstPrompt(r)
        : (prompts.get(r.id) ?? []);
      // A turn whose earlier turn could not run alone has no history to send.
      if (!prompt) continue;
      // Alone, a request runs with the prompt the budget leaves it, as under load; one it refuses does not run.
      const budget = w.kvBudget ? budgetOf(w, w.kvTokens ?? w.maxBatch * ctx.config.maxSeqLen) : null;
      const budgeted = budget ? applyKvBudget(prompt, r.outputTokens, 0, budget) : null;
      if (budgeted && !budgeted.ok) continue;
      const sent = budgeted ? budgeted.prompt : prompt;
      const seq = model.createSequence();
      try {
        const t0 = performance.now();
        const out = [(await model.prefill([{ seq, tokens: sent }], 'none'))[0].nextToken];
        const ttft = performance.now() - t0;
        while (out.length < r.outputTokens) {
          out.push((await model.decode([{ seq, token: out[out.length - 1] }])).nextTokens[0]);
        }
        solo.e2eMs.set(r.id, performance.now() - t0);
        solo.ttftMs.set(r.id, ttft);
        solo.tokens.set(r.id, out);
        const next = book?.finished(r.id, out);
        if (next) later.set(next.req.id, next.prompt);
      } finally {
        model.freeSequence(seq);
      }
      ctx.progress(tick() + 1, total, `each request alone: ${solo.tokens.size} of ${t.length}`);
    }
  } finally {
    model.destroy();
  }
  return solo;
}

const SHORT_CLASSES = new Set(['short', 'short-in/short-out', CASE_SHORT]);

/** Adds the solo baselines and the identical-output check to an arm, records the check, and emits the arm. */
function finishArm(
  ctx: WorkloadContext<ServeRunRecord>,
  r: { run: ServeRun; raw: ArmRun },
  solo: Solo | null,
  runs: ServeRun[],
) {
  const { run, raw } = r;
  if (solo) {
    const mismatches: string[] = [];
    let checked = 0;
    for (const req of run.requests) {
      const want = solo.tokens.get(req.id);
      if (!want) continue;
      req.soloTtftMs = solo.ttftMs.get(req.id);
      req.soloE2eMs = solo.e2eMs.get(req.id);
      if (req.status !== 'finished') continue;
      checked++;
      const got = raw.tokens.get(req.id) ?? [];
      const at = want.findIndex((tok, i) => got[i] !== tok);
      if (at >= 0 || got.length !== want.length) {
        mismatches.push(`request ${req.id}: token ${at >= 0 ? at : got.length} differs`);
      }
    }
    run.identical = { checked, mismatches: mismatches.length, firstMismatches: mismatches.slice(0, 10) };
    run.slowdown = slowdown(run.requests.filter((q) => SHORT_CLASSES.has(q.class)) as RequestRecord[]);
    ctx.check({
      name: `serve ${run.label}: every finished request's tokens identical to the request run alone (${checked} checked, ${mismatches.length} differ; ${raw.replayMismatches} replayed rows differ)`,
      maxAbsErr: 0,
      maxRelErr: 0,
      passed: mismatches.length === 0 && raw.replayMismatches === 0,
    });
  }
  runs.push(run);
  ctx.emit({ type: 'serveRun', run });
}

/** Thins a timeline to at most `max` points (every k-th step, the last kept). */
function thin<T>(xs: readonly T[], max: number): T[] {
  if (xs.length <= max) return [...xs];
  const k = Math.ceil(xs.length / max);
  return xs.filter((_, i) => i % k === 0 || i === xs.length - 1);
}

function toRun(
  label: string,
  experiment: ServeRun['experiment'],
  raw: ArmRun,
  arrival: Arrival,
  batching: 'continuous' | 'static',
  prefixCache: boolean,
  w: ServeWorkload,
  kvTokens: number,
  capacity?: readonly PoolCapacity[],
): ServeRun {
  const slo: Slo = w.slo;
  const opts = { durationMs: raw.durationMs, slo };
  const pools = capacity ? poolSummaries(capacity, raw, opts) : null;
  return {
    label,
    experiment,
    batching,
    prefixCache,
    policy: w.policy,
    arrival: w.trace
      ? { kind: 'trace' }
      : arrival.kind === 'poisson'
        ? { kind: 'poisson', rateRps: arrival.rateRps, burstiness: arrival.burstiness ?? 1 }
        : arrival.kind === 'concurrency'
          ? { kind: 'concurrency', concurrency: arrival.concurrency }
          : { kind: 'all-at-once' },
    seed: w.seed,
    slo: { ...slo },
    durationMs: raw.durationMs,
    tokenBudget: w.tokenBudget,
    maxBatch: w.maxBatch,
    kvTokens,
    ...(w.kvBudget ? { kvBudget: budgetOf(w, kvTokens) ?? undefined } : {}),
    steps: raw.steps,
    summary: summarize(raw.records, opts),
    byClass: byClass(raw.records, opts),
    sessions: summarizeSessions(raw.records, true),
    ...(pools && w.pools ? { pools, route: describeRoute(w.pools.route) } : {}),
    slowdown: null,
    identical: null,
    replayMismatches: raw.replayMismatches,
    timeline: thin(raw.timeline, 4000),
    slots: raw.slots,
    requests: raw.records.map((r) => ({ ...r })),
    target: { kind: 'in-process' },
    ...(raw.stoppedBy !== undefined
      ? { stopped: String((raw.stoppedBy as Error)?.message ?? raw.stoppedBy) }
      : {}),
  };
}

/** The load test's engine: its arms as it emitted them, and the rate sweep read off the swept arms. */
export const serveEngine: WorkloadEngine<'serve', ServeRunRecord> = {
  run: serveLoad,
  describe: (r) => `load test: ${r.run.label} done`,
  collect: (records) => (records.length > 0 ? { serve: serveResult(records.map((r) => r.run)) } : {}),
  targets: serveTargets,
};
