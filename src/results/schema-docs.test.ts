import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { BenchResultSchema } from './schema.ts';

/** The object inside optional, nullable, default and array wrappers, or undefined for a leaf. */
function objectIn(t: z.ZodType): z.ZodObject | undefined {
  let cur: unknown = t;
  for (let i = 0; i < 8 && cur; i++) {
    const def = (cur as { def?: { type?: string; innerType?: unknown; element?: unknown } }).def;
    if (!def) return undefined;
    if (def.type === 'object') return cur as z.ZodObject;
    cur = def.innerType ?? def.element;
  }
  return undefined;
}

/** Every key of the object at `path` (dot-separated; arrays are looked through). */
function keysAt(path: string): string[] {
  let obj: z.ZodObject | undefined = BenchResultSchema;
  for (const part of path ? path.split('.') : []) obj = obj && objectIn(obj.shape[part] as z.ZodType);
  if (!obj) throw new Error(`no object at ${path}`);
  return Object.keys(obj.shape);
}

/** The result-format section of docs/method.md: where the schema's fields are listed. */
const SECTION = (() => {
  const text = readFileSync('docs/method.md', 'utf8');
  const start = text.indexOf('## Result format');
  return text.slice(start, text.indexOf('\n## ', start + 1));
})();

describe('docs/method.md lists the result schema', () => {
  // The objects whose fields that section lists (the workloads' own sections are in their pages).
  for (const path of [
    '',
    'spec',
    'spec.kv',
    'env',
    'env.runtime',
    'model',
    'points',
    'tuning',
    'tuning.choices',
    'tuning.choices.trials',
    'peaks.trials',
  ])
    it(`every field of ${path || 'the top level'}`, () => {
      const missing = keysAt(path).filter((k) => !new RegExp(`\\b${k}\\b`).test(SECTION));
      expect(missing, `fields of ${path || 'the result'} that docs/method.md does not name`).toEqual([]);
    });
});
