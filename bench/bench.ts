// npm run bench -- [--preset ci-tiny] [--suite quick] ... : the main job. Serves the built app,
// runs the benchmark in headless Chromium's engine worker, prints a live progress line and the
// Markdown table, and writes results/<date>-<adapter>-<preset>.json and .md.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { isSoftwareAdapter } from '../src/gpu/device.ts';
import { isKvDtype, KV_DTYPES } from '../src/kv/format.ts';
import { isPresetName, PRESET_NAMES, presetConfig } from '../src/model/config.ts';
import type { AgreementFormat } from '../src/peers/agreement.ts';
import { PromptSpellingError } from '../src/peers/prompt-text.ts';
import {
  type AgreementPrompt,
  agreementPrompt,
  failedPeer,
  peerContextSize,
  peerPlan,
  peerRecord,
  WLLAMA_TOP_K,
  wllamaInput,
  wllamaRecord,
} from '../src/peers/record.ts';
import {
  compareResults,
  comparisonToMarkdown,
  findRegressions,
  formatPointKey,
  parseResultFile,
  ResultFileError,
} from '../src/results/compare.ts';
import {
  EXPORT_FORMATS,
  type ExportFormat,
  exportFormatOfPath,
  fileSlug,
  formatFor,
  toMarkdown,
} from '../src/results/export.ts';
import { runtimeComparison } from '../src/results/runtimes.ts';
import { BenchResultSchema } from '../src/results/schema.ts';
import type { BenchResult, Progress } from '../src/runtime/api.ts';
import { parseSlo } from '../src/serve/metrics.ts';
import { traceFromJsonl, traceToJsonl } from '../src/serve/traffic.ts';
import { modelErrors } from '../src/spec/fit.ts';
import { specFromOptions } from '../src/spec/options.ts';
import type { BenchSpec } from '../src/spec/schema.ts';
import { SPEC_DEFAULTS, SUITE_NAMES, SUITES } from '../src/spec/suites.ts';
import { TASK_TOKENS_DEFAULT } from '../src/spec/workloads/formats.ts';
import { WORKLOADS } from '../src/spec/workloads/index.ts';
import { parseKvBudget } from '../src/spec/workloads/serve-kv-budget.ts';
import { parsePools, parseRoute } from '../src/spec/workloads/serve-pools.ts';
import { parseToolWait, parseTurns, SESSION_DEFAULTS } from '../src/spec/workloads/serve-sessions.ts';
import { SERVE_DEFAULTS } from '../src/spec/workloads/serve-settings.ts';
import { parseDuration, SUSTAINED_DEFAULTS } from '../src/spec/workloads/sustained.ts';
import { TASKS_QUICK_TOKENS } from '../src/spec/workloads/tasks.ts';
import { isWeightFormat, WEIGHT_FORMATS } from '../src/weight-format.ts';
import {
  defaultRuntime,
  describeAdapter,
  type EngineSession,
  engineMessage,
  openEngine,
  RUNTIME_FLAGS,
  type RuntimeName,
  RuntimeUnavailableError,
} from './engine.ts';
import { runFleet } from './fleet.ts';
import { type HttpTarget, parseTargets, replayOverHttp, traceOf } from './http-targets.ts';
import { type PeerModel, parsePeers, preparePeerModel, runPeerJob, runWllamaJob } from './peers.ts';
import { pipedProgress, progressText } from './progress-text.ts';
import { parseEndpoints, type RemoteEndpoint } from './remote.ts';
import { servedModel } from './server.ts';
import { ADAPTER_CHOICES, type AdapterChoice } from './vulkan.ts';

/** Where a suite's description starts in --help. */
const HELP_INDENT = 27;

/** Text wrapped to lines of at most 110 characters, each indented by `indent` spaces. */
function wrap(text: string, indent: number): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && indent + line.length + 1 + word.length > 110) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  lines.push(line);
  return lines.map((l) => ' '.repeat(indent) + l).join('\n');
}

/** Exit codes, documented in --help and the README. */
const EXIT = { ok: 0, failed: 1, regression: 1, usage: 2, fallback: 3, cancelled: 130 } as const;

