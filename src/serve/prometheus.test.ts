import { describe, expect, it } from 'vitest';
import { InputError } from '../errors.ts';
import {
  CONTENT_TYPE,
  Counter,
  formatValue,
  Gauge,
  gaugeValue,
  Histogram,
  histogramTotals,
  LATENCY_BUCKETS_S,
  parsePrometheus,
  Registry,
  TOKEN_LATENCY_BUCKETS_S,
} from './prometheus.ts';

/**
 * Three observations into buckets [0.125, 0.5, 1], chosen exact in binary so the sum is exact:
 *   0.0625 → le 0.125;  0.125 → le 0.125 (a bound is inclusive);  2 → only +Inf.
 * Cumulative: le=0.125: 2, le=0.5: 2, le=1: 2, le=+Inf: 3.  Sum 0.0625 + 0.125 + 2 = 2.1875.
 */
function e2eHistogram(): Histogram {
  const h = new Histogram('webgpu_bench:e2e_request_latency_seconds', 'End-to-end latency.', [0.125, 0.5, 1]);
  h.observe(0.0625);
  h.observe(0.125);
  h.observe(2);
  return h;
}

describe('render', () => {
  it('writes a histogram, a gauge and a counter as written out by hand', () => {
    const reg = new Registry();
    reg.add(e2eHistogram());
    reg.add(new Gauge('webgpu_bench:num_requests_waiting', 'Requests waiting.')).set(4);
    const c = reg.add(new Counter('webgpu_bench:request_success_total', 'Finished requests.'));
    c.inc();
    c.inc(2);
    expect(reg.render()).toBe(
      [
        '# HELP webgpu_bench:e2e_request_latency_seconds End-to-end latency.',
        '# TYPE webgpu_bench:e2e_request_latency_seconds histogram',
        'webgpu_bench:e2e_request_latency_seconds_bucket{le="0.125"} 2',
        'webgpu_bench:e2e_request_latency_seconds_bucket{le="0.5"} 2',
        'webgpu_bench:e2e_request_latency_seconds_bucket{le="1"} 2',
        'webgpu_bench:e2e_request_latency_seconds_bucket{le="+Inf"} 3',
        'webgpu_bench:e2e_request_latency_seconds_sum 2.1875',
        'webgpu_bench:e2e_request_latency_seconds_count 3',
        '# HELP webgpu_bench:num_requests_waiting Requests waiting.',
        '# TYPE webgpu_bench:num_requests_waiting gauge',
        'webgpu_bench:num_requests_waiting 4',
        '# HELP webgpu_bench:request_success_total Finished requests.',
        '# TYPE webgpu_bench:request_success_total counter',
        'webgpu_bench:request_success_total 3',
        '',
      ].join('\n'),
    );
  });

  it('puts the constant labels on every sample, before le', () => {
    const reg = new Registry({ model_name: 'ci-tiny', engine: '0' });
    reg.add(new Histogram('h_seconds', 'h', [0.1])).observe(0.05);
    reg.add(new Gauge('g', 'g')).set(1.5);
    expect(reg.render()).toBe(
      [
        '# HELP h_seconds h',
        '# TYPE h_seconds histogram',
        'h_seconds_bucket{model_name="ci-tiny",engine="0",le="0.1"} 1',
        'h_seconds_bucket{model_name="ci-tiny",engine="0",le="+Inf"} 1',
        'h_seconds_sum{model_name="ci-tiny",engine="0"} 0.05',
        'h_seconds_count{model_name="ci-tiny",engine="0"} 1',
        '# HELP g g',
        '# TYPE g gauge',
        'g{model_name="ci-tiny",engine="0"} 1.5',
        '',
      ].join('\n'),
    );
  });

  it('escapes label values (\\, ", newline) and HELP text (\\, newline)', () => {
    const reg = new Registry({ model_name: 'a"b\\c\nd' });
    reg.add(new Counter('x_total', 'say "hi"\\now\nthen'));
    expect(reg.render()).toBe(
      [
        '# HELP x_total say "hi"\\\\now\\nthen',
        '# TYPE x_total counter',
        'x_total{model_name="a\\"b\\\\c\\nd"} 0',
        '',
      ].join('\n'),
    );
  });

  it('renders an empty registry as nothing', () => {
    expect(new Registry().render()).toBe('');
  });

  it('reads a collected gauge at each render', () => {
    let waiting = 1;
    const reg = new Registry();
    const g = reg.add(new Gauge('waiting', 'w', () => waiting));
    expect(reg.render()).toContain('\nwaiting 1\n');
    waiting = 7;
    expect(reg.render()).toContain('\nwaiting 7\n');
    expect(() => g.set(3)).toThrow(InputError);
  });

  it('formats integers plain, floats shortest, and the special values', () => {
    expect(formatValue(3)).toBe('3');
    expect(formatValue(0.1 + 0.2)).toBe('0.30000000000000004');
    expect(formatValue(1.5e-7)).toBe('1.5e-7');
    expect(formatValue(Infinity)).toBe('+Inf');
    expect(formatValue(-Infinity)).toBe('-Inf');
    expect(formatValue(Number.NaN)).toBe('NaN');
  });

  it('exports the 0.0.4 content type', () => {
    expect(CONTENT_TYPE).toBe('text/plain; version=0.0.4; charset=utf-8');
  });
});

