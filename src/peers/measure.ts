import { percentile } from '../stats.ts';
import type { PeerPoint, PeerPointClock } from './schema.ts';

/**
 * One timed call in the driver's clock, with the wall clock around the same call beside it where
 * the driver's clock is another (llama.cpp's counters): a prefill's whole time, or a decode's
 * mean time per step.
 */
export interface PeerTiming {
  ms: number;
  wallMs?: number;
}

/**
 * What a peer engine offers the timing loop: one loaded model, one sequence at a time. Each call
 * returns the milliseconds of its own clock that the work took (the driver names that clock).
 */
export interface PeerDriver {
  /** The clock of what prefill and decode return, where the driver names one for each point. */
  clock?: PeerPointClock;
  /**
   * Prefills `tokens` into an empty context; returns the time of the prefill alone. `prompt` is
   * the plan's prompt of those tokens, with its text for a peer that takes text only.
   */
  prefill(tokens: readonly number[], prompt?: PlanPrompt): Promise<number | PeerTiming>;
  /**
   * Prefills `context` (at least one token) untimed, then generates `gen` tokens greedily one step
   * at a time; returns the time of each step, or their mean alone where the peer counts only the
   * total (a PeerTiming is that mean).
   */
  decode(context: readonly number[], gen: number, prompt?: PlanPrompt): Promise<number[] | PeerTiming>;
}

/**
 * One prompt of the plan: the token ids every engine is fed, and the text the file's tokenizer
 * reads as exactly those ids (prompt-text.ts), for a peer that takes text only; or, where no text
 * gives them, why not.
 */
export interface PlanPrompt {
  ids: number[];
  text?: string;
  noText?: string;
}

/** What the peer runs: the same prompt lengths, depths, generation length and repetitions as the engine. */
export interface PeerPlan {
  prefill: number[];
  depths: number[];
  gen: number;
  reps: number;
  warmup: number;
  vocabSize: number;
  /**
   * The prompts, one per prefill length and one per depth in their order, as the file's tokenizer
   * spells them (record.ts peerPlan). Without them, promptTokens' ids, which no text spells.
   */
  prompts?: { prefill: PlanPrompt[]; decode: PlanPrompt[] };
}

/**
 * A deterministic token sequence of length n: a stride through the vocabulary that skips the low
 * ids (specials and byte tokens in the vocabulary the GGUF writer gives seeded models), so every
 * engine is fed the same ids and none is a control token.
 */
export function promptTokens(n: number, vocabSize: number, offset = 0): number[] {
  const low = Math.min(132, Math.floor(vocabSize / 2));
  const span = vocabSize - low;
  return Array.from({ length: n }, (_, i) => low + ((offset + i * 7919) % span));
}

/** Prefill at every L, then decode at every depth, each with warm-up and measured repetitions. */
export async function measurePeer(
  driver: PeerDriver,
  plan: PeerPlan,
  onPoint?: (p: PeerPoint) => void,
): Promise<PeerPoint[]> {
  const points: PeerPoint[] = [];
  const finish = (
    p: Pick<PeerPoint, 'pass' | 'tokens' | 'depth'>,
    samples: PeerTiming[],
    perTokenTokens: number,
  ) => {
    const samplesMs = samples.map((s) => s.ms);
    const medianMs = percentile(samplesMs, 50);
    const walls = samples.flatMap((s) => (s.wallMs === undefined ? [] : [s.wallMs]));
    const point: PeerPoint = {
      ...p,
      samplesMs,
      medianMs,
      tokPerS: medianMs > 0 ? (perTokenTokens * 1000) / medianMs : 0,
      ...(driver.clock ? { clock: driver.clock } : {}),
      // The wall clock beside the driver's own, only where every sample has it.
      ...(walls.length === samples.length && walls.length > 0
        ? { wallSamplesMs: walls, wallMedianMs: percentile(walls, 50) }
        : {}),
    };
    points.push(point);
    onPoint?.(point);
  };
  for (const [i, L] of plan.prefill.entries()) {
    const prompt = plan.prompts?.prefill[i];
    const tokens = prompt?.ids ?? promptTokens(L, plan.vocabSize);
    const samples: PeerTiming[] = [];
    for (let r = 0; r < plan.warmup + plan.reps; r++) {
      const t = await driver.prefill(tokens, prompt);
      if (r >= plan.warmup) samples.push(typeof t === 'number' ? { ms: t } : t);
    }
    finish({ pass: 'prefill', tokens: L, depth: 0 }, samples, L);
  }
  for (const [i, depth] of plan.depths.entries()) {
    // Depth 0 is a one-token prompt, as in this engine's decode sweep (a spelled one may be longer:
    // BOS and a word, the shortest a text gives).
    const prompt = plan.prompts?.decode[i];
    const context = prompt?.ids ?? promptTokens(Math.max(1, depth), plan.vocabSize, 1);
    const samples: PeerTiming[] = [];
    for (let r = 0; r < plan.warmup + plan.reps; r++) {
      // As this engine counts a TPOT: the first token comes from the prompt's prefill, then gen − 1 steps.
      const t = await driver.decode(context, plan.gen - 1, prompt);
      if (r >= plan.warmup)
        samples.push(Array.isArray(t) ? { ms: t.reduce((a, b) => a + b, 0) / t.length } : t);
    }
    finish({ pass: 'decode', tokens: 1, depth }, samples, 1);
  }
  return points;
}
