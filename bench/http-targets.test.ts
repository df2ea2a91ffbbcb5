import { describe, expect, it } from 'vitest';
import { parsePrometheus } from '../src/serve/prometheus.ts';
import { serveTables } from '../src/spec/workloads/serve-report.ts';
import { makeServeResult } from '../test-support/fixtures/serve.ts';
import type { HttpRecord } from './http-load.ts';
import { classify, originOf, scrapeDelta } from './http-load.ts';
import { httpRun, matchTokens, parseTargets, replayable, traceOf } from './http-targets.ts';

describe('parseTargets', () => {
  it('reads in-process (implied), loopback and base URLs, a bare origin meaning its /v1', () => {
    expect(parseTargets('in-process')).toEqual([]);
    expect(parseTargets('in-process, loopback,http://10.0.0.2:8000/v1/,https://h.example')).toEqual([
      { kind: 'loopback' },
      { kind: 'url', url: 'http://10.0.0.2:8000/v1' },
      { kind: 'url', url: 'https://h.example/v1' },
    ]);
  });
  it('names a bad entry', () => {
    expect(() => parseTargets('vllm')).toThrow(/"vllm" is not in-process, loopback or an http\(s\) URL/);
    expect(() => parseTargets('ftp://h/v1')).toThrow(/must be an http/);
    expect(() => parseTargets('http://h:8000/v1/completions')).toThrow(/ending in \/v1/);
  });
});

describe('replaying an in-process arm', () => {
  const r = makeServeResult();
  const runs = r.serve?.runs ?? [];
  it('replays continuous arms without a prefix cache, never the calibration', () => {
    expect(runs.map((x) => x.label)).toEqual(['saturation (calibration)', 'continuous', 'static']);
    expect(replayable(runs).map((x) => x.label)).toEqual(['continuous']);
  });
  it('reads the trace back off the records: what each request asked for, not what it got', () => {
    const arm = runs[1];
    const t = traceOf(arm);
    expect(t).toHaveLength(arm.requests.length);
    for (const [i, q] of arm.requests.entries()) {
      expect(t[i]).toEqual({
        id: q.id,
        arrivalMs: q.arrivalMs,
        promptTokens: q.promptTokens,
        outputTokens: q.requestedTokens,
        prefixId: q.prefixId ?? null,
        prefixTokens: q.prefixTokens ?? 0,
        class: q.class,
        priority: q.priority,
      });
    }
  });
  it('matches finished requests by their output fingerprints', () => {
    const arm = {
      ...runs[1],
      requests: runs[1].requests
        .slice(0, 3)
        .map((q, i) => ({ ...q, status: 'finished' as const, outputHash: `h${i}` })),
    };
    const http = arm.requests.map((q) => ({ ...q })) as HttpRecord[];
    expect(matchTokens(arm, http)).toEqual({ checked: 3, mismatches: 0 });
    http[1].outputHash = 'other';
    http[2].status = 'failed';
    expect(matchTokens(arm, http)).toEqual({ checked: 2, mismatches: 1 });
  });
  it('builds the HTTP arm from its client records: summary from them, no queue without a server timeline', () => {
    const arm = runs[1];
    // Two requests, times counted by hand: TTFT 10 and 30 ms, E2E 20 and 50 ms.
    const records: HttpRecord[] = [0, 1].map((i) => ({
      id: i,
      class: 'short',
      priority: 0,
      promptTokens: 4,
      outputTokens: 2,
      prefixHitTokens: 0,
      preemptions: 0,
      status: 'finished',
      arrivalMs: i * 100,
      admittedMs: i * 100,
      tokenTimesMs: i === 0 ? [10, 20] : [130, 150],
      finishMs: i === 0 ? 20 : 150,
      requestedTokens: 2,
      prefixId: null,
      prefixTokens: 0,
    }));
    const run = httpRun(
      arm,
      'HTTP, http://h/v1',
      { kind: 'http', url: 'http://h/v1' },
      {
        records,
        durationMs: 200,
        errors: { timeout: 1 },
        tokenCounting: 'usage',
        scrape: null,
        roundTripMs: null,
        standIns: 0,
      },
    );
    expect(run.label).toBe('continuous · HTTP, http://h/v1');
    expect(run.summary.completed).toBe(2);
    expect(run.summary.requestsPerSec).toBeCloseTo(10, 9);
    expect(run.summary.ttftMs?.p50).toBeCloseTo(20, 9);
    expect(run.summary.e2eMs?.mean).toBeCloseTo(35, 9);
    expect(run.summary.queueMs).toBeNull();
    expect(run.errors).toEqual({ timeout: 1 });
    expect(run.timeline).toEqual([]);
    // The report's interface table names the arm and its errors.
    const md = serveTables({ ...(r.serve as NonNullable<typeof r.serve>), runs: [...runs, run] }).join('\n');
    expect(md).toContain('Interface against inference');
    expect(md).toMatch(/continuous · HTTP, http:\/\/h\/v1 \| 2\/2 \| timeout 1 \| 20\.0 \//);
  });
});

describe('the client', () => {
  it('types a failure by status and by what undici threw', () => {
    expect(classify(undefined, 429)).toBe('http_429');
    expect(classify(undefined, 503)).toBe('http_5xx');
    expect(classify(undefined, 400)).toBe('http_4xx');
    expect(classify(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }))).toBe('connection_refused');
    expect(classify({ cause: { code: 'ECONNREFUSED' } })).toBe('connection_refused');
    expect(classify(Object.assign(new Error('x'), { code: 'UND_ERR_HEADERS_TIMEOUT' }))).toBe('timeout');
    expect(classify(Object.assign(new Error('x'), { code: 'UND_ERR_SOCKET' }))).toBe('dropped_stream');
    expect(classify(new Error('?'))).toBe('other');
    expect(originOf('http://h:1/v1')).toBe('http://h:1');
  });
  it('differences two scrapes into means per request (vLLM names)', () => {
    const at = (n: number, queue: number, prefill: number) =>
      parsePrometheus(
        [
          `vllm:request_queue_time_seconds_sum{model_name="m"} ${queue}`,
          `vllm:request_queue_time_seconds_count{model_name="m"} ${n}`,
          `vllm:request_prefill_time_seconds_sum{model_name="m"} ${prefill}`,
          `vllm:request_prefill_time_seconds_count{model_name="m"} ${n}`,
        ].join('\n'),
      );
    // 4 more requests, 0.2 s more queue and 0.1 s more prefill: 50 ms and 25 ms each.
    expect(scrapeDelta(at(6, 1, 3), at(10, 1.2, 3.1))).toEqual({
      requests: 4,
      queueMsMean: expect.closeTo(50, 9),
      prefillMsMean: expect.closeTo(25, 9),
      ttftMsMean: null,
      source: 'histograms',
    });
    expect(scrapeDelta(at(6, 1, 3), at(6, 1, 3))).toBeNull();
  });
});
