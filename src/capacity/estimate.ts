import { z } from 'zod';
import { InputError } from '../errors.ts';
import { decodeCost, prefillCost } from '../measure/cost.ts';
import type { ModelConfig } from '../model/config.ts';
import {
  concurrencyForBudget,
  gqaRatio,
  KV_DTYPES,
  type KvDtype,
  kvBytesPerToken,
  kvBytesPerTokenMha,
  kvRatioToF32,
  kvScaleBytesPerToken,
  peakPagesHeld,
  windowCaps,
  windowedTokens,
} from './kv.ts';
import { type CapacityModel, llamaParameterCount, WEIGHT_DTYPES, weightsBytes } from './model.ts';

/**
 * The capacity estimator: memory exactly (weights and KV, by traffic class), time from the cost
 * model's FLOPs and the roofs (measured by this tool, or typed in).
 *
 * Assumptions, stated where they bite:
 * - The `gpus` act as one ideal tensor-parallel group: their memory, FLOP/s and bandwidth add up,
 *   with no communication cost and no duplicated weights.
 * - Memory is weights + KV cache. Activations, the CUDA/driver context, and allocator
 *   fragmentation beyond page rounding are what the headroom factor is for.
 * - A pass costs max(FLOPs ÷ peak, bytes ÷ bandwidth) (the roofline): prefill reads the weights
 *   once and writes its KV; a decode step reads the weights once and every running sequence's KV.
 * - Decode runs the sessions that fit (up to `sessions`) as one batch, each halfway through its output.
 * - A sliding window of W tokens (Mistral style) keeps each session's last W tokens: exact KV is
 *   min(tokens, W) per session, a paged cache holds the pages containing them at their most
 *   (peakPagesHeld), and decode attends min(depth + 1, W) tokens. A contiguous cache reserves its
 *   slot up front, so the window frees nothing in it.
 */

/** Field schemas, named like the CLI flags and the page's fields, so an error points at what was typed. */
const positiveInt = z.number().int('must be a whole number').positive('must be positive');
export const CapacityInputSchema = z
  .object({
    /** Memory of one GPU, bytes. */
    gpuMem: z.number().positive('must be positive'),
    gpus: positiveInt.max(65536),
    /** Share of each GPU's memory the planner may fill; the rest is for activations and the runtime. */
    headroom: z.number().gt(0, 'must be in (0, 1]').max(1, 'must be in (0, 1]'),
    kvDtype: z.enum(KV_DTYPES as [KvDtype, ...KvDtype[]]),
    /** Weight storage format (ignored when the model file gives exact weight bytes). */
    weights: z.enum(WEIGHT_DTYPES as [(typeof WEIGHT_DTYPES)[number], ...(typeof WEIGHT_DTYPES)[number][]]),
    /** Mean prompt tokens of a session. */
    input: positiveInt.max(1 << 24),
    /** Mean generated tokens of a session. */
    output: positiveInt.max(1 << 24),
    /** Sessions alive at once. */
    sessions: positiveInt.max(1 << 24),
    /** Share of sessions with a long context. */
    longShare: z.number().min(0, 'must be in [0, 1]').max(1, 'must be in [0, 1]'),
    /** A long session holds this many times the mean sequence (input + output). */
    longFactor: z.number().min(1, 'must be at least 1').max(1024),
    /** Peak arrival rate, requests/s; without it the sessions are taken as a closed loop. */
    rps: z.number().positive('must be positive').optional(),
    /** Tokens a contiguous cache reserves per sequence; default the longest session, at least the model's context. */
    maxLen: positiveInt.max(1 << 24).optional(),
    /** Tokens per KV page of a paged cache. */
    pageSize: positiveInt.max(4096),
    /** Sliding window, tokens: each session attends to, and keeps, its last `window` tokens. Absent: full attention. */
    window: positiveInt.max(1 << 24).optional(),
    /** Peak compute of one GPU, TFLOP/s. */
    peakTflops: z.number().positive('must be positive').optional(),
    /** Memory bandwidth of one GPU, GB/s. */
    bandwidthGBs: z.number().positive('must be positive').optional(),
    /** Where the roofs came from (a result file, or "typed in"). */
    roofsSource: z.string().max(500).optional(),
  })
  .strict();