const HELP = `Usage: npm run bench -- [options]

Measures prefill and decode on this machine's GPU through WebGPU in headless Chromium, places every
point on a roofline measured in the same run, and writes results/<date>-<adapter>-<preset>.json and .md.

Model
  --preset NAME          model shape with seeded random weights (default ci-tiny): ${PRESET_NAMES.join(', ')}
  --model PATH           a Hugging Face Llama folder (config.json + model.safetensors), or a llama.cpp
                         .gguf file (llama; F32, F16, BF16, Q8_0, Q4_0 tensors), instead of a preset
  --seed N               seed of the random weights (default 0)
  --weights FORMAT       the linear layers', embedding table's and LM head's format (a tied head is
                         the table), quantized on load: f32 (default), f16, int8 or int4 (int8/int4:
                         symmetric, a scale per group of 32 along K), or q8_0, q4_0, q4_k: GGUF's
                         types, byte for byte as llama-quantize makes them (rows of whole blocks:
                         32 weights, 256 for q4_k); with --suite formats,
                         a comma-separated list of formats to sweep (default every one the model's
                         rows can hold)

Workloads
  --suite ${SUITE_NAMES.filter((n) => n !== 'custom').join('|')}   a preset list of workloads (default ${SPEC_DEFAULTS.suite}):
                           quick: prefill sweep L=${SUITES.quick.prefill.join(',')}; decode sweep depth=${SUITES.quick.depths.join(',')}, gen ${SUITES.quick.gen}; reps ${SUITES.quick.reps};
                           then fused against unfused graph at L=${Math.max(...SUITES.quick.prefill)} and depth ${SUITES.quick.depths[0]} (as fusion);
                           on a trained preset (trained-4m), what it gets right on its held-out set,
                           ${TASKS_QUICK_TOKENS} prompt tokens a slice (--task-tokens N; the full suite ${TASK_TOKENS_DEFAULT};
                           --task-slices A,B: only those slices, here and in the formats and kv suites)
                           full:  prefill sweep L=${SUITES.full.prefill.join(',')}; decode sweep depth=${SUITES.full.depths.join(',')}, gen ${SUITES.full.gen}; reps ${SUITES.full.reps}
${WORKLOADS.flatMap((d) => (d.suite ? [wrap(`${d.suite.name}: ${d.suite.help}`, HELP_INDENT)] : [])).join('\n')}
  --prefill L,L,...      prompt lengths of the prefill sweep ("" for none); makes the list custom
  --depth D,D,...        context depths of the decode sweep ("" for none; 0 is a one-token prompt)
  --prompt TEXT          the sweeps' prompts are cut from this text, tokenized with the model's own
                         tokenizer (a GGUF file that carries one): a prefill of L takes its first L
                         tokens, a decode at depth d its first max(d, 1); a named suite skips the
                         values the text is too short for (and says so), typed ones are refused.
                         Suites quick, full, fusion or custom (default: deterministic stand-in tokens)
  --prompt-file F        the same, the text read from a file (UTF-8)
  --gen N                tokens generated per decode repetition (≥ 2); one TPOT sample per repetition
  --reps N               measured repetitions per point after the warm-up (≥ 3)
  --warmup N             discarded warm-up repetitions per point (default ${SPEC_DEFAULTS.warmup})
  --page-size N          KV page size: 8, 16 or 32 (default ${SPEC_DEFAULTS.pageSize})
  --kv paged|contiguous  KV cache layout (default ${SPEC_DEFAULTS.kvMode}; contiguous is the A/B baseline)
  --kv-dtype TYPE        how the KV cache stores K and V: ${KV_DTYPES.join(', ')} (default ${SPEC_DEFAULTS.kvDtype}); f16 is
                         pairs packed in u32, int8 one f32 scale per token and KV head; with --suite kv,
                         a comma-separated list of types to sweep
  --window W             sliding-window attention: each position sees the last W tokens, and pages
                         wholly out of the window return to the pool (default: full attention); longer
                         than one KV page, shorter than the model's maxSeqLen; with --suite kv, a list
                         such as none,64 (none: full attention)
  --batch N              sequences per decode step, 1…32 (in chunks of 8 rows) (default ${SPEC_DEFAULTS.batch})
  --pool-mib N           KV pool of the capacity probe and of the kv suite's fits columns, MiB over all
                         layers (default ${SPEC_DEFAULTS.poolMiB}); the device's per-buffer limit may cap it
  --kv-heads K,K,...     kv: KV head counts of the variants, each dividing the model's heads (its
                         heads: MHA; 1: MQA; between: GQA) (default: chosen by the suite)
  --drafter LIST         spec: drafters, comma-separated (default ${SPEC_DEFAULTS.drafters.join(',')}):
                         ngram[:MIN-MAX] prompt lookup; model:PRESET a smaller preset with the same
                         vocabulary; truncated:N the target's first N layers; oracle:P synthetic,
                         each drafted token right with probability P (calibration only)
  --k K                  spec: draft length, 1…16 (default ${SPEC_DEFAULTS.draftK}); a verify pass holds K + 1 tokens
  --adaptive-k           spec: shrink K after a rejection, grow it back after a full acceptance
  --verify-k K,K,...     spec: the verify-K curve's sizes, 1…17 (default ${SPEC_DEFAULTS.verifyKs.join(',')})
  --temperature T        spec: speculative sampling at temperature T (0 < T ≤ 10), against plain
                         sampling of the same prompts (default: greedy, checked token for token)

Kernels and graph
  --profile              profile every repetition, not one run per point (per-kernel times; never
                         inside the timed samples)
  --no-autotune          skip the per-device kernel search: the GPU-oriented default families on a
                         GPU, the barrier-free ones the search picks on SwiftShader on a software
                         adapter (the report warns)
  --no-fuse              build the run's model on the unfused graph (16 dispatches per layer), the
                         fused graph's reference; the result records the graph the model ran

Load test (--suite serve)
  --rate R | --concurrency C   Poisson arrivals at R requests/s (inf: all at t = 0; default: 90% of the
                         saturation rate, measured first), or a closed loop keeping C requests in flight
  --burstiness B         gamma inter-arrivals of shape B (1 = Poisson, < 1 burstier; default 1)
  --requests N | --duration S   requests in the trace (default ${SERVE_DEFAULTS.requests}), or stop arrivals after S seconds
  --mix default|matrix   default mix, or the request-type matrix (short/long in × out, alone then mixed)
  --trace FILE.jsonl     replay a trace (arrival_s, prompt_len, output_len, prefix_id, class, priority)
  --trace-out FILE.jsonl write the trace the run used
  --prefix TOKENS --prefix-share F   a shared system prompt on a share F of requests (default F ${SERVE_DEFAULTS.prefixShare})
  --priority-share F --policy fcfs|priority   high-priority requests; under priority they may preempt
  --slo ttft:MS,tpot:MS,e2el:MS   SLOs for goodput (any subset)
  --batching continuous|static|both   (default both)
  --prefix-cache on|off|both          (default off)
  --token-budget N       tokens per engine step (default ${SERVE_DEFAULTS.tokenBudget}); --max-batch N requests running (default ${SERVE_DEFAULTS.maxBatch}, ≤ 32)
  --kv-tokens N          KV pool in tokens (default: max batch × the model's maxSeqLen)
  --pools A:S,B:S --route RULE   two pools on the one engine, each its share S of the KV pages,
                         batch slots and step budget, its own queue and scheduler; RULE (prompt>T,
                         prompt<T, output>T, output<T or class=NAME) sends a request to B, else to A
  --kv-budget TOKENS|P%  the most KV one request may hold (prompt + output − 1), in tokens or a share
                         of the pool; --kv-budget-policy reject (default: refused at admission) or
                         truncate (the prompt's oldest tokens after the shared prefix are dropped)
  --sweep N              rate sweep: synchronous, saturating, then N rates between
  --sessions N --turns A..B --tool-wait DIST   agent sessions: each turn sends the whole history
                         (previous prompt, its answer, a tool result, a new message) after the tool
                         wait; DIST is fixed:MS, uniform:A..B or lognormal:MEDIAN[:SIGMA] (defaults
                         ${SESSION_DEFAULTS.turns} turns, ${SESSION_DEFAULTS.toolWait}); --rate is then sessions/s
  --no-solo              skip running each request alone (no slowdown, no identical-output check)
  --target LIST          in-process (always, first), loopback (this project's server, npm run serve-api),
                         and base URLs ending in /v1 (vLLM, llama-server): each replays the in-process
                         arms' traces over streaming HTTP (docs/serving-http.md)
  --served-model NAME    the model field for URL targets (default: the first of their /v1/models)
  --http-timeout S       a request with no byte for S seconds fails as a timeout (default 120)

Sustained load (--suite sustained)
  --duration D           how long the passes repeat: 90, 90s, 5m or 1h (default ${SUSTAINED_DEFAULTS.durationS / 60}m)
  --interval S           seconds per tok/s window (default ${SUSTAINED_DEFAULTS.windowS})
  --roofs-every S        measure the FMA and copy roofs again every S seconds (default ${SUSTAINED_DEFAULTS.roofEveryS})

Output
  --out FILE             write the result to FILE (format from --format, else from its extension)
  --format json|jsonl|csv|md   format of --out (default json)
  (without --out: results/<date>-<adapter>-<preset>.json and .md)

Runtime
  --runtime browser|node|both   where the engine runs (default: browser where one is found, else node):
                         browser: headless Chromium's Web Worker; node: Node on Dawn (npm webgpu), no
                         browser needed; both: the same spec in each, one after the other, and a table
                         of the browser's own cost (median ratios, submit and dispatch overheads)
  --adapter default|swiftshader  node: the installed GPU driver (default), or Chromium's SwiftShader
  --browser PATH         Chromium or Chrome to use (default: $CHROMIUM_PATH, Playwright's, or a system one)
  --headed               show the browser window

Remote browsers (a fleet, one device at a time; docs/remote.md)
  --connect WS[,WS]      Playwright browser servers (npm run browser-server on each machine): the
                         remote browser opens the page this CLI serves on 127.0.0.1, through the
                         connection (Playwright's network exposure); repeat or comma-separate
  --cdp URL[,URL]        Chromium DevTools endpoints (device clouds); the browser must reach the page:
                         this machine's loopback when it runs here, else --page-url
  --page-url URL         where a remote browser opens the app (e.g. the static build on any host)
  --out-dir DIR          where each device's result goes, named by its adapter (default results/fleet-<time>)

Peers (the same weights through another engine, beside this run)
  --peer LIST            llama.cpp[:cpu|gpu|auto] (default cpu), wllama[:webgpu|cpu] (default webgpu):
                         the run's model is written as a GGUF file in --weights' format (f32 F32,
                         f16 F16, int8 Q8_0, int4 Q4_0, q8_0/q4_0/q4_k their own type) that this engine then loads too. llama.cpp
                         runs natively (node-llama-cpp, its own process); wllama is llama.cpp in
                         WebAssembly in a browser page (llama.cpp's WebGPU backend where it engages,
                         else its CPU backend). Each is timed on the same prompt lengths, depths,
                         gen and reps, and its next-token log-probabilities are compared with this
                         engine's. A peer that cannot run is recorded with its reason; the run's
                         own points are kept
  --peer-timeout S       stop a peer after S seconds (default 600)
  --agreement-tokens N   positions the agreement compares (default 32); with --prompt or --prompt-file,
                         cut from that text (a trained model is then compared on text it knows)

CI gates
  --fail-on-fallback     exit ${EXIT.fallback} before measuring if the adapter is a fallback/software one (SwiftShader, llvmpipe, WARP)
  --baseline FILE        compare with an earlier result after the run
  --max-regression PCT   with --baseline: exit ${EXIT.regression} if any matched point's median is over PCT% slower

  -h, --help             this text

Exit codes: 0 done; 1 run failed, validation failed or regression; 2 bad arguments (flags, or a spec or
model the engine rejects before measuring); 3 no usable runtime or adapter (no browser, no Vulkan
loader, no adapter: the message says what to install), or a fallback adapter with --fail-on-fallback;
130 cancelled (Ctrl-C; the finished points are still written).`;

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
        weights: { type: 'string' },
        suite: { type: 'string' },
        prefill: { type: 'string' },
        depth: { type: 'string' },
        prompt: { type: 'string' },
        'prompt-file': { type: 'string' },
        gen: { type: 'string' },
        reps: { type: 'string' },
        warmup: { type: 'string' },
        'page-size': { type: 'string' },
        kv: { type: 'string' },
        'kv-dtype': { type: 'string' },
        window: { type: 'string' },
        'kv-heads': { type: 'string' },
        batch: { type: 'string' },
        'pool-mib': { type: 'string' },
        drafter: { type: 'string' },
        k: { type: 'string' },
        'adaptive-k': { type: 'boolean', default: false },
        temperature: { type: 'string' },
        'verify-k': { type: 'string' },
        rate: { type: 'string' },
        concurrency: { type: 'string' },
        burstiness: { type: 'string' },
        requests: { type: 'string' },
        duration: { type: 'string' },
        interval: { type: 'string' },
        'roofs-every': { type: 'string' },
        mix: { type: 'string' },
        trace: { type: 'string' },
        'trace-out': { type: 'string' },
        prefix: { type: 'string' },
        'prefix-share': { type: 'string' },
        'priority-share': { type: 'string' },
        policy: { type: 'string' },
        slo: { type: 'string' },
        batching: { type: 'string' },
        'prefix-cache': { type: 'string' },
        'token-budget': { type: 'string' },
        'max-batch': { type: 'string' },
        'kv-tokens': { type: 'string' },
        sessions: { type: 'string' },
        turns: { type: 'string' },
        'tool-wait': { type: 'string' },
        'kv-budget': { type: 'string' },
        'kv-budget-policy': { type: 'string' },
        pools: { type: 'string' },
        route: { type: 'string' },
        sweep: { type: 'string' },
        target: { type: 'string' },
        'served-model': { type: 'string' },
        'http-timeout': { type: 'string' },
        'no-solo': { type: 'boolean', default: false },
        'no-quality': { type: 'boolean', default: false },
        'task-tokens': { type: 'string' },
        'task-slices': { type: 'string' },
        profile: { type: 'boolean', default: false },
        'no-autotune': { type: 'boolean', default: false },
        'no-fuse': { type: 'boolean', default: false },
        out: { type: 'string' },
        format: { type: 'string' },
        runtime: { type: 'string' },
        adapter: { type: 'string' },
        browser: { type: 'string' },
        headed: { type: 'boolean', default: false },
        connect: { type: 'string', multiple: true },
        cdp: { type: 'string', multiple: true },
        'page-url': { type: 'string' },
        'out-dir': { type: 'string' },
        'fail-on-fallback': { type: 'boolean', default: false },
        baseline: { type: 'string' },
        'max-regression': { type: 'string' },
        peer: { type: 'string' },
        'peer-timeout': { type: 'string' },
        'agreement-tokens': { type: 'string' },
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
const outFormat = args.out && !args.format ? exportFormatOfPath(args.out) : undefined;
if (outFormat === null)
  usage(
    `--out ${args.out}: its extension names no format (.json, .jsonl, .csv or .md); rename it or pass --format`,
  );