describe('metrics', () => {
  it('keeps count and sum', () => {
    const h = e2eHistogram();
    expect(h.count).toBe(3);
    expect(h.sum).toBe(2.1875);
  });

  it('rejects what Prometheus would reject, or what would poison a series', () => {
    expect(() => new Histogram('h', 'h', [0.5, 0.1])).toThrow(InputError);
    expect(() => new Histogram('h', 'h', [0.1, 0.1])).toThrow(InputError);
    expect(() => new Histogram('h', 'h', [0.1, Infinity])).toThrow(InputError);
    expect(() => new Histogram('h', 'h', [1]).observe(Number.NaN)).toThrow(InputError);
    expect(() => new Counter('c_total', 'c').inc(-1)).toThrow(InputError);
    expect(() => new Gauge('1bad', 'g')).toThrow(InputError);
    expect(() => new Gauge('bad-name', 'g')).toThrow(InputError);
    expect(() => new Registry({ le: 'x' })).toThrow(InputError);
    expect(() => new Registry({ 'a:b': 'x' })).toThrow(InputError);
    const reg = new Registry();
    reg.add(new Gauge('g', 'g'));
    expect(() => reg.add(new Counter('g', 'g'))).toThrow(InputError);
  });

  it('has ascending bucket ladders covering 1 ms to 60 s and 0.5 ms to 2.5 s', () => {
    for (const ladder of [LATENCY_BUCKETS_S, TOKEN_LATENCY_BUCKETS_S]) {
      expect(ladder.every((b, i) => i === 0 || b > ladder[i - 1])).toBe(true);
      expect(() => new Histogram('h', 'h', ladder)).not.toThrow();
    }
    expect([LATENCY_BUCKETS_S[0], LATENCY_BUCKETS_S.at(-1)]).toEqual([0.001, 60]);
    expect([TOKEN_LATENCY_BUCKETS_S[0], TOKEN_LATENCY_BUCKETS_S.at(-1)]).toEqual([0.0005, 2.5]);
  });
});

/**
 * A vLLM-style scrape written by hand: two engines of one model, a `_created` line as
 * prometheus_client writes them, a HELP with odd text, NaN, +Inf, exponents, a timestamp, CRLF.
 *   e2e _sum:   1.5 + 2.25e0 = 3.75        e2e _count: 3 + 4 = 7
 *   queue _sum: 1.5e-3 + 0.25 = 0.2515     queue _count: 2 + 5 = 7
 *   running:    2 + 1 = 3
 */
