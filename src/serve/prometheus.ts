import { InputError } from '../errors.ts';

/**
 * Prometheus metrics in the text exposition format 0.0.4, both ways: the OpenAI-compatible server
 * renders its own at `GET /metrics`, and the load-test client parses a scrape of vLLM's or ours
 * before and after an arm, so the two servers' queue and latency histograms read the same way.
 *
 * Pure on purpose (no Node APIs): the server, the client and the tests all share it.
 *
 * Only what the benchmark needs: counters, gauges and histograms with one constant label set per
 * registry (vLLM labels every sample with model_name); no per-sample labels, no summaries, no
 * exemplars. The parser is lenient the other way: a scrape of a foreign server never throws, and a
 * line it cannot read is skipped, so one odd line costs one sample, not the whole scrape.
 */

export const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Request latencies, 1 ms to 60 s: fine steps where interactive latencies sit, coarse past 10 s. */
export const LATENCY_BUCKETS_S: readonly number[] = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 60,
];

/** Per-token latencies (TPOT, ITL), 0.5 ms to 2.5 s: a decode step on a small model is a few ms. */
export const TOKEN_LATENCY_BUCKETS_S: readonly number[] = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4,
  0.5, 0.75, 1, 2.5,
];

// ---------------------------------------------------------------------------------------------
// Metrics

export type MetricType = 'counter' | 'gauge' | 'histogram';

/** One line of a metric's output, before the registry adds the constant labels and formats it. */
export interface MetricSample {
  /** Appended to the metric's name: '' or '_bucket', '_sum', '_count'. */
  suffix: string;
  /** The bucket's upper bound, rendered as the last label `le`. */
  le?: number;
  value: number;
}

export interface Metric {
  readonly name: string;
  readonly help: string;
  readonly type: MetricType;
  samples(): MetricSample[];
}

// The same grammar Prometheus enforces; checked when a metric is made, so a typo fails at start-up
// rather than as a scrape the far side rejects.
const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

function checkMetricName(name: string): void {
  if (!METRIC_NAME.test(name)) throw new InputError(`metric name ${JSON.stringify(name)} is not valid`);
}

export class Counter implements Metric {
  readonly type = 'counter';
  private total = 0;

  /** The name should end with `_total`; that is left to the caller, as in the official clients. */
  constructor(
    readonly name: string,
    readonly help: string,
  ) {
    checkMetricName(name);
  }

  inc(by = 1): void {
    // A counter only goes up: rate() reads any decrease as a restart of the server.
    if (!(Number.isFinite(by) && by >= 0)) throw new InputError(`${this.name}: inc by ${by}, must be ≥ 0`);
    this.total += by;
  }

  get value(): number {
    return this.total;
  }

  samples(): MetricSample[] {
    return [{ suffix: '', value: this.total }];
  }
}

export class Gauge implements Metric {
  readonly type = 'gauge';
  private current = 0;

  /**
   * With `collect`, the value is read at each render instead of set: the right form for a number
   * that already lives elsewhere (the scheduler's queue length), which would otherwise need
   * mirroring at every change.
   */
  constructor(
    readonly name: string,
    readonly help: string,
    private readonly collect?: () => number,
  ) {
    checkMetricName(name);
  }

  set(v: number): void {
    // Both forms at once would make the value depend on which was last; refuse rather than guess.
    if (this.collect) throw new InputError(`${this.name}: set() on a gauge that collects its value`);
    this.current = v;
  }

  get value(): number {
    return this.collect ? this.collect() : this.current;
  }

  samples(): MetricSample[] {
    return [{ suffix: '', value: this.value }];
  }
}

export class Histogram implements Metric {
  readonly type = 'histogram';
  private readonly bounds: readonly number[];
  /** Observations per bucket, not cumulative; the last is the implied `+Inf` bucket. */
  private readonly counts: number[];
  private total = 0;

  /** `buckets` are upper bounds in seconds, strictly ascending and finite; `+Inf` is implied. */
  constructor(
    readonly name: string,
    readonly help: string,
    buckets: readonly number[],
  ) {
    checkMetricName(name);
    buckets.forEach((b, i) => {
      if (!Number.isFinite(b) || (i > 0 && b <= buckets[i - 1])) {
        throw new InputError(`${name}: buckets must be finite and strictly ascending, got [${buckets}]`);
      }
    });
    this.bounds = [...buckets];
    this.counts = new Array(buckets.length + 1).fill(0);
  }