const format = (args.format ?? outFormat ?? 'json') as ExportFormat;
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

function num(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (/^inf(inity)?$/i.test(text.trim())) return Number.POSITIVE_INFINITY;
  const v = Number(text);
  if (text.trim() === '' || !Number.isFinite(v)) usage(`${flag} takes a number, got "${text}"`);
  return v;
}

/** --duration of the sustained suite: seconds, or with a unit (90s, 5m, 1h). */
function duration(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const s = parseDuration(text);
  if (!Number.isFinite(s) || s <= 0)
    usage(`--duration takes seconds or a time such as 90s, 5m or 1h, got "${text}"`);
  return s;
}

/** --kv-dtype: one KV type, or (--suite kv) a comma-separated list of them. */
function kvDtypes(text: string | undefined) {
  if (text === undefined) return undefined;
  return text.split(',').map((t) => {
    const v = t.trim();
    if (!isKvDtype(v)) usage(`--kv-dtype: "${v}" is not a KV type (${KV_DTYPES.join(', ')})`);
    return v;
  });
}

/** --kv-heads: KV head counts, each at least 1 (whether each divides the heads is the model's check). */
function kvHeads(text: string | undefined): number[] | undefined {
  if (text === undefined) return undefined;
  const values = intList('--kv-heads', text);
  if (values.length === 0 || values.some((v) => v < 1))
    usage(`--kv-heads takes comma-separated KV head counts of at least 1, got "${text}"`);
  return values;
}

