// npm run bench -- [--preset ci-tiny] [--suite quick] ... : the main job. Serves the built app,
// runs the benchmark in headless Chromium's engine worker, prints a live progress line and the
// Markdown table, and writes results/<date>-<adapter>-<preset>.json and .md.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { isSoftwareAdapter } from '../src/gpu/device.ts';
import { type BenchSpec, SPEC_DEFAULTS, SUITES, specFromOptions } from '../src/measure/spec.ts';
import { isPresetName, PRESET_NAMES } from '../src/model/config.ts';
import {
  compareResults,
  comparisonToMarkdown,
  findRegressions,
  formatPointKey,
  parseResultFile,
  ResultFileError,
} from '../src/results/compare.ts';
import { EXPORT_FORMATS, type ExportFormat, formatFor, toMarkdown } from '../src/results/export.ts';
import type { BenchResult, Progress } from '../src/worker/api.ts';
import { describeAdapter, engineMessage, openEngine } from './engine.ts';
import { MODEL_URL_PREFIX } from './server.ts';

/** Exit codes, documented in --help and the README. */
const EXIT = { ok: 0, failed: 1, regression: 1, usage: 2, fallback: 3, cancelled: 130 } as const;

const HELP = `Usage: npm run bench -- [options]

Measures prefill and decode on this machine's GPU through WebGPU in headless Chromium, places every
point on a roofline measured in the same run, and writes results/<date>-<adapter>-<preset>.json and .md.

Model
  --preset NAME          model shape with seeded random weights (default ci-tiny): ${PRESET_NAMES.join(', ')}
  --model DIR            a Hugging Face Llama folder (config.json + model.safetensors) instead of a preset
  --seed N               seed of the random weights (default 0)

Workloads
  --suite quick|full|kernels|capacity   a preset list of workloads (default ${SPEC_DEFAULTS.suite}):
                           quick: prefill sweep L=${SUITES.quick.prefill.join(',')}; decode sweep depth=${SUITES.quick.depths.join(',')}, gen ${SUITES.quick.gen}; reps ${SUITES.quick.reps}
                           full:  prefill sweep L=${SUITES.full.prefill.join(',')}; decode sweep depth=${SUITES.full.depths.join(',')}, gen ${SUITES.full.gen}; reps ${SUITES.full.reps}
                           kernels: the kernel suite, each kernel alone at the model's shapes (matmul,
                           GEMV, attention, element-wise), validated then timed
                           capacity: the capacity probe: builds a real KV pool (--pool-mib), admits seeded
                           sequences until allocation fails, paged then contiguous, and checks the counts
                           against the KV calculator (see npm run capacity for the estimator)
  --prefill L,L,...      prompt lengths of the prefill sweep ("" for none); makes the list custom
  --depth D,D,...        context depths of the decode sweep ("" for none; 0 is a one-token prompt)
  --gen N                tokens generated per decode repetition (≥ 2); one TPOT sample per repetition
  --reps N               measured repetitions per point after the warm-up (≥ 3)
  --warmup N             discarded warm-up repetitions per point (default ${SPEC_DEFAULTS.warmup})
  --page-size N          KV page size: 8, 16 or 32 (default ${SPEC_DEFAULTS.pageSize})
  --kv paged|contiguous  KV cache layout (default ${SPEC_DEFAULTS.kvMode}; contiguous is the A/B baseline)
  --batch N              sequences per decode step, 1…8 (default ${SPEC_DEFAULTS.batch})
  --pool-mib N           KV pool of the capacity probe, MiB over all layers (default ${SPEC_DEFAULTS.poolMiB});
                         the device's per-buffer limit may cap it
  --profile              time every kernel in every repetition (default: one profiled pass per point)
  --no-autotune          skip the per-device kernel search and use the GPU-oriented default kernels

Output
  --out FILE             write the result to FILE (format from --format, else from its extension)
  --format json|jsonl|csv|md   format of --out (default json)
  (without --out: results/<date>-<adapter>-<preset>.json and .md)

Browser
  --browser PATH         Chromium or Chrome to use (default: $CHROMIUM_PATH, Playwright's, or a system one)
  --headed               show the browser window

CI gates
  --fail-on-fallback     exit ${EXIT.fallback} before measuring if the adapter is a fallback/software one (SwiftShader, llvmpipe, WARP)
  --baseline FILE        compare with an earlier result after the run
  --max-regression PCT   with --baseline: exit ${EXIT.regression} if any matched point's median is over PCT% slower

  -h, --help             this text

Exit codes: 0 done; 1 run failed, validation failed or regression; 2 bad arguments (flags, or a spec or
model the engine rejects before measuring); 3 fallback adapter
with --fail-on-fallback; 130 cancelled (Ctrl-C; the finished points are still written).`;