  observe(seconds: number): void {
    // NaN would turn _sum into NaN for good; ±Inf likewise. Latencies are always finite.
    if (!Number.isFinite(seconds)) throw new InputError(`${this.name}: observe(${seconds})`);
    // `le` is inclusive: an observation equal to a bound falls in that bound's bucket.
    let i = 0;
    while (i < this.bounds.length && seconds > this.bounds[i]) i++;
    this.counts[i]++;
    this.total += seconds;
  }

  get count(): number {
    return this.counts.reduce((a, b) => a + b, 0);
  }

  get sum(): number {
    return this.total;
  }

  samples(): MetricSample[] {
    const out: MetricSample[] = [];
    let cumulative = 0;
    this.counts.forEach((c, i) => {
      cumulative += c;
      out.push({
        suffix: '_bucket',
        le: i < this.bounds.length ? this.bounds[i] : Infinity,
        value: cumulative,
      });
    });
    out.push({ suffix: '_sum', value: this.total }, { suffix: '_count', value: cumulative });
    return out;
  }
}

// ---------------------------------------------------------------------------------------------
// Rendering

/** Integers plain, floats in JS's shortest round-trip form (Go's ParseFloat reads both), +Inf, -Inf, NaN. */
export function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

function escapeLabelValue(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** HELP text escapes only backslash and newline: a quote there is literal. */
function escapeHelp(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function labelSet(pairs: readonly (readonly [string, string])[]): string {
  if (pairs.length === 0) return '';
  return `{${pairs.map(([k, v]) => `${k}="${escapeLabelValue(v)}"`).join(',')}}`;
}

export class Registry {
  private readonly metrics: Metric[] = [];
  private readonly constLabels: readonly (readonly [string, string])[];

  /** `constLabels` go on every sample, before `le`, in the order given (e.g. `{model_name: 'ci-tiny'}`). */
  constructor(constLabels: Readonly<Record<string, string>> = {}) {
    for (const k of Object.keys(constLabels)) {
      // `le` belongs to buckets, and names starting with `__` are reserved to Prometheus itself.
      if (!LABEL_NAME.test(k) || k === 'le' || k.startsWith('__')) {
        throw new InputError(`constant label name ${JSON.stringify(k)} is not allowed`);
      }
    }
    this.constLabels = Object.entries(constLabels);
  }

  /** Returns the metric, so it can be made and registered in one line. */
  add<M extends Metric>(metric: M): M {
    // Two families of one name would be rejected by the scraper as a whole, not just the duplicate.
    if (this.metrics.some((m) => m.name === metric.name)) {
      throw new InputError(`metric ${metric.name} is already registered`);
    }
    this.metrics.push(metric);
    return metric;
  }

  /** The whole exposition, each line ending in '\n' (the format requires the last one too). */
  render(): string {
    const lines: string[] = [];
    for (const m of this.metrics) {
      lines.push(`# HELP ${m.name} ${escapeHelp(m.help)}`, `# TYPE ${m.name} ${m.type}`);
      for (const s of m.samples()) {
        const pairs =
          s.le === undefined ? this.constLabels : [...this.constLabels, ['le', formatValue(s.le)] as const];
        lines.push(`${m.name}${s.suffix}${labelSet(pairs)} ${formatValue(s.value)}`);
      }
    }
    return lines.map((l) => `${l}\n`).join('');
  }
}

// ---------------------------------------------------------------------------------------------
// Parsing

export interface Sample {
  labels: Record<string, string>;
  value: number;
}

const NAME_AT = /[a-zA-Z_:][a-zA-Z0-9_:]*/y;
const LABEL_NAME_AT = /[a-zA-Z_][a-zA-Z0-9_]*/y;
const FLOAT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const TIMESTAMP = /^-?\d+$/;
const ESCAPES: Record<string, string> = { '\\': '\\', '"': '"', n: '\n' };

/**
 * A sample value as Go's ParseFloat reads it in practice: decimal with optional exponent, or the
 * words NaN and [+-]Inf in any case. `Number()` alone would also take '', '0x1f' and 'Infinity'.
 */
function parseValue(s: string): number | null {
  const lower = s.toLowerCase();
  if (lower === 'nan') return Number.NaN;
  if (lower === 'inf' || lower === '+inf') return Infinity;
  if (lower === '-inf') return -Infinity;
  return FLOAT.test(s) ? Number(s) : null;
}

/** A cursor over one line; each read returns null on anything it does not expect. */
class LineReader {
  pos = 0;
  constructor(readonly line: string) {}

  skipSpace(): void {
    while (this.line[this.pos] === ' ' || this.line[this.pos] === '\t') this.pos++;
  }

  match(re: RegExp): string | null {
    re.lastIndex = this.pos;
    const m = re.exec(this.line);
    if (!m) return null;
    this.pos += m[0].length;
    return m[0];
  }

  /** A double-quoted label value, unescaped; the opening quote is at `pos`. */
  quoted(): string | null {
    if (this.line[this.pos] !== '"') return null;
    let out = '';
    for (let i = this.pos + 1; i < this.line.length; i++) {
      const c = this.line[i];
      if (c === '"') {
        this.pos = i + 1;
        return out;
      }
      if (c === '\\') {
        const e = ESCAPES[this.line[++i]];
        if (e === undefined) return null;
        out += e;
      } else {
        out += c;
      }
    }
    return null;
  }

  /** `{name="value",...}` with an optional trailing comma; the opening brace is at `pos`. */
  labels(): Record<string, string> | null {
    const labels: Record<string, string> = {};
    this.pos++;
    for (;;) {
      this.skipSpace();
      if (this.line[this.pos] === '}') {
        this.pos++;
        return labels;
      }
      const name = this.match(LABEL_NAME_AT);
      if (name === null || Object.hasOwn(labels, name)) return null;
      this.skipSpace();
      if (this.line[this.pos++] !== '=') return null;
      this.skipSpace();
      const value = this.quoted();
      if (value === null) return null;
      labels[name] = value;
      this.skipSpace();
      if (this.line[this.pos] === ',') this.pos++;
      else if (this.line[this.pos] !== '}') return null;
    }
  }
}

/** One sample line, or null when it is malformed. */
function parseLine(line: string): { name: string; sample: Sample } | null {
  const r = new LineReader(line);
  r.skipSpace();
  const name = r.match(NAME_AT);
  if (name === null) return null;
  r.skipSpace();
  let labels: Record<string, string> = {};
  if (line[r.pos] === '{') {
    const parsed = r.labels();
    if (parsed === null) return null;
    labels = parsed;
  }
  // The rest is the value and an optional integer timestamp in ms, which we have no use for.
  const rest = line
    .slice(r.pos)
    .trim()
    .split(/[ \t]+/);
  if (rest.length > 2 || (rest.length === 2 && !TIMESTAMP.test(rest[1]))) return null;
  const value = parseValue(rest[0]);
  return value === null ? null : { name, sample: { labels, value } };
}

/**
 * Every sample of a text exposition, keyed by full sample name (`vllm:e2e_request_latency_seconds_sum`),
 * in the order they appear. Comments, HELP and TYPE lines and blank lines are skipped, and so is any
 * line that does not parse: this reads other servers' output and must not throw on it.
 */
export function parsePrometheus(text: string): Map<string, Sample[]> {
  const out = new Map<string, Sample[]>();
  for (const raw of text.split('\n')) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '' || line.trimStart().startsWith('#')) continue;
    const parsed = parseLine(line);
    if (parsed === null) continue;
    const list = out.get(parsed.name);
    if (list) list.push(parsed.sample);
    else out.set(parsed.name, [parsed.sample]);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Reading a scrape

/**
 * The metric a short name stands for among `names`: the name itself, else the first name that is
 * `<namespace>:<suffix>`, so one reader finds `vllm:request_queue_time_seconds` in vLLM's scrape and
 * `webgpu_bench:request_queue_time_seconds` in ours. First, not all: summing two namespaces that
 * both happen to be exposed would count every request twice.
 */
function resolve(names: Iterable<string>, suffix: string): string | null {
  let prefixed: string | null = null;
  for (const n of names) {
    if (n === suffix) return n;
    if (prefixed === null && n.endsWith(`:${suffix}`)) prefixed = n;
  }
  return prefixed;
}

function total(samples: readonly Sample[]): number {
  return samples.reduce((a, s) => a + s.value, 0);
}

/**
 * A histogram's `_sum` and `_count`, each summed over every label set (vLLM labels by model_name
 * and engine), or null when the scrape has no such histogram. Differences of two scrapes give the
 * mean over the time between them.
 */
export function histogramTotals(
  samples: ReadonlyMap<string, readonly Sample[]>,
  suffix: string,
): { sum: number; count: number } | null {
  const bases = [...samples.keys()]
    .filter((k) => k.endsWith('_count'))
    .map((k) => k.slice(0, -'_count'.length));
  const base = resolve(bases, suffix);
  if (base === null) return null;
  const sum = samples.get(`${base}_sum`);
  const count = samples.get(`${base}_count`);
  if (!sum || !count) return null;
  return { sum: total(sum), count: total(count) };
}

/** A gauge's (or counter's) value summed over every label set, or null when the scrape lacks it. */
export function gaugeValue(samples: ReadonlyMap<string, readonly Sample[]>, suffix: string): number | null {
  const name = resolve(samples.keys(), suffix);
  return name === null ? null : total(samples.get(name)!);
}
