// npm run capacity -- --model PRESET|DIR|config.json|FILE.gguf --gpu-mem 80GB --gpus 4 --input 3000 ...
// The capacity estimator: memory (weights, KV by traffic class), GPUs needed, the concurrency
// that fits paged and contiguous, and, with roofs, prefill time, TPOT, throughput and the
// bottleneck. Pure arithmetic in Node: no browser, no GPU.
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { capacityInput, estimateCapacity, parseBytes } from '../src/capacity/estimate.ts';
import { KV_DTYPES } from '../src/capacity/kv.ts';
import {
  type CapacityModel,
  capacityModelFromDims,
  capacityModelFromGguf,
  capacityModelFromHfConfig,
  capacityModelFromPreset,
  WEIGHT_DTYPES,
} from '../src/capacity/model.ts';
import { type CapacityReport, capacityMarkdown, capacityText } from '../src/capacity/report.ts';
import { roofsFromResult } from '../src/capacity/roofs.ts';
import { isPresetName, PRESET_NAMES } from '../src/model/config.ts';
import { readGgufHeader } from '../src/model/gguf.ts';
import { parseResultFile } from '../src/results/compare.ts';

const EXIT = { ok: 0, usage: 2 } as const;

const HELP = `Usage: npm run capacity -- --model M --gpu-mem SIZE --input N --output N --sessions N [options]

How many users could a model serve: weights and KV memory, GPUs needed, the concurrency that fits
(paged and contiguous), and with roofs the prefill time, TPOT, throughput and the bottleneck.

Model (one of)
  --model NAME|DIR|FILE  a preset (${PRESET_NAMES.join(', ')}), a Hugging Face folder or its
                         config.json, or a .gguf file (only its header is read)
  --dims K=V,...         hand-entered: layers, heads, kvHeads, headDim, hidden, intermediate, vocab,
                         contextLength[, tied=1]; kvHeads defaults to heads, headDim to hidden ÷ heads

GPU
  --gpu-mem SIZE         memory of one GPU: 80GB, 24GiB, 16384MiB (no unit: GB)
  --gpus N               GPUs, taken as one ideal tensor-parallel group (default 1)
  --headroom F           share of memory for weights and KV, in (0, 1] (default 0.85)
  --roofs FILE           peak FLOP/s and bandwidth from a saved result of npm run bench
  --peak-tflops X        peak compute of one GPU, TFLOP/s (with --bandwidth-gbs, instead of --roofs)
  --bandwidth-gbs X      memory bandwidth of one GPU, GB/s

Traffic
  --input N              mean prompt tokens
  --output N             mean generated tokens
  --sessions N           concurrent sessions
  --long-share F         share of long-context sessions, 0…1 (default 0)
  --long-factor F        a long session holds F × (input + output) tokens (default 4)
  --rps X                peak requests per second (default: the sessions as a closed loop)

Cache
  --kv-dtype ${KV_DTYPES.join('|')}   KV element type (default f16); int8 stores one f32 scale per
                         token, layer, KV head and K or V, and those bytes are counted
  --window N             sliding window, tokens: each session keeps its last N tokens, and a paged
                         cache returns the pages behind them (default: full attention)
  --weights ${WEIGHT_DTYPES.join('|')}   weight format (default f16; a .gguf gives exact bytes)
  --page-size N          tokens per KV page (default 16)
  --max-len N            tokens a contiguous cache reserves per sequence (default: the longest
                         session, at least the model's context length)

Output
  --format table|json|md (default table)
  -h, --help

Exit codes: 0 done; 2 bad input (the message names the flag or the field).`;

function usage(message: string): never {
  console.error(`capacity: ${message}\n(see npm run capacity -- --help)`);
  process.exit(EXIT.usage);
}

