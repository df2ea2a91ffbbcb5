import { InputError } from '../errors.ts';
import type { SeededDraws } from '../model/sampler.ts';
import { mulberry32 } from '../random.ts';
import { MAX_DRAFT } from '../spec/drafter.ts';

/**
 * A drafter proposes the next tokens of a sequence cheaply; the target model then verifies them in
 * one pass. Every drafter sits behind this one interface, so the decoding loop does not know which
 * it runs.
 */
export interface Drafter {
  readonly name: string;
  /** True for a drafter that is not a real method (it knows the answer): every report must say so. */
  readonly synthetic: boolean;
  /**
   * Up to `k` tokens to follow `context` (the prompt and everything generated so far, its last
   * token the pending one); may be fewer. A draft model answers asynchronously (it runs on the GPU).
   */
  propose(context: readonly number[], k: number): number[] | Promise<number[]>;
  /**
   * Speculative sampling's proposal, for a drafter with a distribution of its own (a draft model):
   * up to `k` tokens, each drawn from the drafter's sampling distribution with `random`, and those
   * distributions (dense over the vocabulary). A drafter without it proposes with certainty.
   */
  proposeSampled?(
    context: readonly number[],
    k: number,
    sampling: SeededDraws,
  ): Promise<{ tokens: number[]; dists: Float64Array[] }>;
  /** Frees what the drafter holds (a draft model's sequence); the drafter is not used after. */
  dispose?(): void;
}

/** A drafter that answers at once, on the CPU (prompt lookup, the oracle). */
export interface SyncDrafter extends Drafter {
  propose(context: readonly number[], k: number): number[];
}

export { MAX_DRAFT };

export function checkDraftLength(k: number): void {
  if (!Number.isInteger(k) || k < 1 || k > MAX_DRAFT) {
    throw new InputError(`K (draft length) must be a whole number in 1…${MAX_DRAFT}, got ${String(k)}`);
  }
}

/**
 * Prompt lookup (vLLM's `ngram` method, llama.cpp's `lookup`): take the context's last n tokens,
 * for n from `maxN` down to `minN`, find the most recent earlier place they occur, and propose the
 * k tokens that followed it there. Unlike vLLM, which stops at the end of the context, a
 * continuation that reaches the end goes on periodically (see below). The longest matching suffix wins, because a longer match is more
 * likely to continue the same way; among equal lengths the most recent occurrence, because nearby
 * text repeats most. No second model, no GPU: it pays on repetitive text (code, retrieval, edits).
 */
export function ngramDrafter(minN = 1, maxN = 4): SyncDrafter {
  if (!Number.isInteger(minN) || !Number.isInteger(maxN) || minN < 1 || maxN < minN) {
    throw new InputError(`n-gram sizes must be whole numbers with 1 ≤ minN ≤ maxN, got ${minN}…${maxN}`);
  }
  return {
    name: `ngram(${minN}…${maxN})`,
    synthetic: false,
    propose(context, k) {
      checkDraftLength(k);
      const end = context.length;
      for (let n = Math.min(maxN, end - 1); n >= minN; n--) {
        // Candidate starts of an earlier occurrence, latest first; the suffix itself starts at end − n.
        for (let start = end - n - 1; start >= 0; start--) {
          let match = true;
          for (let i = 0; i < n; i++) {
            if (context[start + i] !== context[end - n + i]) {
              match = false;
              break;
            }
          }
          if (match) {
            // Copy what followed the match. Where that runs into the suffix itself (a match just
            // before it: the text repeats with a period shorter than k), keep copying from the
            // tokens just proposed, so a repeating pattern yields a full draft instead of a stub.
            const draft: number[] = [];
            for (let i = 0; i < k; i++) {
              const at = start + n + i;
              draft.push(at < end ? context[at] : draft[at - end]);
            }
            return draft;
          }
        }
      }
      return [];
    },
  };
}

/**
 * The controlled-acceptance drafter, for calibration only: it knows the target's own greedy
 * continuation (`reference`, from a plain decode of the same prompt) and proposes it, replacing each
 * token with a different one with probability 1 − p. Sweeping p measures real speedup against
 * acceptance. It is synthetic, and says so.
 */
export function oracleDrafter(options: {
  promptLength: number;
  reference: readonly number[];
  p: number;
  vocab: number;
  seed: number;
}): SyncDrafter {
  const { promptLength, reference, p, vocab, seed } = options;
  if (!(p >= 0 && p <= 1)) throw new InputError(`p must be in [0, 1], got ${p}`);
  const random = mulberry32(seed);
  return {
    name: `oracle(p=${p})`,
    synthetic: true,
    propose(context, k) {
      checkDraftLength(k);
      const at = context.length - promptLength;
      return reference.slice(at, at + k).map((token) => {
        if (random() < p) return token;
        // Any other id: the truth shifted by 1 … vocab − 1.
        return (token + 1 + Math.floor(random() * (vocab - 1))) % vocab;
      });
    },
  };
}