const VLLM = [
  '# HELP vllm:num_requests_running Number of requests in model execution batches. {weird} "quoted" \\ back',
  '# TYPE vllm:num_requests_running gauge',
  'vllm:num_requests_running{model_name="m",engine="0"} 2.0',
  'vllm:num_requests_running{model_name="m",engine="1"} 1.0',
  '# HELP vllm:gpu_cache_usage_perc GPU KV-cache usage. 1 means 100 percent usage.',
  '# TYPE vllm:gpu_cache_usage_perc gauge',
  'vllm:gpu_cache_usage_perc{model_name="m",engine="0"} NaN',
  '',
  '# HELP vllm:e2e_request_latency_seconds Histogram of e2e request latency in seconds.',
  '# TYPE vllm:e2e_request_latency_seconds histogram',
  'vllm:e2e_request_latency_seconds_bucket{engine="0",le="0.3",model_name="m"} 1.0',
  'vllm:e2e_request_latency_seconds_bucket{engine="0",le="+Inf",model_name="m"} 3.0',
  'vllm:e2e_request_latency_seconds_count{engine="0",model_name="m"} 3.0',
  'vllm:e2e_request_latency_seconds_sum{engine="0",model_name="m"} 1.5',
  'vllm:e2e_request_latency_seconds_bucket{engine="1",le="0.3",model_name="m"} 0.0',
  'vllm:e2e_request_latency_seconds_bucket{engine="1",le="+Inf",model_name="m"} 4.0',
  'vllm:e2e_request_latency_seconds_count{engine="1",model_name="m"} 4.0',
  'vllm:e2e_request_latency_seconds_sum{engine="1",model_name="m"} 2.25e0',
  'vllm:e2e_request_latency_seconds_created{engine="0",model_name="m"} 1.7e+09',
  '# HELP vllm:request_queue_time_seconds Histogram of time spent in WAITING phase for request.',
  '# TYPE vllm:request_queue_time_seconds histogram',
  'vllm:request_queue_time_seconds_bucket{model_name="m",engine="0",le="+Inf"} 2.0',
  'vllm:request_queue_time_seconds_sum{model_name="m",engine="0"} 1.5e-3 1712345678901',
  'vllm:request_queue_time_seconds_count{model_name="m",engine="0"} 2.0 1712345678901',
  'vllm:request_queue_time_seconds_sum{model_name="m",engine="1"} 0.25',
  'vllm:request_queue_time_seconds_count{model_name="m",engine="1"} 5',
  'vllm:max_bound{model_name="m"} +Inf',
  'vllm:min_bound{model_name="m"} -Inf',
  'vllm:escaped{path="C:\\\\x",quote="say \\"a, b\\"",nl="1\\n2",} 1',
].join('\r\n');

