import { InternalError } from '../errors.ts';
import { type DrawSettings, denseOf, type SeededDraws, samplingDistribution } from '../model/sampler.ts';
import { AcceptanceStats, acceptDraft, acceptSampled } from './accept.ts';
import type { Drafter } from './drafters.ts';

/** What the decoding loop needs of the target model (Model implements it). */
export interface VerifyTarget {
  /**
   * Appends `tokens` to `seq` in one pass; nextTokens[i] is the greedy token after tokens[0…i],
   * and with `logits` asked for, logits holds each row's [vocab] logits one after another.
   */
  verify(
    seq: number,
    tokens: readonly number[],
    options?: { logits?: boolean },
  ): Promise<{ nextTokens: number[]; logits?: Float32Array }>;
  /** Rolls `seq` back to its first `length` tokens. */
  truncate(seq: number, length: number): void;
  /** Tokens whose K/V `seq` holds. */
  sequenceLength(seq: number): number;
}

/** One step of the loop: what was drafted, what was kept, and what each half cost (wall clock). */
export interface SpecStep {
  /** Tokens proposed (may be fewer than K: a drafter may have nothing to say). */
  drafted: number;
  accepted: number;
  /** Tokens the verify pass held: the pending one and the draft. */
  rows: number;
  draftMs: number;
  verifyMs: number;
}

export interface SpecDecodeResult {
  /** Exactly `count` tokens, the first being the prefill's. */
  tokens: number[];
  /** When each token became known (ms, the caller's clock): a step's tokens share its verify's end. */
  arrivals: number[];
  steps: SpecStep[];
  stats: AcceptanceStats;
}

export interface SpecDecodeOptions {
  seq: number;
  /** The prompt, whose K/V `seq` already holds. */
  prompt: readonly number[];
  /** The target's greedy token after the prompt (from its prefill), and when it arrived. */
  first: number;
  firstAt: number;
  /** Tokens to produce, the first included. */
  count: number;
  /** Draft length K (the verify pass holds K + 1 tokens). */
  k: number;
  /** Shrink K by one after a rejection and grow it by one after a full acceptance, within 1…k. */
  adaptive?: boolean;
  now: () => number;
  signal?: AbortSignal;
  /**
   * Speculative sampling instead of greedy: the target's rows become the sampler's distributions
   * (temperature, top-k, top-p), drafts are kept or replaced by acceptSampled's rule with one
   * uniform number per decision from `random`, and a drafter that samples (proposeSampled) gives
   * its own distributions. The output then follows the target's sampling distribution, not its
   * greedy tokens.
   */
  sampling?: SeededDraws;
}

/**
 * Speculative decoding, greedy or sampled (o.sampling). The context's last token (`pending`) is known but its K/V are not
 * yet written. Each step the drafter proposes up to K tokens after the context, the target
 * verifies the pending token and the draft in one pass (K + 1 rows), the longest prefix of the
 * draft that agrees with the target's own predictions is kept, and the target's token after it
 * comes free as the new pending token. The rejected rows' K/V are rolled back. Every emitted token
 * is the target's own greedy choice, so the output equals plain greedy decode whenever the verify
 * rows equal decode steps (the engine's verify pass runs the decode kernels for that reason).
 */
export async function speculativeDecode(
  target: VerifyTarget,
  drafter: Drafter,
  o: SpecDecodeOptions,
): Promise<SpecDecodeResult> {
  const tokens = [o.first];
  const arrivals = [o.firstAt];
  const context = [...o.prompt, o.first];
  const steps: SpecStep[] = [];
  const stats = new AcceptanceStats();
  let k = o.k;
  let pending = o.first;
  while (tokens.length < o.count) {
    o.signal?.throwIfAborted();
    // Never draft past what is still wanted: a step emits its accepted draft and one token more.
    const want = Math.min(k, o.count - tokens.length - 1);
    const t0 = o.now();
    let draft: number[] = [];
    let proposal: Float64Array[] | null = null;
    if (want > 0 && o.sampling && drafter.proposeSampled) {
      const p = await drafter.proposeSampled(context, want, o.sampling);
      draft = p.tokens.slice(0, want);
      proposal = p.dists.slice(0, want);
    } else if (want > 0) draft = (await drafter.propose(context, want)).slice(0, want);
    const t1 = o.now();
    const start = target.sequenceLength(o.seq);
    const rows = [pending, ...draft];
    const verified = await target.verify(o.seq, rows, { logits: o.sampling !== undefined });
    const t2 = o.now();
    const { accepted, next } = o.sampling
      ? acceptSampled(
          draft,
          targetRows(verified.logits, rows.length, o.sampling.settings),
          proposal,
          o.sampling.random,
        )
      : acceptDraft(draft, verified.nextTokens);
    // Keep the pending token and the accepted draft; the rest of the pass's K/V go.
    target.truncate(o.seq, start + 1 + accepted);
    const emitted = [...draft.slice(0, accepted), next];
    for (const t of emitted) {
      tokens.push(t);
      arrivals.push(t2);
    }
    context.push(...emitted);
    pending = next;
    if (draft.length > 0) stats.record(draft.length, accepted);
    steps.push({
      drafted: draft.length,
      accepted,
      rows: 1 + draft.length,
      draftMs: t1 - t0,
      verifyMs: t2 - t1,
    });
    if (o.adaptive) {
      if (accepted < draft.length) k = Math.max(1, k - 1);
      else if (draft.length === k) k = Math.min(o.k, k + 1);
    }
  }
  return { tokens: tokens.slice(0, o.count), arrivals: arrivals.slice(0, o.count), steps, stats };
}

/** The verify pass's rows as the sampler's distributions. */
function targetRows(logits: Float32Array | undefined, rows: number, settings: DrawSettings): Float64Array[] {
  if (!logits) throw new InternalError('speculative sampling: the verify pass returned no logits');
  const vocab = logits.length / rows;
  return Array.from({ length: rows }, (_, i) =>
    denseOf(samplingDistribution(logits.subarray(i * vocab, (i + 1) * vocab), settings), vocab),
  );
}
