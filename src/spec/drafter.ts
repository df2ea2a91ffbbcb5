import { z } from 'zod';

/** Longest draft the verify pass takes (K); a verify pass holds K + 1 tokens (the pending one first). */
export const MAX_DRAFT = 16;

/**
 * The drafters a run can ask for, as the CLI's `--drafter` and the page spell them:
 * - `ngram` or `ngram:MIN-MAX`: prompt lookup over n-grams of MIN…MAX tokens (default 1-4);
 * - `model:PRESET`: a smaller preset with the target's vocabulary, seeded random weights;
 * - `truncated:N`: the target's first N layers with its own final norm and LM head;
 * - `oracle:P`: the synthetic controlled-acceptance drafter, each token right with probability P.
 * Pure (no engine code), so the spec schema can validate the text in Node.
 */
export type DrafterSpec =
  | { kind: 'ngram'; minN: number; maxN: number }
  | { kind: 'model'; preset: string }
  | { kind: 'truncated'; layers: number }
  | { kind: 'oracle'; p: number };

const NGRAM = /^ngram(?::(\d+)-(\d+))?$/;
const MODEL = /^model:([a-z0-9.-]+)$/;
const TRUNCATED = /^truncated:(\d+)$/;
const ORACLE = /^oracle:(\d*\.?\d+)$/;

/** The parsed drafter, or a message naming what is wrong with the text. */
export function parseDrafterSpec(text: string): DrafterSpec | string {
  const t = text.trim();
  let m = NGRAM.exec(t);
  if (m) {
    const minN = m[1] === undefined ? 1 : Number(m[1]);
    const maxN = m[2] === undefined ? 4 : Number(m[2]);
    if (minN < 1 || maxN < minN || maxN > 32) return `"${t}": n-gram sizes need 1 ≤ MIN ≤ MAX ≤ 32`;
    return { kind: 'ngram', minN, maxN };
  }
  m = MODEL.exec(t);
  if (m) return { kind: 'model', preset: m[1] };
  m = TRUNCATED.exec(t);
  if (m) {
    const layers = Number(m[1]);
    if (layers < 1) return `"${t}": a truncated draft needs at least 1 layer`;
    return { kind: 'truncated', layers };
  }
  m = ORACLE.exec(t);
  if (m) {
    const p = Number(m[1]);
    if (!(p >= 0 && p <= 1)) return `"${t}": the oracle's acceptance probability P must be in [0, 1]`;
    return { kind: 'oracle', p };
  }
  return `"${t}" is not a drafter: use ngram, ngram:MIN-MAX, model:PRESET, truncated:N or oracle:P`;
}

/** A drafter's text, validated. */
export const DrafterTextSchema = z
  .string()
  .max(100)
  .superRefine((text, ctx) => {
    const parsed = parseDrafterSpec(text);
    if (typeof parsed === 'string') ctx.addIssue({ code: 'custom', message: parsed });
  });

/** The name every report gives a drafter; the synthetic one says so in its name. */
export function drafterLabel(d: DrafterSpec): string {
  switch (d.kind) {
    case 'ngram':
      return `ngram(${d.minN}-${d.maxN})`;
    case 'model':
      return `model:${d.preset}`;
    case 'truncated':
      return `truncated:${d.layers}`;
    case 'oracle':
      return `oracle(p=${d.p}, synthetic)`;
  }
}