/** --window: tokens, or none (full attention); with --suite kv a comma-separated list of them. */
function windows(text: string | undefined): (number | null)[] | undefined {
  if (text === undefined) return undefined;
  return text.split(',').map((t) => {
    const v = t.trim();
    if (v === 'none') return null;
    const n = Number(v);
    if (v === '' || !Number.isInteger(n) || n <= 0)
      usage(`--window takes a positive whole number of tokens (or none), got "${v}"`);
    return n;
  });
}

function oneOf<T extends string>(
  flag: string,
  text: string | undefined,
  values: readonly T[],
): T | undefined {
  if (text === undefined) return undefined;
  if (!(values as readonly string[]).includes(text))
    usage(`${flag} must be ${values.join(', ')}, got "${text}"`);
  return text as T;
}

const SERVE_FLAGS = [
  'rate',
  'concurrency',
  'burstiness',
  'requests',
  'duration',
  'mix',
  'trace',
  'trace-out',
  'prefix',
  'prefix-share',
  'priority-share',
  'policy',
  'slo',
  'batching',
  'prefix-cache',
  'token-budget',
  'max-batch',
  'kv-tokens',
  'sweep',
  'target',
  'served-model',
  'http-timeout',
  'sessions',
  'turns',
  'tool-wait',
  'kv-budget',
  'kv-budget-policy',
  'pools',
  'route',
] as const;
// --duration is the load test's arrival window or the sustained suite's length; the rest are the load test's.
const serveFlags = SERVE_FLAGS.filter(
  (f) => args[f] !== undefined && !(f === 'duration' && suiteName === 'sustained'),
);
if (args['no-solo']) serveFlags.push('no-solo' as never);
const sustainedFlags = (['interval', 'roofs-every'] as const).filter((f) => args[f] !== undefined);
/** "--a applies to …", "--a, --b apply to …": the verb agrees with the flags named. */
const applyTo = (flags: readonly string[], suite: string) =>
  `${flags.map((f) => `--${f}`).join(', ')} ${flags.length === 1 ? 'applies' : 'apply'} to --suite ${suite}`;