function usage(message: string): never {
  console.error(`bench: ${message}\n(see npm run bench -- --help)`);
  process.exit(EXIT.usage);
}

function intList(flag: string, text: string): number[] {
  if (text.trim() === '') return [];
  const values = text.split(',').map((v) => Number(v.trim()));
  if (values.some((v) => !Number.isInteger(v) || v < 0))
    usage(`${flag} takes comma-separated whole numbers, got "${text}"`);
  return values;
}

function int(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const v = Number(text);
  if (!Number.isInteger(v)) usage(`${flag} takes a whole number, got "${text}"`);
  return v;
}

function parse() {
  try {
    return parseArgs({
      options: {
        preset: { type: 'string' },
        model: { type: 'string' },
        seed: { type: 'string' },
        suite: { type: 'string' },
        prefill: { type: 'string' },
        depth: { type: 'string' },
        gen: { type: 'string' },
        reps: { type: 'string' },
        warmup: { type: 'string' },
        'page-size': { type: 'string' },
        kv: { type: 'string' },
        batch: { type: 'string' },
        'pool-mib': { type: 'string' },
        profile: { type: 'boolean', default: false },
        'no-autotune': { type: 'boolean', default: false },
        out: { type: 'string' },
        format: { type: 'string' },
        browser: { type: 'string' },
        headed: { type: 'boolean', default: false },
        'fail-on-fallback': { type: 'boolean', default: false },
        baseline: { type: 'string' },
        'max-regression': { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (e) {
    usage((e as Error).message);
  }
}

const args = parse();
if (args.help) {
  console.log(HELP);
  process.exit(EXIT.ok);
}

// --- flags to a validated spec ------------------------------------------------------------
if (args.preset && args.model) usage('give --preset or --model, not both');
if (args.preset && !isPresetName(args.preset)) {
  usage(`unknown preset "${args.preset}"; known presets: ${PRESET_NAMES.join(', ')}`);
}
/** The named suites (custom is what explicit sweep values make, not a flag value). */
const SUITE_FLAGS = Object.keys(SUITES) as (keyof typeof SUITES)[];
const suiteName = args.suite ?? SPEC_DEFAULTS.suite;
if (!(SUITE_FLAGS as readonly string[]).includes(suiteName))
  usage(`--suite must be ${SUITE_FLAGS.join(', ')}, got "${suiteName}"`);
const format = (args.format ?? (args.out?.split('.').pop() === 'md' ? 'md' : 'json')) as ExportFormat;
if (!EXPORT_FORMATS.includes(format)) usage(`--format must be one of ${EXPORT_FORMATS.join(', ')}`);
if (args['max-regression'] !== undefined && !args.baseline) usage('--max-regression needs --baseline FILE');
const maxRegression = args['max-regression'] === undefined ? undefined : Number(args['max-regression']);
if (maxRegression !== undefined && !(Number.isFinite(maxRegression) && maxRegression >= 0)) {
  usage(`--max-regression takes a percentage ≥ 0, got "${args['max-regression']}"`);
}
let baseline: BenchResult | undefined;
if (args.baseline) {
  try {
    baseline = parseResultFile(readFileSync(args.baseline, 'utf8'), args.baseline);
  } catch (e) {
    usage(
      e instanceof ResultFileError
        ? e.message
        : `cannot read --baseline ${args.baseline}: ${(e as Error).message}`,
    );
  }
}

let spec: BenchSpec;
try {
  spec = specFromOptions(
    args.model
      ? { kind: 'url', baseUrl: MODEL_URL_PREFIX }
      : {
          kind: 'preset',
          preset: args.preset ?? SPEC_DEFAULTS.preset,
          seed: int('--seed', args.seed) ?? SPEC_DEFAULTS.seed,
        },
    {
      suite: suiteName as keyof typeof SUITES,
      prefill: args.prefill === undefined ? undefined : intList('--prefill', args.prefill),
      depths: args.depth === undefined ? undefined : intList('--depth', args.depth),
      gen: int('--gen', args.gen),
      reps: int('--reps', args.reps),
      warmup: int('--warmup', args.warmup),
      pageSize: int('--page-size', args['page-size']),
      kvMode: args.kv as 'paged' | 'contiguous' | undefined,
      batch: int('--batch', args.batch),
      poolMiB: int('--pool-mib', args['pool-mib']),
      profile: args.profile,
      autotune: !args['no-autotune'],
    },
  );
} catch (e) {
  usage((e as Error).message);
}

// --- run ------------------------------------------------------------------------------------
const fmtS = (ms: number) => `${(ms / 1000).toFixed(0)}s`;
function progressLine(p: Progress) {
  const eta = p.etaMs === null ? '' : `  ETA ${fmtS(p.etaMs)}`;
  const line = `[${p.done}/${p.total}] ${p.workload ? `${p.workload}: ` : ''}${p.label}  elapsed ${fmtS(p.elapsedMs)}${eta}`;
  if (process.stderr.isTTY) process.stderr.write(`\r\x1b[K${line}`);
  else process.stderr.write(`${line}\n`);
}

const session = await openEngine({
  browserPath: args.browser,
  headed: args.headed,
  modelDir: args.model,
}).catch((e: unknown) => {
  console.error(`bench: ${engineMessage(e)}`);
  process.exit(EXIT.failed);
});
console.error(`adapter: ${describeAdapter(session.gpu)}; browser ${session.browserVersion}`);
if (args['fail-on-fallback'] && isSoftwareAdapter(session.gpu.adapter)) {
  console.error(
    'bench: the adapter is a fallback/software adapter and --fail-on-fallback is set; not measuring.',
  );
  await session.close();
  process.exit(EXIT.fallback);
}

// The run's id: a Ctrl-C cancels it even if it has not started yet (the engine keeps the cancel).
const runId = `cli-${process.pid}-${Date.now()}`;
let interrupted = false;
process.on('SIGINT', () => {
  if (interrupted) process.exit(EXIT.cancelled);
  interrupted = true;
  console.error('\nbench: stopping after the current repetition (Ctrl-C again to quit at once)…');
  session.page.evaluate((id) => window.engine.cancel(id), runId).catch(() => undefined);
});

await session.page.exposeFunction('benchProgress', progressLine);
let result: BenchResult;
try {
  result = await session.page.evaluate(([s, id]) => window.benchRun(s, id), [spec, runId] as const);
} catch (e) {
  if (process.stderr.isTTY) process.stderr.write('\n');
  const message = engineMessage(e);
  console.error(`bench: ${message}`);
  await session.close();
  // The engine rejects bad input (a prompt past the model's length, a broken model file) before it
  // measures anything: that is a usage error, like a bad flag.
  process.exit(
    /^(SpecError|ConfigError|InputError|SafetensorsError|WeightsError):/.test(message)
      ? EXIT.usage
      : EXIT.failed,
  );
}
await session.close();
if (process.stderr.isTTY) process.stderr.write('\n');

// --- write and report -------------------------------------------------------------------------
const slug = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9.]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 40) || 'unknown';
const a = result.env.adapter;
const written: string[] = [];
if (args.out) {
  mkdirSync(dirname(args.out), { recursive: true });
  writeFileSync(args.out, formatFor(result, format));
  written.push(args.out);
} else {
  const stamp = result.createdAt.replace(/[:]/g, '-').replace(/\..*$/, '');
  const base = join(
    'results',
    `${stamp}-${slug(a.description || `${a.vendor}-${a.architecture}`)}-${slug(args.model ? 'model' : result.model.preset)}`,
  );
  mkdirSync('results', { recursive: true });
  writeFileSync(`${base}.json`, formatFor(result, 'json'));
  writeFileSync(`${base}.md`, toMarkdown(result));
  written.push(`${base}.json`, `${base}.md`);
}
console.log(toMarkdown(result));
console.log(`wrote ${written.join(', ')}`);

let code: number = EXIT.ok;
if (result.status === 'cancelled') code = EXIT.cancelled;
if (result.status === 'failed' || (result.status === 'complete' && !result.validation.passed)) {
  console.error(
    `bench: ${result.error ? `${result.error.name}: ${result.error.message}` : 'validation failed'}`,
  );
  code = EXIT.failed;
} else if (result.status === 'cancelled') {
  console.error(
    `bench: cancelled; ${result.points.length + (result.kernelPoints?.length ?? 0)} finished points written.`,
  );
}
if (baseline) {
  const cmp = compareResults([
    { name: args.baseline as string, result: baseline },
    { name: 'this run', result },
  ]);
  console.log(comparisonToMarkdown(cmp));
  if (maxRegression !== undefined) {
    const regressions = findRegressions(cmp, maxRegression);
    if (cmp.rows.every((r) => r.medianMs.some((m) => m === null))) {
      console.error('bench: no point of this run matches a point of the baseline; nothing to gate on.');
      code = EXIT.failed;
    } else if (regressions.length > 0) {
      for (const r of regressions) {
        console.error(
          `REGRESSION ${formatPointKey(r.key)}: ${r.baselineMs.toFixed(3)} ms → ${r.candidateMs.toFixed(3)} ms (+${r.slowdownPct.toFixed(1)}% > ${maxRegression}%)`,
        );
      }
      code = EXIT.regression;
    } else {
      console.log(`no regression over ${maxRegression}% against ${args.baseline}`);
    }
  }
}
process.exit(code);
