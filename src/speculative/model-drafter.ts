import type { Model } from '../model/forward.ts';
import { VERIFY_CHUNK } from '../model/forward.ts';
import type { Drafter } from './drafters.ts';

/**
 * A draft model as a drafter: a smaller model with the target's vocabulary (a preset, or the
 * target's first layers), on the same device with its own KV cache. It keeps one sequence and the
 * tokens whose K/V it holds; each proposal first rolls that back to where it agrees with the
 * context (the rejected part of its last draft goes), feeds what is new (the accepted tokens and
 * the target's bonus token), then decodes greedily K − 1 more steps. Its numbers do not need to
 * match anything: a draft token is only ever a guess the target checks.
 */
export function modelDrafter(model: Model, name: string): Drafter {
  const seq = model.createSequence();
  const seen: number[] = [];
  return {
    name,
    synthetic: false,
    async propose(context, k) {
      let common = 0;
      while (common < seen.length && common < context.length && seen[common] === context[common]) common++;
      // The last context token must go through the model: its output is the first draft token.
      common = Math.min(common, context.length - 1);
      model.truncate(seq, common);
      seen.length = common;
      const fresh = context.slice(common);
      let next: number;
      if (fresh.length > VERIFY_CHUNK) {
        // A new prompt: one prefill pass.
        next = (await model.prefill([{ seq, tokens: fresh }], 'none'))[0].nextToken;
      } else {
        next = (await model.verify(seq, fresh)).nextTokens[fresh.length - 1];
      }
      seen.push(...fresh);
      const draft = [next];
      while (draft.length < k) {
        const last = draft[draft.length - 1];
        draft.push((await model.verify(seq, [last])).nextTokens[0]);
        seen.push(last);
      }
      return draft;
    },
    dispose() {
      model.freeSequence(seq);
    },
  };
}
