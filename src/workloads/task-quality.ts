import { InternalError } from '../errors.ts';
import { kvCapacityTokens } from '../kv/cache.ts';
import type { KvDtype } from '../kv/format.ts';
import { argmax, klFromLogits } from '../measure/quality.ts';
import { jsonCompletionValid, kldStats, logProb, verdict, wilson } from '../measure/task-score.ts';
import { Model } from '../model/forward.ts';
import type { TaskSlice } from '../model/task-set.ts';
import type { Tokenizer } from '../model/tokenizer/index.ts';
import { quantizeWeights, widenWeights } from '../model/weights.ts';
import { TASK_TOKENS_DEFAULT, type TaskQuality } from '../spec/workloads/formats.ts';
import { isWeightFormat, type RunWeightFormat } from '../weight-format.ts';
import type { WorkloadContext } from './workload.ts';

/**
 * A prompt up to this many tokens goes in one prefill with the forced tokens, every row's logits
 * read back; a longer one (recall) is a prefill of the prompt, then a verify of the forced tokens.
 */
const ONE_PASS_TOKENS = 64;
/** Text slices are read in windows of this many tokens (each window's logits are read back whole). */
const TEXT_WINDOW = 256;
/**
 * Tokens a JSON completion may take beyond the answer's length before it counts as not closed: the
 * budget train/eval.py gives (the answer's tokens + 64), so both evaluations judge the same thing.
 */
const JSON_EXTRA_TOKENS = 64;

/**
 * One variant the task set is scored on: a weight format, and (the kv suite) a KV element type and
 * window. The first variant given is the reference every other is compared with.
 */
export interface TaskVariant {
  format: RunWeightFormat;
  kv?: { dtype: KvDtype; window: number | null };
}

interface Scored {
  variant: TaskVariant;
  model: Model;
  right: number;
  valid: number;
  nll: number;
  kl: number[];
  sameTop: number;
}

/**
 * Each row of logits a model gives along `forced` after `prompt`: row i is the distribution of
 * forced[i] (row 0 after the prompt, row i after forced[0..i-1]). Exact match of a greedy answer is
 * every row's argmax being the forced token: greedy decoding would have made exactly those tokens.
 */
async function forcedRows(
  model: Model,
  prompt: readonly number[],
  forced: readonly number[],
): Promise<Float32Array[]> {
  const vocab = model.config.vocabSize;
  const seq = model.createSequence();
  try {
    const rows: Float32Array[] = [];
    if (prompt.length <= ONE_PASS_TOKENS) {
      const [r] = await model.prefill([{ seq, tokens: [...prompt, ...forced.slice(0, -1)] }], 'all');
      if (!r.logits) throw new InternalError('a prefill with every row read back no logits');
      for (let i = 0; i < forced.length; i++) {
        const row = prompt.length - 1 + i;
        rows.push(r.logits.subarray(row * vocab, (row + 1) * vocab));
      }
      return rows;
    }
    const [first] = await model.prefill([{ seq, tokens: prompt }], 'last');
    if (!first.logits) throw new InternalError('a prefill read back no logits');
    rows.push(first.logits);
    if (forced.length > 1) {
      const v = await model.verify(seq, forced.slice(0, -1), { logits: true });
      if (!v.logits) throw new InternalError('a verify read back no logits');
      for (let i = 0; i < forced.length - 1; i++) rows.push(v.logits.subarray(i * vocab, (i + 1) * vocab));
    }
    return rows;
  } finally {
    model.freeSequence(seq);
  }
}

/** Greedy tokens after `prompt` until a newline, an end-of-generation token or `max` tokens. */
async function greedyLine(
  model: Model,
  tokenizer: Tokenizer,
  prompt: readonly number[],
  newline: number,
  max: number,
) {
  const seq = model.createSequence();
  try {
    const out: number[] = [];
    let [{ nextToken: t }] = await model.prefill([{ seq, tokens: prompt }], 'none');
    while (out.length < max && t !== newline && !tokenizer.isEog(t)) {
      out.push(t);
      if (prompt.length + out.length >= model.config.maxSeqLen) break;
      t = (await model.decode([{ seq, token: t }])).nextTokens[0];
    }
    return out;
  } finally {
    model.freeSequence(seq);
  }
}