if (sustainedFlags.length > 0 && suiteName !== 'sustained') {
  usage(applyTo(sustainedFlags, 'sustained'));
}
if (args['kv-heads'] !== undefined && suiteName !== 'kv') usage('--kv-heads applies to --suite kv');
// The case study takes the load test's size and scheduler flags; the rest are its own.
const CASE_FLAGS: readonly string[] = [
  'requests',
  'slo',
  'max-batch',
  'token-budget',
  'no-solo',
  'target',
  'served-model',
  'http-timeout',
];
if (serveFlags.length > 0 && suiteName !== 'serve') {
  const foreign = suiteName === 'case' ? serveFlags.filter((f) => !CASE_FLAGS.includes(f)) : serveFlags;
  if (foreign.length > 0) usage(applyTo(foreign, 'serve'));
}
let importedTrace: ReturnType<typeof traceFromJsonl> | undefined;
if (args.trace) {
  try {
    importedTrace = traceFromJsonl(readFileSync(args.trace, 'utf8'));
  } catch (e) {
    usage(`--trace ${args.trace}: ${(e as Error).message}`);
  }
}
let slo: ReturnType<typeof parseSlo> | undefined;
if (args.slo !== undefined) {
  try {
    slo = parseSlo(args.slo);
  } catch (e) {
    usage(`--slo: ${(e as Error).message}`);
  }
}

/** --prompt TEXT or --prompt-file F: the text the sweeps' prompts are cut from. */
/** --pools with --route (both or neither), or nothing; bad values exit 2 naming the flag. */
function poolsOption() {
  if (args.pools === undefined && args.route === undefined) return undefined;
  if (args.pools === undefined) usage('--route sends requests to a pool: add --pools NAME:SHARE,NAME:SHARE');
  if (args.route === undefined)
    usage('--pools needs a rule to route by: add --route prompt>T (or output>T, class=NAME)');
  const pools = parsePools(args.pools);
  if (typeof pools === 'string') usage(pools);
  const route = parseRoute(args.route);
  if (typeof route === 'string') usage(route);
  return { pools, route };
}

/** --kv-budget TOKENS|P% with --kv-budget-policy (default reject), or nothing. */
function kvBudgetOption() {
  const policy = oneOf('--kv-budget-policy', args['kv-budget-policy'], ['reject', 'truncate'] as const);
  if (args['kv-budget'] === undefined) {
    if (policy !== undefined)
      usage('--kv-budget-policy says what happens at a --kv-budget: add --kv-budget TOKENS');
    return undefined;
  }
  const b = parseKvBudget(args['kv-budget']);
  if (typeof b === 'string') usage(b);
  return { ...b, policy: policy ?? 'reject' };
}

/** --sessions N with --turns and --tool-wait (each defaulted), or nothing; bad values exit 2 naming the flag. */
function sessionsOption() {
  if (args.sessions === undefined) {
    if (args.turns !== undefined || args['tool-wait'] !== undefined)
      usage('--turns and --tool-wait shape agent sessions: add --sessions N');
    return undefined;
  }
  const count = int('--sessions', args.sessions) as number;
  try {
    return {
      count,
      turns: parseTurns(args.turns ?? SESSION_DEFAULTS.turns),
      toolWait: parseToolWait(args['tool-wait'] ?? SESSION_DEFAULTS.toolWait),
    };
  } catch (e) {
    usage((e as Error).message);
  }
}

function promptText(): { text: string; source: string } | undefined {
  if (args.prompt !== undefined && args['prompt-file'] !== undefined)
    usage('give --prompt or --prompt-file, not both');
  if (args.prompt === undefined && args['prompt-file'] === undefined) return undefined;
  if (!args.model)
    usage('--prompt and --prompt-file need a model with a tokenizer: --model F.gguf (a preset has none)');
  if (args.prompt !== undefined) return { text: args.prompt, source: '--prompt' };
  const file = args['prompt-file'] as string;
  try {
    return { text: readFileSync(file, 'utf8'), source: `--prompt-file ${file}` };
  } catch (e) {
    usage(`--prompt-file ${file}: ${(e as Error).message}`);
  }
}

let spec: BenchSpec;
try {
  spec = specFromOptions(
    args.model
      ? servedModel(args.model).source
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
      kvDtype: kvDtypes(args['kv-dtype']),
      window: windows(args.window),
      kvHeads: kvHeads(args['kv-heads']),
      batch: int('--batch', args.batch),
      poolMiB: int('--pool-mib', args['pool-mib']),
      weights:
        args.weights === undefined
          ? undefined
          : args.weights.split(',').map((f) => {
              const t = f.trim();
              if (!isWeightFormat(t))
                usage(`--weights: "${t}" is not a format (${WEIGHT_FORMATS.join(', ')})`);
              return t;
            }),
      drafters:
        args.drafter === undefined
          ? undefined
          : args.drafter
              .split(',')
              .map((d) => d.trim())
              .filter(Boolean),
      k: int('--k', args.k),
      adaptiveK: args['adaptive-k'],
      verifyKs: args['verify-k'] === undefined ? undefined : intList('--verify-k', args['verify-k']),
      temperature: num('--temperature', args.temperature),
      profile: args.profile,
      autotune: !args['no-autotune'],
      fuse: !args['no-fuse'],
      rate: num('--rate', args.rate),
      concurrency: int('--concurrency', args.concurrency),
      burstiness: num('--burstiness', args.burstiness),
      requests: int('--requests', args.requests),
      durationS: suiteName === 'sustained' ? duration(args.duration) : num('--duration', args.duration),
      windowS: num('--interval', args.interval),
      roofEveryS: num('--roofs-every', args['roofs-every']),
      mix: oneOf('--mix', args.mix, ['default', 'matrix'] as const),
      prefixTokens: int('--prefix', args.prefix),
      prefixShare: num('--prefix-share', args['prefix-share']),
      priorityShare: num('--priority-share', args['priority-share']),
      policy: oneOf('--policy', args.policy, ['fcfs', 'priority'] as const),
      slo,
      batching: oneOf('--batching', args.batching, ['continuous', 'static', 'both'] as const),
      prefixCache: oneOf('--prefix-cache', args['prefix-cache'], ['on', 'off', 'both'] as const),
      tokenBudget: int('--token-budget', args['token-budget']),
      maxBatch: int('--max-batch', args['max-batch']),
      kvTokens: int('--kv-tokens', args['kv-tokens']),
      sweep: int('--sweep', args.sweep),
      solo: !args['no-solo'],
      quality: !args['no-quality'],
      taskTokens: int('--task-tokens', args['task-tokens']),
      ...(args['task-slices'] !== undefined && {
        taskSlices: args['task-slices']
          .split(',')
          .map((t) => t.trim())
          .filter(Boolean),
      }),
      trace: importedTrace,
      sessions: sessionsOption(),
      kvBudget: kvBudgetOption(),
      pools: poolsOption(),
      prompt: promptText(),
    },
  );
} catch (e) {
  usage((e as Error).message);
}
if (spec.suite !== 'formats' && args['no-quality']) usage('--no-quality applies to --suite formats');
if (
  spec.suite !== 'formats' &&
  spec.suite !== 'kv' &&
  !spec.workloads.some((w) => w.kind === 'tasks') &&
  (args['task-tokens'] !== undefined || args['task-slices'] !== undefined)
)
  usage(
    '--task-tokens and --task-slices apply to --suite formats, --suite kv, and the quick and full suites on a trained model',
  );
