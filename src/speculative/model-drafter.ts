import { InternalError } from '../errors.ts';
import type { Model } from '../model/forward.ts';
import { VERIFY_CHUNK } from '../model/forward.ts';
import { denseOf, drawToken, samplingDistribution } from '../model/sampler.ts';
import type { Drafter } from './drafters.ts';

/**
 * A draft model as a drafter: a smaller model with the target's vocabulary (a preset, or the
 * target's first layers), on the same device with its own KV cache. It keeps one sequence and the
 * tokens whose K/V it holds; each proposal first rolls that back to where it agrees with the
 * context (the rejected part of its last draft goes), feeds what is new (the accepted tokens and
 * the target's bonus token), then decodes K − 1 more steps: greedily, or under speculative
 * sampling drawing each token from its own sampling distribution, which it hands back with the
 * draft (the acceptance rule needs q). Its numbers do not need to match anything: a draft token is
 * only ever a guess the target checks.
 */
export function modelDrafter(model: Model, name: string): Drafter {
  const seq = model.createSequence();
  const seen: number[] = [];
  /** Brings the sequence to `context`; the greedy token after it, and its logits row when asked. */
  const catchUp = async (context: readonly number[], logits: boolean) => {
    let common = 0;
    while (common < seen.length && common < context.length && seen[common] === context[common]) common++;
    // The last context token must go through the model: its output is the first draft token.
    common = Math.min(common, context.length - 1);
    model.truncate(seq, common);
    seen.length = common;
    const fresh = context.slice(common);
    seen.push(...fresh);
    if (fresh.length > VERIFY_CHUNK) {
      // A new prompt: one prefill pass.
      const [r] = await model.prefill([{ seq, tokens: fresh }], logits ? 'last' : 'none');
      return { next: r.nextToken, row: r.logits };
    }
    const r = await model.verify(seq, fresh, { logits });
    const vocab = model.config.vocabSize;
    return { next: r.nextTokens[fresh.length - 1], row: r.logits?.subarray((fresh.length - 1) * vocab) };
  };
  return {
    name,
    synthetic: false,
    async propose(context, k) {
      const draft = [(await catchUp(context, false)).next];
      while (draft.length < k) {
        const last = draft[draft.length - 1];
        draft.push((await model.verify(seq, [last])).nextTokens[0]);
        seen.push(last);
      }
      return draft;
    },
    async proposeSampled(context, k, sampling) {
      const tokens: number[] = [];
      const dists: Float64Array[] = [];
      const draw = (row: Float32Array | undefined) => {
        if (!row) throw new InternalError(`${name}: the draft model returned no logits`);
        const d = samplingDistribution(row, sampling.settings);
        tokens.push(drawToken(d, sampling.random()));
        dists.push(denseOf(d, row.length));
      };
      draw((await catchUp(context, true)).row);
      while (tokens.length < k) {
        const last = tokens[tokens.length - 1];
        draw((await model.verify(seq, [last], { logits: true })).logits);
        seen.push(last);
      }
      return { tokens, dists };
    },
    dispose() {
      model.freeSequence(seq);
    },
  };
}
