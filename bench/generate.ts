// npm run generate -- (--model F.gguf | --preset NAME) --prompt "…" [--max-tokens N] [--ignore-eos]
// Text in, text out: tokenizes the prompt with the file's own tokenizer, builds the model once on
// the GPU (headless Chromium's worker, or Node on Dawn), checks it against the CPU reference,
// then generates greedily and streams the text to stdout as each token is read back. TTFT, TPOT
// and tokens/s follow on stderr, each with its clock.
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { isSoftwareAdapter } from '../src/gpu/device.ts';
import { isPresetName, PRESET_NAMES, presetConfig, presetFiles } from '../src/model/config.ts';
import { PRESET_VOCABS } from '../src/model/preset-vocab.ts';
import { samplingProblem } from '../src/model/sampler.ts';
import { parameterCount } from '../src/model/weights.ts';
import type { GenerateEvent, GenerateResult } from '../src/runtime/api.ts';
import { decodeTokensPerS, MAX_GENERATE_TOKENS } from '../src/spec/prompt.ts';
import {
  defaultRuntime,
  describeAdapter,
  type EngineSession,
  engineMessage,
  openEngine,
  type RuntimeName,
  RuntimeUnavailableError,
} from './engine.ts';
import { servedModel } from './server.ts';
import { ADAPTER_CHOICES, type AdapterChoice } from './vulkan.ts';

const EXIT = { ok: 0, failed: 1, usage: 2, unavailable: 3, cancelled: 130 } as const;

/** The default number of tokens: llama-simple's. */
const DEFAULT_MAX_TOKENS = 32;

const HELP = `Usage: npm run generate -- (--model F.gguf | --preset NAME) (--prompt "…" | --prompt-file F) [options]

Generates text greedily from a prompt on this machine's GPU through WebGPU. The prompt is tokenized
with the model file's own tokenizer as llama.cpp's tools tokenize it (BOS where the file asks for
one, special-token texts read as those tokens); the model is built once and checked against the
float64 CPU reference; the text streams to stdout as each token is read back (never half a
character). Then, on stderr: TTFT, TPOT and tokens/s on the engine's wall clock.

  --model F.gguf       a llama.cpp GGUF file that carries its tokenizer (llama, qwen2, qwen3)
  --preset NAME        trained-4m (the model trained here, with its own tokenizer), or a preset with its
                       family's vocabulary (${Object.keys(PRESET_VOCABS).join(', ')}):
                       seeded random weights, so the text is the vocabulary's tokens at random
  --seed N             seed of the preset's random weights (default 0)
  --prompt "…"         the prompt text
  --prompt-file F      the prompt, read from a file (UTF-8)
  --max-tokens N       tokens to generate at most, 1…${MAX_GENERATE_TOKENS} (default ${DEFAULT_MAX_TOKENS}); fewer when an
                       end-of-generation token comes first
  --ignore-eos         go on past end-of-generation tokens, to exactly N (as llama.cpp's --ignore-eos)
  --temperature T      sample instead of greedy: logits ÷ T (0…10; default 0, greedy), then
  --top-k K            keep the K most likely tokens (default 0: all),
  --top-p P            keep the fewest most likely tokens reaching probability P (default 1: all),
  --sampling-seed S    and draw with this seed (default 0): a seed gives the same text every run
  --runtime browser|node   where the engine runs (default: browser where one is found, else node on Dawn)
  --adapter default|swiftshader   node: the installed GPU driver (default), or Chromium's SwiftShader
  --browser PATH       Chromium or Chrome to use (default: $CHROMIUM_PATH, Playwright's, or a system one)
  --headed             show the browser window
  -h, --help           this text

Exit codes: 0 done; 1 the run failed (the model does not match the CPU reference, a lost device);
2 bad arguments, or a model or prompt the engine refuses (no tokenizer in the file, a prompt and
--max-tokens past the model's context, a broken file); 3 no usable runtime or adapter; 130 Ctrl-C.`;

function usage(message: string): never {
  console.error(`generate: ${message}\n(see npm run generate -- --help)`);
  process.exit(EXIT.usage);
}