if (
  spec.suite !== 'spec' &&
  (args.drafter || args.k || args['adaptive-k'] || args['verify-k'] || args.temperature)
) {
  usage('--drafter, --k, --adaptive-k, --verify-k and --temperature apply to --suite spec');
}
// A draft preset's vocabulary, a truncation's layer count, KV heads that do not divide the heads
// and a window the model cannot take are known before any engine starts.
if (spec.model.kind === 'preset') {
  const problems = modelErrors(spec, presetConfig(spec.model.preset));
  if (problems.length > 0) usage(problems.join('; '));
}

// --- peers: parsed before anything is measured; the model file both engines load ---------------
let peerRequests: ReturnType<typeof parsePeers> = [];
if (args.peer !== undefined) {
  try {
    peerRequests = parsePeers(args.peer);
  } catch (e) {
    usage((e as Error).message);
  }
}
const peerTimeoutMs = (num('--peer-timeout', args['peer-timeout']) ?? 600) * 1000;
if (!(peerTimeoutMs > 0)) usage('--peer-timeout takes a number of seconds > 0');
if (args['peer-timeout'] !== undefined && peerRequests.length === 0) usage('--peer-timeout needs --peer');
const agreementTokens = int('--agreement-tokens', args['agreement-tokens']);
if (agreementTokens !== undefined && peerRequests.length === 0) usage('--agreement-tokens needs --peer');
if (agreementTokens !== undefined && agreementTokens < 1) usage('--agreement-tokens takes a count ≥ 1');
if (peerRequests.length > 0 && spec.suite === 'formats')
  usage('--peer runs one weight format: not with --suite formats');
/** The path the engine loads the model from: --model, or the GGUF file written for the peers. */
let modelPath = args.model;
let peerModel: PeerModel | undefined;
if (peerRequests.length > 0) {
  peerModel = preparePeerModel(
    spec,
    args.model,
    join(process.env.BENCH_CACHE_DIR ?? join('results', '.cache'), 'peers'),
  );
  if ('file' in peerModel) {
    modelPath = peerModel.file;
    spec = { ...spec, model: servedModel(peerModel.file).source };
    console.error(`peers: both engines load ${peerModel.file} (${peerModel.fileType})`);
  } else {
    console.error(`peers: ${peerModel.error}; the run goes on without them`);
  }
}
/** This engine's logits on the agreement prompt, per runtime, taken before its session closes. */
const engineLogits = new Map<RuntimeName, number[][]>();
const engineLogitsErrors: string[] = [];

// --- --target: the load test over HTTP, after the in-process arms it replays ------------------
let httpTargets: HttpTarget[] = [];
if (args.target !== undefined) {
  try {
    httpTargets = parseTargets(args.target);
  } catch (e) {
    usage((e as Error).message);
  }
  if (httpTargets.some((t) => t.kind === 'loopback') && spec.model.kind !== 'preset')
    usage('--target loopback serves a preset (npm run serve-api takes --preset): not with --model');
}
if (args['served-model'] !== undefined && !httpTargets.some((t) => t.kind === 'url'))
  usage('--served-model names the model of a --target URL');
const httpTimeoutMs = (num('--http-timeout', args['http-timeout']) ?? 120) * 1000;
if (!(httpTimeoutMs > 0)) usage('--http-timeout takes a number of seconds > 0');

const runtimeFlag = args.runtime ?? defaultRuntime(args.browser);
if (!(RUNTIME_FLAGS as readonly string[]).includes(runtimeFlag)) {
  usage(`--runtime must be ${RUNTIME_FLAGS.join(', ')}, got "${runtimeFlag}"`);
}
const adapter = (args.adapter ?? 'default') as AdapterChoice;
if (!ADAPTER_CHOICES.includes(adapter))
  usage(`--adapter must be ${ADAPTER_CHOICES.join(', ')}, got "${args.adapter}"`);
if (args.adapter && runtimeFlag === 'browser')
  usage('--adapter applies to --runtime node (the browser picks its own)');
const runtimes: RuntimeName[] = runtimeFlag === 'both' ? ['browser', 'node'] : [runtimeFlag as RuntimeName];

// --- remote browsers: a fleet ---------------------------------------------------------------
let remotes: RemoteEndpoint[] = [];
try {
  remotes = [...parseEndpoints('connect', args.connect ?? []), ...parseEndpoints('cdp', args.cdp ?? [])];
} catch (e) {
  usage((e as Error).message);
}
if (remotes.length === 0 && (args['out-dir'] || args['page-url']))
  usage('--out-dir and --page-url apply to remote browsers (--connect, --cdp)');
