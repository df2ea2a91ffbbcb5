// npm run verify -- (--preset ci-tiny | --model DIR|FILE.safetensors|FILE.gguf) --tokens 1,17,42,7,99 [--save-model DIR] [--save-logits FILE]
// Runs prefill on the GPU in headless Chromium, compares every logit with the CPU reference,
// and exits 1 on a mismatch.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import { isPresetName, PRESET_NAMES, presetConfig } from '../src/model/config.ts';
import { loadGgufModel } from '../src/model/gguf-load.ts';
import { loadHfModel, saveHfModel } from '../src/model/hf.ts';
import { type ModelWeights, randomWeights, weightsChecksum } from '../src/model/weights.ts';
import type { ModelSource, VerifyResult } from '../src/runtime/api.ts';
import {
  defaultRuntime,
  describeAdapter,
  engineMessage,
  openEngine,
  type RuntimeName,
  RuntimeUnavailableError,
} from './engine.ts';
import { servedModel } from './server.ts';
import { ADAPTER_CHOICES, type AdapterChoice } from './vulkan.ts';

const HELP = `Usage: npm run verify -- (--preset NAME | --model PATH) --tokens IDS [options]

Runs a prefill of the given tokens on the GPU (WebGPU in headless Chromium), compares the logits at
every position with the float64 CPU reference, and exits 1 if the normwise relative error exceeds 1e-3.

  --preset NAME        built-in model shape with seeded random weights: ${PRESET_NAMES.join(', ')}
  --model PATH         a Hugging Face Llama folder (PATH/config.json + PATH/model.safetensors, f32/f16/bf16),
                       or a .safetensors file with config.json beside it, or a llama.cpp .gguf file
                       (architecture llama; F32, F16, BF16, Q8_0, Q4_0 tensors): the reference then
                       computes with the exact dequantization of the file's weights
  --seed N             seed of the random weights for --preset (default 0)
  --tokens IDS         comma-separated token ids, e.g. 1,17,42,7,99
  --save-model DIR     write DIR/config.json and DIR/model.safetensors (loadable by LlamaForCausalLM.from_pretrained)
  --save-logits FILE   write {"tokens":[...],"logits":[[...], ...]} from the GPU run, one row per position
  --runtime browser|node   where the engine runs (default: browser where one is found, else node on Dawn)
  --adapter default|swiftshader   node: the installed GPU driver (default), or Chromium's SwiftShader
  --browser PATH       Chromium or Chrome to use (default: $CHROMIUM_PATH, Playwright's, or a system one)
  --headed             show the browser window
  -h, --help           this text

Exit codes: 0 match, 1 mismatch or run failure, 2 bad arguments, 3 no usable runtime or adapter.`;

function fail(message: string, code: number): never {
  console.error(`verify: ${message}`);
  process.exit(code);
}