export type CapacityInput = z.infer<typeof CapacityInputSchema>;
export type CapacityField = keyof CapacityInput;

export const CAPACITY_DEFAULTS = {
  gpus: 1,
  headroom: 0.85,
  kvDtype: 'f16',
  weights: 'f16',
  longShare: 0,
  longFactor: 4,
  pageSize: 16,
} as const satisfies Partial<CapacityInput>;

export interface FieldIssue {
  field: CapacityField | null;
  message: string;
}

/** Validates inputs; never throws. Each issue names its field. */
export function parseCapacityInput(
  raw: Record<string, unknown>,
): { ok: true; input: CapacityInput } | { ok: false; issues: FieldIssue[] } {
  const r = CapacityInputSchema.safeParse({ ...CAPACITY_DEFAULTS, ...raw });
  if (r.success) {
    if ((r.data.peakTflops === undefined) !== (r.data.bandwidthGBs === undefined)) {
      const missing: CapacityField = r.data.peakTflops === undefined ? 'peakTflops' : 'bandwidthGBs';
      return {
        ok: false,
        issues: [{ field: missing, message: 'give both peak compute and bandwidth, or neither' }],
      };
    }
    return { ok: true, input: r.data };
  }
  return {
    ok: false,
    issues: r.error.issues.map((i) => ({
      field: typeof i.path[0] === 'string' ? (i.path[0] as CapacityField) : null,
      message: i.message,
    })),
  };
}

/** parseCapacityInput that throws an InputError naming every bad field. */
export function capacityInput(raw: Record<string, unknown>): CapacityInput {
  const r = parseCapacityInput(raw);
  if (r.ok) return r.input;
  throw new InputError(r.issues.map((i) => `${i.field ?? '(input)'}: ${i.message}`).join('; '));
}

export type Bottleneck =
  | 'kv-memory'
  | 'prefill-compute'
  | 'prefill-bandwidth'
  | 'decode-bandwidth'
  | 'decode-compute';

export interface TrafficClass {
  name: 'mean' | 'long';
  sessions: number;
  /** Prompt tokens of one session of the class. */
  input: number;
  /** Context tokens of one session at its longest (input + output). */
  tokens: number;
  /** Of those, the tokens whose KV one session keeps: min(tokens, window). */
  heldTokens: number;
  /** Pages one session holds at its most in the paged cache (peakPagesHeld). */
  pagesPerSession: number;
  /** KV bytes the class holds, exact (held tokens, no page rounding). */
  kvBytes: number;
}

export interface CapacityEstimate {
  model: { name: string; params: number; weightsExact: boolean };
  /** Scales included (int8's one f32 per vector); kvScaleBytesPerToken says how many of them. */
  kvBytesPerToken: number;
  kvScaleBytesPerToken: number;
  /** kvBytesPerToken ÷ the f32 figure for the same shape: 1, 0.5, or (headDim + 4) ÷ (4 · headDim). */
  kvRatioToF32: number;
  kvBytesPerTokenMha: number;
  /** kvHeads ÷ heads: the share of the MHA cache a GQA model keeps. */
  gqaRatio: number;
  /** KV of one mean session (input + output tokens, at most the window), exact. */
  kvBytesPerRequest: number;
  kvBytesPerRequestMha: number;
  weightsBytes: number;
  classes: TrafficClass[];
  kvBytesTotal: number;
  totalBytes: number;
  usableBytesPerGpu: number;
  gpusNeeded: number;
  /** Memory left for KV on the `gpus` given, after the weights and the headroom. */
  kvBudgetBytes: number;
  /** Sessions of the traffic mix that fit on the `gpus` given: pages rounded up, or maxLen reserved each. */
  maxConcurrency: { paged: number; contiguous: number };
  /** KV bytes one session of the mix holds in a paged cache (its pages at their most, classes weighted by share). */
  pagedBytesPerSession: number;
  /** Tokens a contiguous cache reserves per sequence. */
  contiguousReserve: number;
  /** Sessions decoding together in the time estimate: min(sessions, paged concurrency). */
  expectedBatch: number;
  /** Prefill of one mean session's prompt, ms; null without roofs. */
  prefillMs: number | null;
  /** Prefill of one long session's prompt, ms; null without roofs or long sessions. */
  prefillMsLong: number | null;
  /** One decode step of the expected batch, ms: each session's time per output token. */
  tpotMs: number | null;
  throughputTokensPerSec: number | null;
  requestsPerSec: number | null;
  /** Fraction of each resource the traffic needs; the largest is the bottleneck. */
  utilization: { kvMemory: number; prefill: number | null; decode: number | null };
  bottleneck: Bottleneck | null;
  notes: string[];
}