if (remotes.length > 0) {
  const clash = [
    args.runtime && args.runtime !== 'browser' ? `--runtime ${args.runtime}` : '',
    args.out ? '--out (a fleet writes one file per device: --out-dir)' : '',
    args.peer ? '--peer' : '',
    httpTargets.length > 0 ? '--target' : '',
    args.baseline ? '--baseline' : '',
    args.headed ? '--headed' : '',
    args.browser ? '--browser' : '',
    args['fail-on-fallback'] ? '--fail-on-fallback' : '',
  ].filter(Boolean);
  if (clash.length > 0) usage(`remote browsers run the page's engine alone: not with ${clash.join(', ')}`);
  if (args['page-url']) {
    try {
      new URL(args['page-url']);
    } catch {
      usage(`--page-url ${args['page-url']}: not a URL`);
    }
    if (modelPath) usage('--page-url serves no model folder: with --page-url, use a --preset');
  }
}

// --- run ------------------------------------------------------------------------------------
const piped = pipedProgress();
function progressLine(p: Progress) {
  if (process.stderr.isTTY) {
    process.stderr.write(`\r\x1b[K${progressText(p)}`);
    return;
  }
  const line = piped(p);
  if (line !== null) process.stderr.write(`${line}\n`);
}

// The run's id: a Ctrl-C cancels it even if it has not started yet (the engine keeps the cancel).
const runId = `cli-${process.pid}-${Date.now()}`;
let session: EngineSession | undefined;
let interrupted = false;
process.on('SIGINT', () => {
  if (interrupted) process.exit(EXIT.cancelled);
  interrupted = true;
  console.error('\nbench: stopping after the current repetition (Ctrl-C again to quit at once)…');
  session?.cancel(runId).catch(() => undefined);
  fleetSession?.cancel(runId).catch(() => undefined);
});
/** The fleet's session in flight, for Ctrl-C. */
let fleetSession: EngineSession | undefined;

/** The peers' agreement prompt, whose logits each run takes from its own model. */
let probe: AgreementPrompt | undefined;
if (peerModel && 'file' in peerModel) {
  const c = peerModel.weights.config;
  try {
    probe = agreementPrompt(c.maxSeqLen, c.vocabSize, peerModel.prompts, {
      positions: agreementTokens,
      text: promptText()?.text,
    });
  } catch (e) {
    if (e instanceof PromptSpellingError) usage(`the agreement prompt: ${e.message}`);
    throw e;
  }
  if (agreementTokens !== undefined && probe.ids.length - probe.from < agreementTokens)
    usage(
      `--agreement-tokens ${agreementTokens}: the model's context holds ${probe.ids.length - probe.from} positions after the prompt's first token`,
    );
}
const probeTokens = probe?.ids;

/** Runs the spec in one runtime and returns its result; exits on what cannot become a result. */
async function runIn(runtime: RuntimeName): Promise<BenchResult> {
  session = await openEngine({
    runtime,
    browserPath: args.browser,
    headed: args.headed,
    adapter,
    modelDir: modelPath ? servedModel(modelPath).dir : undefined,
  }).catch((e: unknown) => {
    console.error(`bench: ${engineMessage(e)}`);
    process.exit(e instanceof RuntimeUnavailableError ? EXIT.fallback : EXIT.failed);
  });
  const s = session;
  console.error(`adapter: ${describeAdapter(s.gpu)}; ${runtime} runtime, ${s.version}`);
  if (args['fail-on-fallback'] && isSoftwareAdapter(s.gpu.adapter)) {
    console.error(
      'bench: the adapter is a fallback/software adapter and --fail-on-fallback is set; not measuring.',
    );
    await s.close();
    process.exit(EXIT.fallback);
  }
  let result: BenchResult;
  try {
    result = await s.run(spec, runId, progressLine, probeTokens);
  } catch (e) {
    if (process.stderr.isTTY) process.stderr.write('\n');
    const message = engineMessage(e);
    console.error(`bench: ${message}`);
    await s.close();
    // The engine rejects bad input (a prompt past the model's length, a broken model file) before it
    // measures anything: that is a usage error, like a bad flag.
    process.exit(
      /^(SpecError|ConfigError|InputError|SafetensorsError|WeightsError):/.test(message)
        ? EXIT.usage
        : EXIT.failed,
    );
  }
  if (probeTokens && result.status === 'complete') {
    // The agreement prompt's logits, taken from the run's own model after its workloads.
    const probe = await s.takeProbe(runId);
    if (probe && 'logits' in probe) engineLogits.set(runtime, probe.logits);
    else engineLogitsErrors.push(`${runtime}: ${probe?.error ?? 'the run took no logits'}`);
  }
  await s.close();
  if (process.stderr.isTTY) process.stderr.write('\n');
  return result;
}

if (remotes.length > 0) {
  const stamp = new Date().toISOString().replace(/[:]/g, '-').replace(/\..*$/, '');
  const outcomes = await runFleet({
    remotes,
    spec,
    pageUrl: args['page-url'],
    modelDir: modelPath ? servedModel(modelPath).dir : undefined,
    outDir: args['out-dir'] ?? join('results', `fleet-${stamp}`),
    // Each device is its own page and engine, so they share the run's id (and Ctrl-C's cancel).
    runId: () => runId,
    progress: progressLine,
    onSession: (s) => {
      fleetSession = s;
    },
    interrupted: () => interrupted,
  });
  const ok = outcomes.filter((o) => o.status === 'complete').length;
  console.error(`fleet: ${ok} of ${outcomes.length} devices finished`);
  process.exit(interrupted ? EXIT.cancelled : ok === outcomes.length ? EXIT.ok : EXIT.failed);
}

const results: BenchResult[] = [];
for (const runtime of runtimes) {
  results.push(await runIn(runtime));
  if (interrupted) break;
}

