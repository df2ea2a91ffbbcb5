import { z } from 'zod';
import { count, nonNegative } from '../spec/fields.ts';

/**
 * The engines a run can be set beside: llama.cpp natively (node-llama-cpp), and llama.cpp compiled
 * to WebAssembly in a browser page (wllama).
 */
export const PEER_ENGINES = ['llama.cpp', 'wllama'] as const;
export type PeerEngine = (typeof PEER_ENGINES)[number];

/** Where llama.cpp runs: its CPU backend, its GPU backend (fails if it finds none), or its own choice. */
export const LLAMA_CPP_BACKENDS = ['cpu', 'gpu', 'auto'] as const;
export type LlamaCppBackend = (typeof LLAMA_CPP_BACKENDS)[number];

/**
 * Where wllama runs: its wasm CPU backend only, or llama.cpp's WebGPU backend where it engages
 * (else the wasm CPU backend, and the record says so).
 */
export const WLLAMA_BACKENDS = ['webgpu', 'cpu'] as const;
export type WllamaBackend = (typeof WLLAMA_BACKENDS)[number];

/** The backends each engine takes, its default first. */
export const PEER_BACKENDS: Record<PeerEngine, readonly string[]> = {
  'llama.cpp': LLAMA_CPP_BACKENDS,
  wllama: WLLAMA_BACKENDS,
};

/** One peer as `--peer` asks for it. */
export type PeerRequest =
  | { engine: 'llama.cpp'; backend: LlamaCppBackend }
  | { engine: 'wllama'; backend: WllamaBackend };

/**
 * The clock of a peer point's `samplesMs`, `medianMs` and `tokPerS` (so of the report's speed
 * column): llama.cpp's own counters (`llama_perf_context`: the time from the start of each
 * `llama_decode` to the end of the synchronize after it, the span llama-bench times), or the wall
 * clock around each call into the peer.
 */
export const PEER_POINT_CLOCKS = ['llama.cpp-perf', 'wall'] as const;
export type PeerPointClock = (typeof PEER_POINT_CLOCKS)[number];

/**
 * One timed point of a peer, in llama-bench's terms: a prefill of `tokens` prompt tokens (pp), or
 * decode steps at context `depth` (tg @ d). `samplesMs` has one sample per repetition: the whole
 * prefill, or the mean time per generated token of that repetition (a TPOT, like this engine's
 * decode points).
 */
export const PeerPointSchema = z
  .object({
    pass: z.enum(['prefill', 'decode']),
    tokens: z.number().int().positive(),
    depth: count,
    samplesMs: z.array(nonNegative).min(1),
    medianMs: nonNegative,
    tokPerS: nonNegative,
    /**
     * The clock of samplesMs, medianMs and tokPerS. Absent in files written before the native peer
     * read llama.cpp's counters (its points were then wall-clock times), and for wllama, whose
     * record's `clock` names its own.
     */
    clock: z.enum(PEER_POINT_CLOCKS).optional(),
    /**
     * The wall clock around the same calls (performance.now() in the peer's process), one per
     * sample, where `clock` is llama.cpp's counters: what the binding adds on top, for reference.
     */
    wallSamplesMs: z.array(nonNegative).min(1).optional(),
    wallMedianMs: nonNegative.optional(),
  })
  .strict();
export type PeerPoint = z.infer<typeof PeerPointSchema>;

/**
 * This engine's next-token distribution against the peer's, position by position, on one prompt.
 * `top1` is the share of positions whose most likely token is the same; the log-probability
 * difference is the largest over every position and every vocabulary entry; `kl` is KL(this
 * engine ‖ peer) in nats, averaged over the positions.
 */