/** The engine's model shape for the cost model's FLOP counts (only the shape fields matter). */
function costConfig(m: CapacityModel): ModelConfig {
  return {
    vocabSize: m.vocab,
    hiddenSize: m.hidden,
    intermediateSize: m.intermediate,
    numLayers: m.layers,
    numHeads: m.heads,
    numKvHeads: m.kvHeads,
    headDim: m.headDim,
    ropeTheta: 10000,
    rmsNormEps: 1e-5,
    tieWordEmbeddings: m.tied,
    maxSeqLen: m.contextLength,
  };
}

/**
 * The depth a decode step costs as: a sequence holding `depth` tokens attends to them and the new
 * one, but with a window only to its last W (the new one included), so it costs as depth W − 1.
 */
function attendedDepth(depth: number, window: number | undefined): number {
  return windowedTokens(depth + 1, window) - 1;
}

/** Roofline time of a pass, ms, and which roof bounds it. */
function passTime(flops: number, bytes: number, flopsPerSec: number, bytesPerSec: number) {
  const compute = flops / flopsPerSec;
  const memory = bytes / bytesPerSec;
  return {
    ms: Math.max(compute, memory) * 1000,
    bound: compute >= memory ? 'compute' : 'bandwidth',
  } as const;
}

/** One traffic class of `sessions` sessions of `tokens` tokens each, `input` of them the prompt. */
function trafficClass(
  name: TrafficClass['name'],
  sessions: number,
  input: number,
  tokens: number,
  bytesPerToken: number,
  cache: Pick<CapacityInput, 'pageSize' | 'window'>,
): TrafficClass {
  const heldTokens = windowedTokens(tokens, cache.window);
  return {
    name,
    sessions,
    input,
    tokens,
    heldTokens,
    pagesPerSession: peakPagesHeld(tokens, cache.pageSize, cache.window),
    kvBytes: sessions * heldTokens * bytesPerToken,
  };
}

/** The traffic as classes: the mean sessions, and the long ones when there are any. */
function trafficClasses(input: CapacityInput, bytesPerToken: number): TrafficClass[] {
  const meanTokens = input.input + input.output;
  const longTokens = Math.round(input.longFactor * meanTokens);
  const longSessions = Math.round(input.sessions * input.longShare);
  const classes = [
    trafficClass('mean', input.sessions - longSessions, input.input, meanTokens, bytesPerToken, input),
  ];
  if (longSessions > 0) {
    const longInput = longTokens - input.output;
    classes.push(trafficClass('long', longSessions, longInput, longTokens, bytesPerToken, input));
  }
  return classes;
}

/**
 * What the window does to this traffic, in words: which classes it caps and to how many pages, or
 * that it caps none; and that a contiguous cache, reserving its slot up front, gains nothing.
 */
function windowNotes(classes: readonly TrafficClass[], input: CapacityInput): string[] {
  const w = input.window;
  if (w === undefined) return [];
  const capped = classes.filter((c) => windowCaps(c.tokens, w));
  if (capped.length === 0) {
    return [
      `The ${w}-token window caps no session: none is longer than the window, so each keeps all its KV.`,
    ];
  }
  const which = capped
    .map(
      (c) =>
        `the ${c.name} sessions (${c.tokens} → ${c.heldTokens} tokens, at most ${c.pagesPerSession} pages of ${input.pageSize})`,
    )
    .join(' and ');
  return [
    `The ${w}-token window caps ${which}: each keeps only its last ${w} tokens, so its KV stops growing past the window. A contiguous cache still reserves its whole slot per session: the window frees nothing in it.`,
  ];
}

