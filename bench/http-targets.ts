import { Agent, request } from 'undici';
import type { BenchResult } from '../src/results/schema.ts';
import { byClass, type RequestRecord, summarize } from '../src/serve/metrics.ts';
import { summarizeSessions } from '../src/serve/session-metrics.ts';
import { SessionBook } from '../src/serve/sessions.ts';
import { promptTokenIds, type TraceRequest } from '../src/serve/traffic.ts';
import type { ServeRun } from '../src/spec/workloads/serve-result.ts';
import { startApiServer } from './api-process.ts';
import { type HttpRecord, runHttpArm } from './http-load.ts';
import type { AdapterChoice } from './vulkan.ts';

/**
 * `--target`: where the load test's traffic goes. The in-process engine always runs first: its arms
 * set the traffic (the trace, the calibrated rate, the sweep's rates) and the tokens every request
 * must produce. Each HTTP target then replays every replayable arm's trace, request for request,
 * over streaming HTTP: `loopback` starts this project's server (npm run serve-api) on a free port
 * with the run's model and scheduler settings; a URL is any OpenAI-compatible server.
 */

export type HttpTarget = { kind: 'loopback' } | { kind: 'url'; url: string };

/** Parses `--target in-process,loopback,http://host:port/v1`; throws a message for a bad entry. */
export function parseTargets(text: string): HttpTarget[] {
  const out: HttpTarget[] = [];
  for (const raw of text.split(',').map((s) => s.trim())) {
    if (raw === '' || raw === 'in-process') continue;
    if (raw === 'loopback') {
      out.push({ kind: 'loopback' });
      continue;
    }
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      throw new Error(`--target: "${raw}" is not in-process, loopback or an http(s) URL`);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') {
      throw new Error(`--target: "${raw}" must be an http:// or https:// URL`);
    }
    const path = u.pathname.replace(/\/+$/, '');
    // The OpenAI base URL ends in /v1; a bare origin means its /v1.
    const base = `${u.origin}${path === '' ? '/v1' : path}`;
    if (!base.endsWith('/v1'))
      throw new Error(`--target: "${raw}" must be the API's base URL, ending in /v1`);
    out.push({ kind: 'url', url: base });
  }
  return out;
}

/**
 * In-process arms a server can replay: continuous batching (what the server runs), with or without
 * a prefix cache (loopback starts this project's server with one to match; a URL server keeps its own).
 */
export function replayable(runs: readonly ServeRun[]): ServeRun[] {
  return runs.filter(
    (r) =>
      (r.target === undefined || r.target.kind === 'in-process') &&
      r.experiment !== 'calibration' &&
      r.batching === 'continuous',
  );
}

/** The trace an in-process arm ran, read back off its request records. */
export function traceOf(run: ServeRun): TraceRequest[] {
  return run.requests.map((q) => ({
    id: q.id,
    arrivalMs: q.arrivalMs,
    // The prompt as sent: a KV-budget truncation is the server's to make again.
    promptTokens: q.promptTokens + (q.truncatedTokens ?? 0),
    outputTokens: q.requestedTokens ?? q.outputTokens,
    prefixId: q.prefixId ?? null,
    prefixTokens: q.prefixTokens ?? 0,
    class: q.class,
    priority: q.priority,
    ...(q.session ? { session: q.session } : {}),
  }));
}

/** Finished requests of both runs whose output fingerprints agree, and those that do not. */
export function matchTokens(
  inProcess: ServeRun,
  http: readonly HttpRecord[],
): { checked: number; mismatches: number } {
  const want = new Map(inProcess.requests.map((q) => [q.id, q]));
  let checked = 0;
  let mismatches = 0;
  for (const r of http) {
    const w = want.get(r.id);
    if (r.status !== 'finished' || !w || w.status !== 'finished' || !w.outputHash || !r.outputHash) continue;
    checked++;
    if (w.outputHash !== r.outputHash) mismatches++;
  }
  return { checked, mismatches };
}

/** An HTTP arm as a ServeRun beside the in-process one it replays. */
export function httpRun(
  arm: ServeRun,
  label: string,
  target: NonNullable<ServeRun['target']>,
  run: Awaited<ReturnType<typeof runHttpArm>>,
): ServeRun {
  const opts = { durationMs: Math.max(run.durationMs, 1e-3), slo: arm.slo };
  const records = run.records as RequestRecord[];
  const summary = summarize(records, opts);
  // The cache hit is known where the server reports it (usage's cached_tokens, llama-server's cache_n).
  const hitsKnown = run.records.some((r) => r.cachedTokens !== undefined);
  // Without the server's timeline there is no per-request queue: none is reported rather than 0.
  const timed = run.records.some((r) => r.queueMs !== undefined);
  return {
    ...arm,
    label: `${arm.label} · ${label}`,
    durationMs: run.durationMs,
    steps: 0,
    summary: timed ? summary : { ...summary, queueMs: null },
    byClass: byClass(records, opts),
    sessions: summarizeSessions(run.records, hitsKnown),
    slowdown: null,
    identical: null,
    replayMismatches: 0,
    timeline: [],
    slots: [],
    requests: run.records.map((r) => ({ ...r })),
    target,
    errors: { ...run.errors } as Record<string, number>,
    serverMetrics: run.scrape,
    matchesInProcess: matchTokens(arm, run.records),
  };
}