export const AgreementSchema = z
  .object({
    tokens: z.number().int().positive(),
    top1: z.number().min(0).max(1),
    /**
     * Positions where this engine's own top two tokens are within the log-probability bound of
     * each other (near-ties: a peer inside the bound may swap them), flipped or not; and the top-1
     * share over the other positions, absent when every position is a near-tie. Absent in results
     * from before they were recorded.
     */
    nearTies: count.optional(),
    top1OutsideNearTies: z.number().min(0).max(1).optional(),
    maxAbsLogprobDiff: nonNegative,
    /**
     * The same over the tokens this engine gives a probability of at least 1e-3 (agreement.ts
     * LIKELY): what sampling can reach. Absent in results from before it was recorded.
     */
    maxAbsLogprobDiffLikely: nonNegative.optional(),
    kl: nonNegative,
    /** The bounds for the run's weight format (see AGREEMENT_TOLERANCES) and whether they held. */
    tolerance: z.object({ top1: z.number().min(0).max(1), maxAbsLogprobDiff: nonNegative }).strict(),
    passed: z.boolean(),
    /** Prompt positions whose top-1 token differs, and those past the log-probability bound. */
    top1Mismatches: z.array(count).max(4096),
    /**
     * At each top-1 mismatch, how far apart this engine put the two tokens: its log p of its own
     * top-1 minus its log p of the peer's. A gap below the log-probability bound is a near-tie
     * the peer's rounding can flip, not a disagreement about the model.
     */
    top1Gaps: z.array(nonNegative).max(4096),
    logprobMismatches: z.array(count).max(4096),
    /**
     * Set when the peer gave only its K most likely tokens per position (wllama's top log-probs):
     * the log-probability difference is then over those K, and KL is over those K plus one bucket
     * for the rest of the vocabulary (a lower bound of the whole-vocabulary KL).
     */
    peerTopK: count.optional(),
    /**
     * Set when that many tokens were left out of both distributions, each renormalized over the
     * rest: the tokens whose text alone is no whole UTF-8 (a byte of a longer character), which
     * wllama 3.8.1 cannot return in a reply (wllama.ts completer). None in the GGUF writer's
     * vocabulary; about 1% of a byte-level BPE one.
     */
    tokensLeftOut: count.optional(),
  })
  .strict();
export type Agreement = z.infer<typeof AgreementSchema>;

export const PeerSchema = z
  .object({
    engine: z.enum(PEER_ENGINES),
    /** The llama.cpp release and the binding that carried it (e.g. "llama.cpp b6xxx, node-llama-cpp 3.21.1", "wllama 3.8.1"). */
    version: z.string().max(300),
    /** The backend llama.cpp ran on ("cpu", "vulkan", "cuda", "metal"; wllama: "wasm-cpu", "webgpu"), and the one asked for. */
    backend: z.string().max(50),
    requestedBackend: z.enum(['cpu', 'gpu', 'auto', 'webgpu']),
    device: z.string().max(300),
    threads: count,
    /** The thread counts tried before measuring, each with its probe's median ms; the fastest was used. */
    threadTrials: z.array(z.object({ threads: count, ms: nonNegative }).strict()).max(16),
    /** What every figure of this peer was timed with. */
    clock: z.string().max(300),
    /** The GGUF file both engines loaded, and its tensor type for the linear layers. */
    file: z.string().max(1000),
    fileType: z.string().max(20),
    /**
     * How the prompts reached the peer: as token ids, the ones this engine is fed (both peers,
     * whatever the file's tokenizer), or as text. Absent in files written before it was recorded:
     * there the native peer took ids and wllama took text that the GGUF writer's vocabulary spells
     * one byte token per letter (so only the project's own files ran in wllama).
     */
    promptInput: z.enum(['token-ids', 'text']).optional(),
    points: z.array(PeerPointSchema),
    agreement: AgreementSchema.nullable(),
    /** What a reader should know about how the peer ran (e.g. why WebGPU did not engage). */
    note: z.string().max(1000).optional(),
    /** Why the peer did not run, or stopped: the run's own points are kept either way. */
    error: z.string().max(5000).optional(),
  })
  .strict();
export type PeerRecord = z.infer<typeof PeerSchema>;

/** The result's peers section (absent when no peer was asked for). */
export const PeersSectionSchema = z.array(PeerSchema).max(8);