function parse() {
  try {
    const { values } = parseArgs({
      options: {
        preset: { type: 'string' },
        model: { type: 'string' },
        seed: { type: 'string', default: '0' },
        tokens: { type: 'string' },
        'save-model': { type: 'string' },
        'save-logits': { type: 'string' },
        runtime: { type: 'string' },
        adapter: { type: 'string' },
        browser: { type: 'string' },
        headed: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    });
    return values;
  } catch (e) {
    fail(`${(e as Error).message}\n\n${HELP}`, 2);
  }
}

const args = parse();
if (args.help) {
  console.log(HELP);
  process.exit(0);
}
if (!args.preset === !args.model) fail('give exactly one of --preset NAME or --model PATH (see --help)', 2);
if (args.preset && !isPresetName(args.preset)) {
  fail(`unknown preset "${args.preset}"; known presets: ${PRESET_NAMES.join(', ')}`, 2);
}
if (!args.tokens) fail('--tokens is required, e.g. --tokens 1,17,42,7,99', 2);
const tokens = args.tokens.split(',').map((t) => Number(t.trim()));
if (tokens.some((t) => !Number.isInteger(t) || t < 0)) {
  fail(`--tokens must be comma-separated non-negative integers, got "${args.tokens}"`, 2);
}
const runtime = (args.runtime ?? defaultRuntime(args.browser)) as RuntimeName;
if (runtime !== 'browser' && runtime !== 'node')
  fail(`--runtime must be browser or node, got "${args.runtime}"`, 2);
const adapter = (args.adapter ?? 'default') as AdapterChoice;
if (!ADAPTER_CHOICES.includes(adapter))
  fail(`--adapter must be ${ADAPTER_CHOICES.join(', ')}, got "${args.adapter}"`, 2);
const seed = Number(args.seed);
if (!Number.isInteger(seed) || seed < 0) fail(`--seed must be a non-negative integer, got "${args.seed}"`, 2);

// The same weights the worker will use, loaded here too, to save them and to check both sides agree.
let weights: ModelWeights;
let source: ModelSource;
try {
  if (args.preset) {
    weights = randomWeights(presetConfig(args.preset), seed);
    source = { kind: 'preset', preset: args.preset, seed };
  } else {
    const served = servedModel(args.model as string);
    source = served.source;
    const file = served.source.weightsFile ?? 'model.safetensors';
    const bytes = new Uint8Array(readFileSync(join(served.dir, file)));
    if (/\.gguf$/i.test(file)) {
      weights = loadGgufModel(bytes, basename(file)).weights;
    } else {
      const config: unknown = JSON.parse(readFileSync(join(served.dir, 'config.json'), 'utf8'));
      weights = loadHfModel(config, bytes, join(served.dir, file)).weights;
    }
  }
} catch (e) {
  fail(`could not load the model: ${(e as Error).message}`, 2);
}
const bad = tokens.find((t) => t >= weights.config.vocabSize);
if (bad !== undefined) fail(`token ${bad} is outside the vocabulary (0…${weights.config.vocabSize - 1})`, 2);

let result: VerifyResult;
const session = await openEngine({
  runtime,
  adapter,
  browserPath: args.browser,
  headed: args.headed,
  modelDir: args.model ? servedModel(args.model).dir : undefined,
}).catch((e: unknown) => fail(engineMessage(e), e instanceof RuntimeUnavailableError ? 3 : 1));
try {
  console.log(`adapter: ${describeAdapter(session.gpu)} (${runtime} runtime, ${session.version})`);
  result = await session.verify({ model: source, tokens });
} catch (e) {
  await session.close();
  fail(engineMessage(e), 1);
}
await session.close();

const c = result.config;
console.log(
  `model: ${result.modelName} (${result.params.toLocaleString('en-US')} params; d=${c.hiddenSize}, layers=${c.numLayers}, heads=${c.numHeads}/${c.numKvHeads}, vocab=${c.vocabSize})`,
);
for (const w of result.warnings) console.log(`warning: ${w}`);
console.log(`tokens: ${tokens.join(',')}`);
console.log(
  `prefill ${result.timings.prefillMs.toFixed(1)} ms (pipelines compiled in ${result.timings.compileMs.toFixed(0)} ms), CPU reference ${result.timings.referenceMs.toFixed(0)} ms`,
);
console.log(`max abs err: ${result.maxAbsErr.toExponential(3)}`);
console.log(`max rel err: ${result.maxRelErr.toExponential(3)} (normwise, bound ${result.tolerance})`);

const localChecksum = weightsChecksum(weights);
if (localChecksum !== result.weightsChecksum) {
  fail(
    `the engine used different weights (checksum ${result.weightsChecksum}) from this process (${localChecksum})`,
    1,
  );
}
if (args['save-logits']) {
  writeFileSync(args['save-logits'], JSON.stringify({ tokens, logits: result.logits }));
  console.log(`wrote ${args['save-logits']}`);
}
if (args['save-model']) {
  const { configJson, safetensors } = saveHfModel(weights);
  mkdirSync(args['save-model'], { recursive: true });
  writeFileSync(join(args['save-model'], 'config.json'), configJson);
  writeFileSync(join(args['save-model'], 'model.safetensors'), safetensors);
  console.log(`wrote ${args['save-model']}/config.json and model.safetensors`);
}
if (!result.passed) {
  console.error(`MISMATCH: first differences ${JSON.stringify(result.mismatches)}`);
  process.exit(1);
}
console.log('PASS: GPU logits match the CPU reference');