async function servedModelName(url: string, fallback: string): Promise<{ model: string; server?: string }> {
  const agent = new Agent({ connect: { timeout: 5000 } });
  try {
    const res = await request(`${url}/models`, {
      dispatcher: agent,
      headersTimeout: 5000,
      bodyTimeout: 5000,
    });
    const body = (await res.body.json()) as { data?: { id?: string; owned_by?: string }[] };
    const first = body.data?.[0];
    return first?.id ? { model: first.id, server: first.owned_by } : { model: fallback };
  } catch {
    return { model: fallback };
  } finally {
    await agent.close().catch(() => {});
  }
}

export interface ReplayOptions {
  targets: readonly HttpTarget[];
  /** The served model's name for URL targets (else the first of its /v1/models, else the preset). */
  servedModel?: string;
  preset: string;
  seed: number;
  weights: string;
  pageSize: number;
  adapter: AdapterChoice;
  timeoutMs: number;
  log: (line: string) => void;
  signal?: AbortSignal;
}

/** Items in groups of equal key, in first-seen order (Node 20 has no Map.groupBy). */
function groupBy<T>(items: readonly T[], key: (t: T) => string): T[][] {
  const groups = new Map<string, T[]>();
  for (const t of items) groups.set(key(t), [...(groups.get(key(t)) ?? []), t]);
  return [...groups.values()];
}

/** The share of the calibration burst a URL server must finish for its rate to scale the case. */
const CALIBRATION_QUORUM = 0.9;

/**
 * Replays `arms` against one target (a loopback server started for them); a warning if it could not.
 * With `calibration` (the case study on a URL server), that arm's burst is replayed first and every
 * arm's arrival times are scaled by this engine's throughput on it over the server's, so the server
 * meets the case at its own half saturation rather than at this engine's.
 */
async function replayGroup(
  serve: NonNullable<BenchResult['serve']>,
  arms: readonly ServeRun[],
  target: HttpTarget,
  vocab: number,
  o: ReplayOptions,
  calibration?: ServeRun,
): Promise<string | null> {
  let url: string;
  let model: string;
  let server: string | undefined;
  let close = async () => {};
  const cache = arms[0].prefixCache;
  if (target.kind === 'loopback') {
    const a = arms[0];
    o.log(
      `--target loopback: starting this project’s server (npm run serve-api${cache ? ' --prefix-cache' : ''}) with the run’s model…`,
    );
    try {
      const s = await startApiServer(
        {
          preset: o.preset,
          seed: o.seed,
          weights: o.weights,
          port: 0,
          maxBatch: a.maxBatch,
          tokenBudget: a.tokenBudget,
          kvTokens: a.kvTokens,
          pageSize: o.pageSize,
          prefixCache: cache,
          ...(a.kvBudget ? { kvBudget: a.kvBudget } : {}),
          adapter: o.adapter,
        },
        (line) => o.log(`serve-api: ${line}`),
      );
      url = s.info.url;
      model = s.info.model;
      server = `this project's server on loopback (${s.info.adapter}${cache ? ', prefix cache' : ''})`;
      close = s.close;
    } catch (e) {
      return `--target loopback: ${(e as Error).message}`;
    }
  } else {
    url = target.url;
    const found = o.servedModel ? { model: o.servedModel } : await servedModelName(url, o.preset);
    model = found.model;
    server = found.server ? `${found.server} (${url})` : url;
  }
  let warning: string | null = null;
  try {
    const label = target.kind === 'loopback' ? 'HTTP, loopback' : `HTTP, ${url}`;
    let timeScale = 1;
    if (calibration && !o.signal?.aborted) {
      const trace = traceOf(calibration);
      o.log(
        `${calibration.label} · ${label}: ${trace.length} requests at once, to scale the arrivals to this server…`,
      );
      const run = await runHttpArm({
        url,
        model,
        trace,
        prompts: new Map(trace.map((t) => [t.id, promptTokenIds(t, vocab, calibration.seed)])),
        concurrency: null,
        timeoutMs: o.timeoutMs,
        signal: o.signal,
      });
      const cal = httpRun(
        calibration,
        label,
        { kind: 'http', url, server, tokenCounting: run.tokenCounting, roundTripMs: run.roundTripMs },
        run,
      );
      serve.runs.push(cal);
      const mine = calibration.summary.requestsPerSec;
      const theirs = cal.summary.requestsPerSec;
      // Finished requests a second on both sides; a server that drops a few of the burst (llama-server
      // answers some seeded prompts with a stream error) still gives its rate, one that drops more does not.
      const finished = cal.summary.completed;
      const wanted = calibration.summary.completed;
      if (finished >= CALIBRATION_QUORUM * wanted && mine > 0 && theirs > 0) {
        timeScale = mine / theirs;
        o.log(
          `${label}: ${theirs.toFixed(2)} requests/s at saturation (${finished} of ${wanted} finished) against this engine's ${mine.toFixed(2)}: arrivals × ${timeScale.toPrecision(3)}`,
        );
      } else {
        warning = `--target ${url}: its calibration finished ${finished} of ${wanted} requests; the case is replayed at this engine's rate`;
      }
    }
    for (const arm of arms) {
      if (o.signal?.aborted) break;
      const trace = traceOf(arm).map((t) => ({ ...t, arrivalMs: t.arrivalMs * timeScale }));
      const book = trace.some((t) => t.session) ? new SessionBook(trace, vocab, arm.seed) : undefined;
      const prompts = book
        ? new Map<number, number[]>()
        : new Map(trace.map((t) => [t.id, promptTokenIds(t, vocab, arm.seed)]));
      o.log(`${arm.label} · ${label}: ${trace.length} requests…`);
      const run = await runHttpArm({
        url,
        model,
        trace,
        prompts,
        ...(book ? { sessions: book } : {}),
        concurrency: arm.arrival.kind === 'concurrency' ? (arm.arrival.concurrency ?? 1) : null,
        timeoutMs: o.timeoutMs,
        signal: o.signal,
      });
      const errors = Object.entries(run.errors);
      if (errors.length > 0) {
        o.log(`${arm.label} · ${label}: errors ${errors.map(([k, v]) => `${k} ${v}`).join(', ')}`);
      }
      const http = httpRun(
        arm,
        label,
        {
          kind: 'http',
          url,
          server,
          tokenCounting: run.tokenCounting,
          roundTripMs: run.roundTripMs,
          ...(book ? { standIns: run.standIns } : {}),
          ...(timeScale !== 1 ? { timeScale } : {}),
        },
        run,
      );
      // The rate this server was offered: the arm's, over the scale.
      if (http.arrival.rateRps !== undefined && timeScale !== 1)
        http.arrival = { ...http.arrival, rateRps: http.arrival.rateRps / timeScale };
      serve.runs.push(http);
    }
  } finally {
    await close();
  }
  return warning;
}