export function estimateCapacity(model: CapacityModel, input: CapacityInput): CapacityEstimate {
  const notes: string[] = [];
  const bpt = kvBytesPerToken(model, input.kvDtype);
  const bptMha = kvBytesPerTokenMha(model, input.kvDtype);
  const classes = trafficClasses(input, bpt);
  const meanHeld = classes[0].heldTokens;
  const longest = Math.max(...classes.map((c) => c.tokens));
  if (longest > model.contextLength) {
    notes.push(
      `The longest session holds ${longest} tokens, past the model's context length of ${model.contextLength}: the model cannot serve it as is.`,
    );
  }
  const wBytes = weightsBytes(model, input.weights);
  if (model.weightsBytes !== null) notes.push('Weight bytes are exact, from the model file’s tensor table.');
  const kvBytesTotal = classes.reduce((n, c) => n + c.kvBytes, 0);
  const totalBytes = wBytes + kvBytesTotal;
  const usable = input.gpuMem * input.headroom;
  const gpusNeeded = Math.ceil(totalBytes / usable);
  const kvBudget = input.gpus * usable - wBytes;
  if (kvBudget <= 0)
    notes.push(`The weights alone (${wBytes} bytes) fill the usable memory of ${input.gpus} GPU(s).`);

  notes.push(...windowNotes(classes, input));

  // Concurrency of the mix: each class's pages at their most, weighted by its share.
  const share = (classes[1]?.sessions ?? 0) / input.sessions;
  const pagedBytesPerSession =
    bpt *
    input.pageSize *
    ((1 - share) * classes[0].pagesPerSession + share * (classes[1]?.pagesPerSession ?? 0));
  const contiguousReserve = input.maxLen ?? Math.max(model.contextLength, longest);
  if (contiguousReserve < longest) {
    notes.push(
      `maxLen ${contiguousReserve} is shorter than the longest session (${longest}): a contiguous cache could not admit it.`,
    );
  }
  const maxConcurrency = {
    paged: concurrencyForBudget(kvBudget, pagedBytesPerSession),
    contiguous: concurrencyForBudget(kvBudget, bpt * contiguousReserve),
  };
  const expectedBatch = Math.min(input.sessions, maxConcurrency.paged);
  const kvMemory = kvBudget > 0 ? kvBytesTotal / kvBudget : Number.POSITIVE_INFINITY;

  const result: CapacityEstimate = {
    model: {
      name: model.name,
      params: llamaParameterCount(model),
      weightsExact: model.weightsBytes !== null,
    },
    kvBytesPerToken: bpt,
    kvScaleBytesPerToken: kvScaleBytesPerToken(model, input.kvDtype),
    kvRatioToF32: kvRatioToF32(model.headDim, input.kvDtype),
    kvBytesPerTokenMha: bptMha,
    gqaRatio: gqaRatio(model),
    kvBytesPerRequest: bpt * meanHeld,
    kvBytesPerRequestMha: bptMha * meanHeld,
    weightsBytes: wBytes,
    classes,
    kvBytesTotal,
    totalBytes,
    usableBytesPerGpu: usable,
    gpusNeeded,
    kvBudgetBytes: kvBudget,
    maxConcurrency,
    pagedBytesPerSession,
    contiguousReserve,
    expectedBatch,
    prefillMs: null,
    prefillMsLong: null,
    tpotMs: null,
    throughputTokensPerSec: null,
    requestsPerSec: null,
    utilization: { kvMemory, prefill: null, decode: null },
    bottleneck: kvMemory > 1 ? 'kv-memory' : null,
    notes,
  };
  if (input.peakTflops === undefined || input.bandwidthGBs === undefined) {
    notes.push(
      'No roofs given (a result saved by npm run bench or the page, or peak TFLOP/s and bandwidth GB/s): times and the compute/bandwidth bottleneck are not estimated.',
    );
    return result;
  }
  if (expectedBatch === 0) {
    notes.push('Not one session fits: no time estimate.');
    return result;
  }
  notes.push(
    `Roofs: ${input.peakTflops.toPrecision(3)} TFLOP/s and ${input.bandwidthGBs.toFixed(input.bandwidthGBs >= 100 ? 0 : 2)} GB/s per GPU, from ${input.roofsSource ?? 'the inputs'}.`,
  );
  const flopsPerSec = input.peakTflops * 1e12 * input.gpus;
  const bytesPerSec = input.bandwidthGBs * 1e9 * input.gpus;
  const cfg = costConfig(model);
  const prefill = (prompt: number) =>
    passTime(prefillCost(cfg, prompt).flops, wBytes + prompt * bpt, flopsPerSec, bytesPerSec);
  const prefills = classes.map((c) => prefill(c.input));
  if (input.window !== undefined && classes.some((c) => c.input > (input.window ?? 0))) {
    notes.push(
      `Prefill FLOPs count causal attention over the whole prompt: for a prompt past the ${input.window}-token window that is an upper bound.`,
    );
  }
  // The batch mixes classes in the traffic's proportions; each session is halfway through its output.
  const batchLong = Math.round(expectedBatch * share);
  const half = Math.floor(input.output / 2);
  const depths = [
    ...Array.from({ length: expectedBatch - batchLong }, () => classes[0].input + half),
    ...Array.from({ length: batchLong }, () => (classes[1]?.input ?? 0) + half),
  ].map((d) => attendedDepth(d, input.window));
  const contextTokens = depths.reduce((a, d) => a + d + 1, 0);
  const decode = passTime(
    decodeCost(cfg, depths).flops,
    wBytes + contextTokens * bpt,
    flopsPerSec,
    bytesPerSec,
  );
  // GPU time one request costs: its prefill, and its share of `output` batched decode steps.
  const prefillMix = (1 - share) * prefills[0].ms + share * (prefills[1]?.ms ?? 0);
  const perRequestMs = prefillMix + (input.output * decode.ms) / expectedBatch;
  const requestsPerSec = 1000 / perRequestMs;
  // Offered load: the peak rate if given, else the sessions as a closed loop (Little's law:
  // the batch in flight over one request's latency, prefill plus `output` steps).
  const offered = input.rps ?? (1000 * expectedBatch) / (prefillMix + input.output * decode.ms);
  const utilization = {
    kvMemory,
    prefill: (offered * prefillMix) / 1000,
    decode: (offered * input.output * decode.ms) / expectedBatch / 1000,
  };
  const busy = utilization.prefill + utilization.decode;
  if (busy > 1) {
    notes.push(
      `The offered load (${offered.toPrecision(3)} requests/s) needs ${(busy * 100).toFixed(0)}% of the GPUs' time: they cannot keep up, requests queue, and prefills interleaved with decode make the real TPOT longer than estimated.`,
    );
  }
  const candidates: [Bottleneck, number][] = [
    ['kv-memory', utilization.kvMemory],
    [prefills[0].bound === 'compute' ? 'prefill-compute' : 'prefill-bandwidth', utilization.prefill],
    [decode.bound === 'bandwidth' ? 'decode-bandwidth' : 'decode-compute', utilization.decode],
  ];
  candidates.sort((a, b) => b[1] - a[1]);
  return {
    ...result,
    prefillMs: prefills[0].ms,
    prefillMsLong: prefills[1]?.ms ?? null,
    tpotMs: decode.ms,
    throughputTokensPerSec: requestsPerSec * input.output,
    requestsPerSec,
    utilization,
    bottleneck: candidates[0][0],
  };
}

/** Parses a memory size: a number with an optional unit (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB); no unit means GB. */
export function parseBytes(text: string, field = 'size'): number {
  const m = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*([KMGT]i?B|B)?\s*$/i.exec(text);
  if (!m) throw new InputError(`${field}: "${text}" is not a size (for example 80GB or 24GiB)`);
  const value = Number(m[1]);
  const unit = (m[2] ?? 'GB').toUpperCase();
  const scale: Record<string, number> = {
    B: 1,
    KB: 1e3,
    MB: 1e6,
    GB: 1e9,
    TB: 1e12,
    KIB: 2 ** 10,
    MIB: 2 ** 20,
    GIB: 2 ** 30,
    TIB: 2 ** 40,
  };
  const bytes = value * scale[unit];
  if (!(bytes > 0)) throw new InputError(`${field}: must be positive, got "${text}"`);
  return bytes;
}