// --- the same traffic over HTTP: each target replays the in-process arms ----------------------
if (httpTargets.length > 0 && !interrupted) {
  const stop = new AbortController();
  process.on('SIGINT', () => stop.abort());
  for (const result of results) {
    if (result.status !== 'complete') continue;
    const warnings = await replayOverHttp(result, {
      targets: httpTargets,
      servedModel: args['served-model'],
      preset: result.model.preset,
      seed: spec.model.kind === 'preset' ? spec.model.seed : 0,
      weights: spec.weights,
      pageSize: spec.kv.pageSize,
      adapter,
      timeoutMs: httpTimeoutMs,
      log: (line) => console.error(line),
      signal: stop.signal,
    });
    for (const w of warnings) console.error(`bench: ${w}`);
    result.warnings.push(...warnings);
    // The HTTP arms are checked against the one result schema like everything the engine wrote.
    const checked = BenchResultSchema.safeParse(result);
    if (!checked.success) {
      const issue = checked.error.issues[0];
      console.error(
        `bench: the HTTP arms make an invalid result at ${issue.path.join('.')}: ${issue.message}`,
      );
      process.exit(EXIT.failed);
    }
  }
}

// --- peers: after the engine is done, so they do not share the machine with it ----------------
if (peerModel && peerRequests.length > 0 && !interrupted) {
  for (const request of peerRequests) {
    const name = `${request.engine}:${request.backend}`;
    let records: Map<RuntimeName, import('../src/peers/schema.ts').PeerRecord>;
    if (!('file' in peerModel)) {
      const failed = failedPeer(request, {}, peerModel.error);
      records = new Map(results.map((r) => [r.env.runtime?.name ?? 'browser', failed]));
    } else {
      const c = peerModel.weights.config;
      const plan = peerPlan(spec, c.vocabSize, peerModel.prompts);
      const prompt = probe ?? agreementPrompt(c.maxSeqLen, c.vocabSize, peerModel.prompts);
      const contextSize = peerContextSize(plan, c.maxSeqLen, prompt.ids.length);
      console.error(
        `peers: ${name} on ${peerModel.fileType}: prefill ${plan.prefill.join(',') || '–'}, depth ${plan.depths.join(',') || '–'}, gen ${plan.gen}, reps ${plan.reps}…`,
      );
      const model = { file: peerModel.file, fileType: peerModel.fileType };
      try {
        const recordFor =
          request.engine === 'llama.cpp'
            ? await runPeerJob(
                { file: model.file, backend: request.backend, contextSize, plan, prompt: prompt.ids },
                peerTimeoutMs,
              ).then(
                (job) => (logits: number[][] | undefined, format: AgreementFormat) =>
                  peerRecord(request, model, job, logits, format, prompt.from),
              )
            : await (async () => {
                const input = wllamaInput(prompt, peerModel.prompts);
                const job = await runWllamaJob(
                  { backend: request.backend, contextSize, plan, ...input, topK: WLLAMA_TOP_K },
                  model.file,
                  peerTimeoutMs,
                  args.browser,
                );
                return (logits: number[][] | undefined, format: AgreementFormat) =>
                  wllamaRecord(request, model, job, logits, format, input);
              })();
        records = new Map(
          results.map((r) => {
            const runtime = r.env.runtime?.name ?? 'browser';
            // The agreement's bound is the format this engine ran (a GGUF file's own: a Q4_K_M
            // file is "mixed"), not the --weights flag, which a --model GGUF does not set.
            return [runtime, recordFor(engineLogits.get(runtime), r.model.weightFormat ?? spec.weights)];
          }),
        );
      } catch (e) {
        const failed = failedPeer(request, model, (e as Error).message);
        records = new Map(results.map((r) => [r.env.runtime?.name ?? 'browser', failed]));
      }
    }
    for (const r of results) {
      const record = records.get(r.env.runtime?.name ?? 'browser');
      if (!record) continue;
      r.peers = [...(r.peers ?? []), record];
      if (record.error) console.error(`peers: ${name}: ${record.error}`);
      else if (record.agreement && !record.agreement.passed)
        console.error(
          `peers: ${name}: the next-token agreement with this engine failed its bound (see the report)`,
        );
    }
  }
  for (const why of engineLogitsErrors) console.error(`peers: no agreement for ${why}`);
}

// --- write and report -------------------------------------------------------------------------
// --trace-out: the trace the load test's A/B arms (else its first arm) used, as JSONL.
if (args['trace-out']) {
  const serve = results[0]?.serve;
  const run = serve?.runs.find((r) => r.experiment === 'ab') ?? serve?.runs[0];
  if (run) {
    mkdirSync(dirname(args['trace-out']), { recursive: true });
    writeFileSync(args['trace-out'], traceToJsonl(traceOf(run)));
    console.error(`wrote the trace of "${run.label}" to ${args['trace-out']}`);
  }
}
const slug = (s: string) => fileSlug(s, 40);
/** Where a result goes: --out (suffixed by runtime when both ran), else results/<date>-<adapter>-<preset>[-node]. */
function writeResult(result: BenchResult): string[] {
  const runtime = result.env.runtime?.name ?? 'browser';
  const suffix = runtimes.length > 1 || runtime === 'node' ? `-${runtime}` : '';
  if (args.out) {
    const out = runtimes.length > 1 ? args.out.replace(/(\.[^./]+)?$/, (ext) => `${suffix}${ext}`) : args.out;
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, formatFor(result, format));
    return [out];
  }
  const a = result.env.adapter;
  const stamp = result.createdAt.replace(/[:]/g, '-').replace(/\..*$/, '');
  const base = join(
    'results',
    `${stamp}-${slug(a.description || `${a.vendor}-${a.architecture}`)}-${slug(args.model ? 'model' : result.model.preset)}${suffix}`,
  );
  mkdirSync('results', { recursive: true });
  writeFileSync(`${base}.json`, formatFor(result, 'json'));
  writeFileSync(`${base}.md`, toMarkdown(result));
  return [`${base}.json`, `${base}.md`];
}

let code: number = EXIT.ok;
for (const result of results) {
  const written = writeResult(result);
  console.log(toMarkdown(result));
  console.log(`wrote ${written.join(', ')}`);
  if (result.status === 'cancelled' && code === EXIT.ok) code = EXIT.cancelled;
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
}
if (results.length === 2) console.log(runtimeComparison(results[0], results[1]));
const result = results[results.length - 1];
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