/**
 * Replays the result's in-process arms against each target and appends the HTTP arms to
 * `result.serve.runs`. Returns warnings (nothing replayable, a server that would not start).
 */
export async function replayOverHttp(result: BenchResult, o: ReplayOptions): Promise<string[]> {
  // The load test's arms, or the case study's (whose section has the same shape).
  const serve = result.serve ?? result.caseStudy;
  const warnings: string[] = [];
  if (!serve) return ['--target: the run has no load-test section to replay'];
  // A server has one queue: an arm with pools has no HTTP counterpart (this project's server keeps none).
  const pooled = replayable(serve.runs).filter((r) => r.pools);
  if (pooled.length > 0)
    warnings.push(
      `--target: ${pooled.map((r) => `"${r.label}"`).join(', ')} not replayed over HTTP: a server has one queue, not the arm's pools`,
    );
  const arms = replayable(serve.runs).filter((r) => !r.pools);
  if (arms.length === 0) {
    return [
      '--target: no arm to replay over HTTP (a server runs continuous batching; add --batching continuous)',
    ];
  }
  const vocab = result.model.config.vocabSize;
  for (const target of o.targets) {
    // Loopback: one server per setting among the arms (prefix cache, KV pool, step budget, KV
    // budget), started to match. A URL server keeps its own settings whatever the arm says, so it
    // replays the arms that change none: the cache-off arms of the load test (all, if none is),
    // the case study's baseline and incident.
    const plain = arms.filter(
      (a) =>
        !a.prefixCache &&
        !a.kvBudget &&
        (a.caseRole === undefined || a.caseRole === 'baseline' || a.caseRole === 'incident'),
    );
    const groups =
      target.kind === 'loopback'
        ? groupBy(arms, (a) => JSON.stringify([a.prefixCache, a.kvTokens, a.tokenBudget, a.kvBudget ?? null]))
        : [plain.length > 0 ? plain : arms];
    // The case on a URL server is calibrated on that server (loopback runs this engine: its rate holds).
    const calibration =
      result.caseStudy && target.kind === 'url'
        ? serve.runs.find((r) => r.experiment === 'calibration' && r.target?.kind !== 'http')
        : undefined;
    for (const group of groups) {
      const warning = await replayGroup(serve, group, target, vocab, o, calibration);
      if (warning) warnings.push(warning);
    }
  }
  return warnings;
}
