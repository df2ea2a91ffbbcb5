import { z } from 'zod';
import { WeightsError } from '../errors.ts';

/**
 * The held-out evaluation set of a model trained here (train/corpus.py split it off before
 * training; train/ship.py wrote it beside the model as models/<name>-eval.json). A recall case is
 * stored as its passkey and the order of its filler sentences, and rebuilt here from the template
 * exactly as the corpus wrote it (train/ship.py checked the rebuild against every original).
 */

const CaseSchema = z.object({ prompt: z.string().min(1), answer: z.string().min(1) }).strict();
const RecallCaseSchema = z
  .object({ key: z.string().regex(/^\d+$/), filler: z.string().regex(/^\d*$/) })
  .strict();

export const TaskSetSchema = z
  .object({
    about: z.string(),
    recall: z
      .object({
        head: z.string(),
        filler: z.array(z.string()).min(1).max(10),
        tail: z.string(),
        answer: z.string(),
      })
      .strict(),
    slices: z
      .array(
        z.discriminatedUnion('kind', [
          z
            .object({ name: z.string(), kind: z.enum(['exact', 'json']), cases: z.array(CaseSchema).min(1) })
            .strict(),
          z
            .object({ name: z.string(), kind: z.literal('recall'), cases: z.array(RecallCaseSchema).min(1) })
            .strict(),
          z
            .object({
              name: z.string(),
              kind: z.literal('text'),
              texts: z.array(z.object({ source: z.string(), text: z.string().min(1) }).strict()).min(1),
            })
            .strict(),
        ]),
      )
      .min(1),
  })
  .strict();

export type TaskSet = z.infer<typeof TaskSetSchema>;

/** How a slice is scored: exact match of the answer, JSON validity of a free completion (and exact match), or next-token accuracy and perplexity of a text. */
export type TaskKind = 'exact' | 'json' | 'recall' | 'text';

/** One slice, its cases rebuilt: prompts and answers, or texts. */
export type TaskSlice =
  | { name: string; kind: 'exact' | 'json' | 'recall'; cases: { prompt: string; answer: string }[] }
  | { name: string; kind: 'text'; texts: { source: string; text: string }[] };

/** The set's slices with every recall prompt rebuilt; a filler index out of the list is an error. */
export function expandTaskSet(set: TaskSet): TaskSlice[] {
  const r = set.recall;
  return set.slices.map((s) => {
    if (s.kind !== 'recall') return s;
    return {
      name: s.name,
      kind: 'recall',
      cases: s.cases.map((c) => {
        const sentences = [...c.filler].map((d) => {
          const sentence = r.filler[Number(d)];
          if (sentence === undefined)
            throw new WeightsError(`recall filler index ${d} is not in the set's list`);
          return sentence;
        });
        return {
          prompt: r.head.replace('{key}', c.key) + sentences.join(' ') + r.tail,
          answer: r.answer.replace('{key}', c.key),
        };
      }),
    };
  });
}

/** Parses the bytes of an evaluation set file; `source` names it in the error. */
export function parseTaskSet(bytes: Uint8Array, source: string): TaskSlice[] {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(bytes));
  } catch (e) {
    throw new WeightsError(`${source} is not JSON: ${(e as Error).message}`);
  }
  const parsed = TaskSetSchema.safeParse(json);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new WeightsError(`${source} is not an evaluation set: ${first.path.join('.')}: ${first.message}`);
  }
  return expandTaskSet(parsed.data);
}