function parse() {
  try {
    return parseArgs({
      options: {
        model: { type: 'string' },
        dims: { type: 'string' },
        'gpu-mem': { type: 'string' },
        gpus: { type: 'string' },
        headroom: { type: 'string' },
        roofs: { type: 'string' },
        'peak-tflops': { type: 'string' },
        'bandwidth-gbs': { type: 'string' },
        input: { type: 'string' },
        output: { type: 'string' },
        sessions: { type: 'string' },
        'long-share': { type: 'string' },
        'long-factor': { type: 'string' },
        rps: { type: 'string' },
        'kv-dtype': { type: 'string' },
        weights: { type: 'string' },
        'page-size': { type: 'string' },
        window: { type: 'string' },
        'max-len': { type: 'string' },
        format: { type: 'string', default: 'table' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (e) {
    usage((e as Error).message);
  }
}

/** A numeric flag: undefined when absent, else a finite number (range checks are the schema's). */
function num(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const v = Number(text);
  if (text.trim() === '' || !Number.isFinite(v)) usage(`--${flag} takes a number, got "${text}"`);
  return v;
}

async function loadModel(spec: string): Promise<CapacityModel> {
  if (isPresetName(spec)) return capacityModelFromPreset(spec);
  if (!existsSync(spec)) {
    throw new Error(
      `--model: "${spec}" is neither a preset (${PRESET_NAMES.join(', ')}) nor a file or folder`,
    );
  }
  const path = statSync(spec).isDirectory() ? join(spec, 'config.json') : spec;
  if (!existsSync(path)) throw new Error(`--model: ${spec} has no config.json`);
  const fd = openSync(path, 'r');
  try {
    const magic = Buffer.alloc(4);
    readSync(fd, magic, 0, 4, 0);
    if (magic.toString('latin1') === 'GGUF') {
      // Only the header: a model file of many gigabytes is read in growing pieces until it fits.
      const header = await readGgufHeader(async (length) => {
        const buf = Buffer.alloc(length);
        const n = readSync(fd, buf, 0, length, 0);
        return new Uint8Array(buf.buffer, buf.byteOffset, n);
      }, path);
      return capacityModelFromGguf(header, path);
    }
  } finally {
    closeSync(fd);
  }
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new Error(`--model: ${path} is neither GGUF nor JSON: ${(e as Error).message}`);
  }
  return capacityModelFromHfConfig(json, path);
}

function dimsModel(text: string): CapacityModel {
  const dims: Record<string, unknown> = {};
  for (const pair of text.split(',').filter(Boolean)) {
    const [key, value] = pair.split('=').map((s) => s.trim());
    if (!key || value === undefined) usage(`--dims takes key=value pairs, got "${pair}"`);
    dims[key] = key === 'tied' ? value === '1' || value === 'true' : Number(value);
  }
  return capacityModelFromDims(dims, '--dims');
}

const args = parse();
if (args.help) {
  console.log(HELP);
  process.exit(EXIT.ok);
}
if (!['table', 'json', 'md'].includes(args.format))
  usage(`--format must be table, json or md, got "${args.format}"`);
if (Boolean(args.model) === Boolean(args.dims)) usage('give --model or --dims (exactly one)');
if (args.roofs && (args['peak-tflops'] || args['bandwidth-gbs'])) {
  usage('give --roofs or --peak-tflops with --bandwidth-gbs, not both');
}
for (const flag of ['gpu-mem', 'input', 'output', 'sessions'] as const) {
  if (args[flag] === undefined) usage(`--${flag} is required`);
}

/** Schema field → flag, so an error names what the person typed. */
const FLAG_OF: Record<string, string> = {
  gpuMem: '--gpu-mem',
  longShare: '--long-share',
  longFactor: '--long-factor',
  kvDtype: '--kv-dtype',
  pageSize: '--page-size',
  maxLen: '--max-len',
  peakTflops: '--peak-tflops',
  bandwidthGBs: '--bandwidth-gbs',
};

try {
  const model = args.model ? await loadModel(args.model) : dimsModel(args.dims ?? '');
  const roofs = args.roofs
    ? roofsFromResult(parseResultFile(readFileSync(args.roofs, 'utf8'), args.roofs), args.roofs)
    : {};
  const raw: Record<string, unknown> = {
    gpuMem: parseBytes(args['gpu-mem'] ?? '', '--gpu-mem'),
    gpus: num('gpus', args.gpus),
    headroom: num('headroom', args.headroom),
    input: num('input', args.input),
    output: num('output', args.output),
    sessions: num('sessions', args.sessions),
    longShare: num('long-share', args['long-share']),
    longFactor: num('long-factor', args['long-factor']),
    rps: num('rps', args.rps),
    kvDtype: args['kv-dtype'],
    weights: args.weights,
    pageSize: num('page-size', args['page-size']),
    window: num('window', args.window),
    maxLen: num('max-len', args['max-len']),
    peakTflops: num('peak-tflops', args['peak-tflops']),
    bandwidthGBs: num('bandwidth-gbs', args['bandwidth-gbs']),
    ...roofs,
  };
  for (const k of Object.keys(raw)) if (raw[k] === undefined) delete raw[k];
  let input: ReturnType<typeof capacityInput>;
  try {
    input = capacityInput(raw);
  } catch (e) {
    // Field names to flags: "headroom: must be in (0, 1]" → "--headroom: must be in (0, 1]".
    throw new Error(
      (e as Error).message.replace(
        /(^|; )(\w+):/g,
        (_, sep: string, f: string) => `${sep}${FLAG_OF[f] ?? `--${f}`}:`,
      ),
    );
  }
  const report: CapacityReport = { modelShape: model, input, ...estimateCapacity(model, input) };
  if (args.format === 'json') console.log(JSON.stringify(report, null, 2));
  else if (args.format === 'md') console.log(capacityMarkdown(report));
  else console.log(capacityText(report));
} catch (e) {
  usage((e as Error).message);
}