function parse() {
  try {
    return parseArgs({
      options: {
        model: { type: 'string' },
        preset: { type: 'string' },
        seed: { type: 'string', default: '0' },
        prompt: { type: 'string' },
        'prompt-file': { type: 'string' },
        'max-tokens': { type: 'string' },
        'ignore-eos': { type: 'boolean', default: false },
        temperature: { type: 'string' },
        'top-k': { type: 'string' },
        'top-p': { type: 'string' },
        'sampling-seed': { type: 'string' },
        runtime: { type: 'string' },
        adapter: { type: 'string' },
        browser: { type: 'string' },
        headed: { type: 'boolean', default: false },
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
if ((args.model === undefined) === (args.preset === undefined))
  usage('give one of --model F.gguf or --preset NAME');
if (args.model !== undefined && !existsSync(args.model)) usage(`--model ${args.model}: no such file`);
if (args.preset !== undefined && !isPresetName(args.preset))
  usage(`--preset: unknown preset "${args.preset}" (known: ${PRESET_NAMES.join(', ')})`);
const seed = Number(args.seed);
if (!Number.isInteger(seed) || seed < 0) usage(`--seed takes a whole number ≥ 0, got "${args.seed}"`);
if ((args.prompt === undefined) === (args['prompt-file'] === undefined))
  usage('give one of --prompt "…" or --prompt-file F');
let prompt = args.prompt ?? '';
if (args['prompt-file'] !== undefined) {
  try {
    prompt = readFileSync(args['prompt-file'], 'utf8');
  } catch (e) {
    usage(`--prompt-file ${args['prompt-file']}: ${(e as Error).message}`);
  }
}
if (prompt === '') usage('the prompt is empty');
const maxTokens = Number(args['max-tokens'] ?? DEFAULT_MAX_TOKENS);
if (!Number.isInteger(maxTokens) || maxTokens < 1 || maxTokens > MAX_GENERATE_TOKENS)
  usage(`--max-tokens takes a whole number in 1…${MAX_GENERATE_TOKENS}, got "${args['max-tokens']}"`);
const sampling = {
  temperature: Number(args.temperature ?? 0),
  topK: Number(args['top-k'] ?? 0),
  topP: Number(args['top-p'] ?? 1),
  seed: Number(args['sampling-seed'] ?? 0),
};
const samplingBad = samplingProblem(sampling);
if (samplingBad) usage(samplingBad);
const sampled = sampling.temperature > 0;
if (!sampled && (args['top-k'] || args['top-p'] || args['sampling-seed']))
  usage('--top-k, --top-p and --sampling-seed need --temperature above 0 (0 is greedy)');
const runtime = (args.runtime ?? defaultRuntime(args.browser)) as RuntimeName;
if (runtime !== 'browser' && runtime !== 'node')
  usage(`--runtime must be browser or node, got "${args.runtime}"`);
const adapter = (args.adapter ?? 'default') as AdapterChoice;
if (!ADAPTER_CHOICES.includes(adapter))
  usage(`--adapter must be ${ADAPTER_CHOICES.join(', ')}, got "${args.adapter}"`);
if (args.adapter && runtime === 'browser')
  usage('--adapter applies to --runtime node (the browser picks its own)');

const served = args.model
  ? servedModel(args.model)
  : { dir: undefined, source: { kind: 'preset' as const, preset: args.preset ?? '', seed } };
const runId = `generate-${process.pid}-${Date.now()}`;
let session: EngineSession | undefined;
let interrupted = false;
process.on('SIGINT', () => {
  if (interrupted) process.exit(EXIT.cancelled);
  interrupted = true;
  console.error('\ngenerate: stopping after the current token (Ctrl-C again to quit at once)…');
  session?.cancel(runId).catch(() => undefined);
});

session = await openEngine({
  runtime,
  adapter,
  browserPath: args.browser,
  headed: args.headed,
  modelDir: served.dir,
}).catch((e: unknown) => {
  console.error(`generate: ${engineMessage(e)}`);
  process.exit(e instanceof RuntimeUnavailableError ? EXIT.unavailable : EXIT.failed);
});
const s = session;
console.error(`adapter: ${describeAdapter(s.gpu)} (${runtime} runtime, ${s.version})`);

let streamed = false;
const onEvent = (e: GenerateEvent) => {
  if (e.type === 'status') console.error(`${e.message}…`);
  else {
    process.stdout.write(e.text);
    streamed = true;
  }
};
let result: GenerateResult;
try {
  result = await s.generate(
    {
      model: served.source,
      prompt,
      maxTokens,
      ignoreEos: args['ignore-eos'],
      ...(sampled ? { sampling } : {}),
    },
    runId,
    onEvent,
  );
} catch (e) {
  if (streamed) process.stdout.write('\n');
  const message = engineMessage(e);
  await s.close();
  if (interrupted) {
    console.error('generate: cancelled');
    process.exit(EXIT.cancelled);
  }
  console.error(`generate: ${message}`);
  // What the engine refuses before it builds anything (no tokenizer, a prompt past the context, a
  // broken file) is bad input, like a bad flag.
  process.exit(
    /^(SpecError|ConfigError|InputError|SafetensorsError|WeightsError|TokenizerError):/.test(message)
      ? EXIT.usage
      : EXIT.failed,
  );
}
await s.close();
// The text alone goes to stdout, byte for byte; a terminal gets a line break after it.
if (process.stdout.isTTY) process.stdout.write('\n');

const g = result.generation;
const ms = (v: number) => `${v.toFixed(1)} ms`;
const clock = `wall clock in the engine (performance.now() in the ${runtime === 'browser' ? "browser's worker" : 'Node host'})`;
const n = g.tokens.length;
const stopped =
  g.stop === 'eog' ? 'stopped at an end-of-generation token' : `stopped at --max-tokens ${maxTokens}`;
for (const w of result.warnings) console.error(`warning: ${w}`);
console.error(
  `model: ${result.modelName}; checked against the CPU reference (max rel err ${result.validation.maxRelErr?.toExponential(2) ?? 'n/a'}); load ${ms(result.timings.loadMs)}, upload ${ms(result.timings.buildMs)}, check ${ms(result.timings.checkMs)}; ${ms(result.timings.compileMs)} compiling kernels in all`,
);
const tokens = (k: number) => `${k} token${k === 1 ? '' : 's'}`;
console.error(`prompt: ${tokens(g.promptTokens.length)} [${g.promptTokens.join(',')}]`);
console.error(`generated: ${tokens(n)}, ${stopped}${args['ignore-eos'] ? ' (--ignore-eos)' : ''}`);
console.error(`token ids: ${g.tokens.join(',')}`);
console.error(
  g.sampling
    ? `sampled: temperature ${g.sampling.temperature}, top-k ${g.sampling.topK || 'all'}, top-p ${g.sampling.topP}, seed ${g.sampling.seed}`
    : 'greedy',
);
console.error(
  `TTFT ${ms(g.ttftMs)}: prefill of ${tokens(g.promptTokens.length)} submitted → first token read back; ${clock}`,
);
const tps = decodeTokensPerS(g);
if (g.tpotMs !== null && tps !== null) {
  console.error(`TPOT ${ms(g.tpotMs)}: (last token − first token) ÷ ${n - 1}; ${clock}`);
  console.error(`tokens/s ${tps.toFixed(1)}: decode, 1000 ÷ TPOT; ${clock}`);
} else {
  console.error('TPOT and tokens/s: none (one token generated)');
}
if (args.preset && presetFiles(args.preset).file)
  console.error(
    `note: ${args.preset} is a ${(parameterCount(presetConfig(args.preset)) / 1e6).toFixed(2)}M-parameter model trained here on Debian's files and generated tasks (docs/trained-model.md), not a product model.`,
  );
else if (args.preset)
  console.error(
    `note: ${args.preset} has seeded random weights with its family's vocabulary: the text is that vocabulary's tokens at random, not a trained model's.`,
  );
if (isSoftwareAdapter(s.gpu.adapter))
  console.error('note: a software adapter: these times describe a CPU emulation of WebGPU, not a GPU.');
process.exit(EXIT.ok);