describe('parsePrometheus', () => {
  const parsed = parsePrometheus(VLLM);

  it('keys samples by full name, colons included, skipping comments and blank lines', () => {
    expect(parsed.get('vllm:num_requests_running')).toEqual([
      { labels: { model_name: 'm', engine: '0' }, value: 2 },
      { labels: { model_name: 'm', engine: '1' }, value: 1 },
    ]);
    expect(parsed.get('vllm:e2e_request_latency_seconds_bucket')).toHaveLength(4);
    expect(parsed.get('vllm:e2e_request_latency_seconds_bucket')![1]).toEqual({
      labels: { engine: '0', le: '+Inf', model_name: 'm' },
      value: 3,
    });
    expect([...parsed.keys()].some((k) => k.startsWith('#') || k === '')).toBe(false);
  });

  it('reads NaN, ±Inf, exponents and values followed by a timestamp', () => {
    expect(parsed.get('vllm:gpu_cache_usage_perc')![0].value).toBeNaN();
    expect(parsed.get('vllm:max_bound')![0].value).toBe(Infinity);
    expect(parsed.get('vllm:min_bound')![0].value).toBe(-Infinity);
    expect(parsed.get('vllm:e2e_request_latency_seconds_created')![0].value).toBe(1.7e9);
    expect(parsed.get('vllm:request_queue_time_seconds_sum')!.map((s) => s.value)).toEqual([1.5e-3, 0.25]);
    expect(parsed.get('vllm:request_queue_time_seconds_count')!.map((s) => s.value)).toEqual([2, 5]);
  });

  it('unescapes label values, with commas and quotes inside, and a trailing comma', () => {
    expect(parsed.get('vllm:escaped')).toEqual([
      { labels: { path: 'C:\\x', quote: 'say "a, b"', nl: '1\n2' }, value: 1 },
    ]);
  });

  it('sums a histogram over its label sets', () => {
    expect(histogramTotals(parsed, 'e2e_request_latency_seconds')).toEqual({ sum: 3.75, count: 7 });
    expect(histogramTotals(parsed, 'vllm:e2e_request_latency_seconds')).toEqual({ sum: 3.75, count: 7 });
    expect(histogramTotals(parsed, 'request_queue_time_seconds')).toEqual({ sum: 0.2515, count: 7 });
    expect(histogramTotals(parsed, 'time_to_first_token_seconds')).toBeNull();
    // A suffix must follow the colon whole: 'latency_seconds' is not 'e2e_request_latency_seconds'.
    expect(histogramTotals(parsed, 'latency_seconds')).toBeNull();
  });

  it('sums a gauge over its label sets', () => {
    expect(gaugeValue(parsed, 'num_requests_running')).toBe(3);
    expect(gaugeValue(parsed, 'num_requests_waiting')).toBeNull();
  });

  it('prefers the exact name, then the first namespace, never both summed', () => {
    const s = parsePrometheus('a:q 1\nb:q 10\nq 100\n');
    expect(gaugeValue(s, 'q')).toBe(100);
    expect(gaugeValue(parsePrometheus('a:q 1\nb:q 10\n'), 'q')).toBe(1);
  });

  it('skips malformed lines without throwing and keeps the good ones', () => {
    const text = [
      'good 1',
      'no_value',
      'no_value_labels{a="b"}',
      'bad value',
      'hex 0x10',
      'empty_string ""',
      'two_values 1 2.5',
      'too_many 1 2 3',
      'unclosed{a="b" 1',
      'unquoted{a=b} 1',
      'bad_escape{a="\\t"} 1',
      'dup{a="1",a="2"} 1',
      'missing_comma{a="1" b="2"} 1',
      '9starts_with_digit 1',
      '{a="b"} 1',
      '\u0000\uffff garbage',
      '   ',
      '  # indented comment',
      'also_good{x="y"} 2',
    ].join('\n');
    expect(() => parsePrometheus(text)).not.toThrow();
    expect([...parsePrometheus(text).keys()]).toEqual(['good', 'also_good']);
    expect(parsePrometheus('')).toEqual(new Map());
  });
});

describe('round trip', () => {
  it('render → parse → histogramTotals gives the observed sum and count', () => {
    const reg = new Registry({ model_name: 'ci-tiny' });
    const queue = reg.add(
      new Histogram('webgpu_bench:request_queue_time_seconds', 'Queue time.', LATENCY_BUCKETS_S),
    );
    // Sum by hand: 0.5 + 0.25 + 0.125 + 4 = 4.875; count 4.
    for (const v of [0.5, 0.25, 0.125, 4]) queue.observe(v);
    reg.add(new Gauge('webgpu_bench:num_requests_running', 'Running.')).set(2);
    const s = parsePrometheus(reg.render());
    expect(histogramTotals(s, 'request_queue_time_seconds')).toEqual({ sum: 4.875, count: 4 });
    expect(gaugeValue(s, 'num_requests_running')).toBe(2);
    // Buckets come back cumulative, the +Inf one equal to the count, each with the constant label.
    const buckets = s.get('webgpu_bench:request_queue_time_seconds_bucket')!;
    expect(buckets).toHaveLength(LATENCY_BUCKETS_S.length + 1);
    expect(buckets.at(-1)).toEqual({ labels: { model_name: 'ci-tiny', le: '+Inf' }, value: 4 });
    expect(buckets.find((b) => b.labels.le === '0.25')!.value).toBe(2);
    expect(buckets.find((b) => b.labels.le === '2.5')!.value).toBe(3);
  });
});