/** The prompt's ids and the answer's (the answer, then the newline the corpus ends each example with). */
function caseTokens(tokenizer: Tokenizer, prompt: string, answer: string) {
  const ids = tokenizer.encode(prompt);
  const full = tokenizer.encode(`${prompt}${answer}\n`);
  const prefix = ids.every((t, i) => full[i] === t);
  return prefix ? { ids, forced: full.slice(ids.length) } : null;
}

/**
 * Task quality on a trained model, variant by variant (the format sweep's formats, the kv suite's
 * KV types and windows): every variant's model is built at once (the models are a few MiB each)
 * and each case goes through all of them, the reference first, so the KL divergence of every
 * position is taken against the reference's row in hand and nothing is stored. A task case is
 * right when every answer token (and the newline after it) is its row's argmax; JSON is also
 * generated freely and parsed; a text slice counts next-token accuracy and perplexity over windows
 * of its held-out files, up to `taskTokens` prompt tokens a slice. Hands one row per variant and
 * slice to `emit`.
 */
export async function taskQuality<R>(
  ctx: WorkloadContext<R>,
  variants: readonly TaskVariant[],
  slices: readonly TaskSlice[],
  tokenizer: Tokenizer,
  taskTokens: number | undefined,
  /** Called as each slice starts, with its index among `slices` and their count (for progress). */
  onSlice: (slice: string, index: number, count: number) => void,
  emit: (row: TaskQuality) => void,
): Promise<void> {
  const newline = tokenizer.encode('\n', { addSpecial: false }).at(-1);
  if (newline === undefined) throw new InternalError('the tokenizer has no token for a newline');
  const maxSeqLen = ctx.config.maxSeqLen;
  // `--task-tokens`: prompt tokens a slice (0: every case).
  const budget = taskTokens ?? TASK_TOKENS_DEFAULT;
  const tokensPerSlice = budget === 0 ? Number.POSITIVE_INFINITY : budget;
  const scored: Scored[] = [];
  try {
    for (const variant of variants) {
      const { format } = variant;
      const weights =
        format === 'f32' ? widenWeights(ctx.loadedWeights) : quantizeWeights(ctx.loadedWeights, format);
      // A KV type or a window needs the paged cache (a window gives its pages back).
      const mode = variant.kv ? 'paged' : ctx.kv.mode;
      const model = await Model.create(
        ctx.gpu,
        weights,
        {
          kv: {
            mode,
            pageSize: ctx.kv.pageSize,
            capacityTokens: kvCapacityTokens(mode, ctx.kv.pageSize, maxSeqLen, {
              sequences: 1,
              tokens: maxSeqLen,
            }),
            ...(variant.kv ? { dtype: variant.kv.dtype, window: variant.kv.window } : {}),
          },
          maxBatch: 1,
          pipelines: ctx.pipelines,
          variants: await ctx.variantsFor(format),
        },
        `${format}${variant.kv ? ` KV ${variant.kv.dtype}/${variant.kv.window ?? 'none'}` : ''} model (task quality)`,
      );
      scored.push({ variant, model, right: 0, valid: 0, nll: 0, kl: [], sameTop: 0 });
    }
    const compare = (rows: Float32Array[][], targets: readonly number[]) => {
      const [ref] = rows;
      for (const [m, s] of scored.entries()) {
        for (let i = 0; i < targets.length; i++) {
          if (m > 0) {
            s.kl.push(klFromLogits(ref[i], rows[m][i]));
            if (argmax(rows[m][i]) === argmax(ref[i])) s.sameTop++;
          }
        }
      }
    };
    for (const [k, slice] of slices.entries()) {
      ctx.signal.throwIfAborted();
      onSlice(slice.name, k, slices.length);
      for (const s of scored) Object.assign(s, { right: 0, valid: 0, nll: 0, kl: [], sameTop: 0 });
      let n = 0;
      // Prompt tokens spent on this slice: a case is taken while the budget holds it (the first always).
      let spent = 0;
      if (slice.kind === 'text') {
        for (const { text } of slice.texts) {
          const ids = tokenizer.encode(text);
          for (let at = 0; at + 1 < ids.length && n < tokensPerSlice; at += TEXT_WINDOW) {
            ctx.signal.throwIfAborted();
            const window = ids.slice(at, Math.min(ids.length, at + Math.min(TEXT_WINDOW, maxSeqLen) + 1));
            const targets = window.slice(1, 1 + Math.min(window.length - 1, tokensPerSlice - n));
            const rows = await Promise.all(
              scored.map((s) => forcedRows(s.model, window.slice(0, 1), targets)),
            );
            compare(rows, targets);
            for (const [m, s] of scored.entries()) {
              for (const [i, t] of targets.entries()) {
                if (argmax(rows[m][i]) === t) s.right++;
                s.nll -= logProb(rows[m][i], t);
              }
            }
            n += targets.length;
          }
        }
      } else {
        for (const c of slice.cases) {
          ctx.signal.throwIfAborted();
          const t = caseTokens(tokenizer, c.prompt, c.answer);
          if (!t || t.ids.length + t.forced.length > maxSeqLen) continue;
          // A JSON case also generates its completion freely, one decode step a token.
          const cost = t.ids.length + t.forced.length * (slice.kind === 'json' ? 2 : 1);
          if (n > 0 && spent + cost > tokensPerSlice) break;
          spent += cost;
          const rows: Float32Array[][] = [];
          for (const s of scored) rows.push(await forcedRows(s.model, t.ids, t.forced));
          compare(rows, t.forced);
          for (const [m, s] of scored.entries()) {
            if (t.forced.every((tok, i) => argmax(rows[m][i]) === tok)) s.right++;
            if (slice.kind === 'json') {
              // forced is the answer's tokens and the newline after it.
              const budget = t.forced.length - 1 + JSON_EXTRA_TOKENS;
              const out = await greedyLine(s.model, tokenizer, t.ids, newline, budget);
              // The completion's text: the whole minus the prompt's (a first piece's space survives).
              const whole = tokenizer.decode([...t.ids, ...out]);
              const completion = whole.slice(tokenizer.decode(t.ids).length);
              if (jsonCompletionValid(c.prompt, completion)) s.valid++;
            }
          }
          n++;
        }
      }
      if (n === 0) {
        ctx.warn(`Task quality: no case of the ${slice.name} slice fits this model (maxSeqLen ${maxSeqLen})`);
        continue;
      }
      const ref = scored[0];
      const scoreOf = (s: Scored) => (slice.kind === 'json' ? s.valid : s.right) / n;
      for (const s of scored) {
        const score = scoreOf(s);
        const delta = s === ref ? null : (score - scoreOf(ref)) * 100;
        const row: TaskQuality = {
          format: s.variant.format,
          ...(s.variant.kv ? { kv: { ...s.variant.kv } } : {}),
          slice: slice.name,
          kind: slice.kind,
          metric:
            slice.kind === 'text'
              ? 'next-token accuracy'
              : slice.kind === 'json'
                ? 'valid JSON'
                : 'exact match',
          cases: n,
          score,
          score95: wilson(slice.kind === 'json' ? s.valid : s.right, n),
          ...(slice.kind === 'json' ? { exactMatch: s.right / n } : {}),
          ...(slice.kind === 'text' ? { perplexity: Math.exp(s.nll / n) } : {}),
          deltaPoints: delta,
          verdict: delta === null ? null : verdict(delta),
          kld: s === ref ? null : kldStats(s.kl, s.sameTop),
        };
        emit(row);
      }
    }
  } finally {
    for (const s of scored) s.model.destroy();
  }
}

/**
 * The one format a task table scores the run's model in: the run's own, or f32 (said in a warning)
 * where its weights have no one format a run can quantize to (a mixed file, a Q6_K one).
 */
export function taskTableFormat<R>(ctx: WorkloadContext<R>, table: string): RunWeightFormat {
  if (isWeightFormat(ctx.weightFormat)) return ctx.weightFormat;
  ctx.warn(`${table} scores f32 weights: the run's ${ctx.weightFormat} weights have no one format.`);
  return 'f32';
}

/** The slices of the held-out set a run names (`--task-slices`), in the set's order; all of them when it names none. */
export function pickSlices(set: readonly TaskSlice[], names: readonly string[] | undefined): TaskSlice[] {
  return names ? set.filter((s) => names.includes(s.name)) : [...set];
}
