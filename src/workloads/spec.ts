import { InternalError } from '../errors.ts';
import { GpuProfiler } from '../gpu/profiler.ts';
import { graphOf, verifyCost } from '../measure/cost.ts';
import { PointSamples } from '../measure/samples.ts';
import { type Model, VERIFY_CHUNK } from '../model/forward.ts';
import { type SeededDraws, sampleToken } from '../model/sampler.ts';
import type { TaskSlice } from '../model/task-set.ts';
import type { Tokenizer } from '../model/tokenizer/index.ts';
import { mulberry32 } from '../random.ts';
import { type DrafterSpec, drafterLabel, parseDrafterSpec } from '../spec/drafter.ts';
import { decodePrompt } from '../spec/workload.ts';
import type { WorkloadOf } from '../spec/workloads/index.ts';
import { specRunContext } from '../spec/workloads/speculative.ts';
import type { SpecRun } from '../spec/workloads/speculative-result.ts';
import { createDraftModel, makeDrafter } from '../speculative/build.ts';
import type { Drafter } from '../speculative/drafters.ts';
import { speculativeDecode } from '../speculative/loop.ts';
import { curveAt, predictedSpeedup } from '../speculative/predict.ts';
import { percentile } from '../stats.ts';
import { promptTokens } from './prompts.ts';
import {
  placeVerify,
  type SpecRunRecord,
  specTargets,
  speculativeResult,
  type VerifyRecord,
} from './spec-section.ts';
import { requireModel, type WorkloadContext, type WorkloadEngine, type WorkloadRunner } from './workload.ts';

/**
 * Speculative decoding on the real engine. First the verify-K curve: at each depth a decode step
 * and a verify pass of each k, interleaved within every repetition so drift hits both alike, each
 * pass timed alone (wall clock around the awaited pass; GPU spans read after it). Then, per prompt
 * class, plain greedy decode of each prompt (the baseline TPOT and the reference output), and the
 * same prompts decoded speculatively by each drafter, every token checked against the reference.
 * Draft models are built before anything is measured, so a draft that does not fit fails first.
 */
export const specDecoding: WorkloadRunner<'spec', SpecRecord> = async (ctx, w) => {
  const model = requireModel(ctx);
  const drafts = await buildDraftModels(ctx, model, w);
  try {
    const wallCurve: { k: number; depth: number; verifyMs: number; decodeMs: number }[] = [];
    const units = w.depths.length + w.classes.length * (1 + w.drafters.length);
    let done = 0;
    for (const depth of w.depths) {
      ctx.progress(done, units, `verify-K curve at depth ${depth}`);
      wallCurve.push(...(await measureCurve(ctx, model, w, depth)));
      ctx.progress(++done, units, `verify-K curve at depth ${depth}`);
    }
    const specs = w.drafters.map((text) => ({ text, spec: parseDrafterSpec(text) as DrafterSpec }));
    const vocab = model.config.vocabSize;
    /** Plain decode, then each drafter, on one prompt: neighbours in time, so drift hits all alike. */
    const onePrompt = async (prompt: number[], gen: number, seed: number) => {
      const baseline = await plainRun(model, prompt, gen, sampling(w, seed));
      const outcomes: Outcome[] = [];
      for (const { text, spec } of specs) {
        ctx.signal.throwIfAborted();
        const drafter = makeDrafter(spec, drafts.get(text), {
          promptLength: prompt.length,
          reference: baseline.tokens,
          vocab,
          seed,
        });
        try {
          outcomes.push(await specRun(ctx, model, drafter, prompt, { ...w, gen }, sampling(w, seed)));
        } finally {
          drafter.dispose?.();
        }
      }
      return { baseline, outcomes };
    };
    // A discarded warm-up on a throwaway prompt: compiles every verify size and builds each
    // draft model's plans, so no run's first steps pay for it.
    ctx.progress(done, units, 'warm-up: every verify size, every drafter');
    await warmVerifySizes(model, w.k + 1);
    await onePrompt(classPrompt('random', w.promptTokens, vocab, 999_983), Math.min(w.gen, w.k + 3), 1);
    // Seeded weights: the spec's prompt classes. A trained model: its held-out slices, each a
    // prompt of its own cases, so acceptance is told by what the text is (code, JSON, recall, prose).
    const classes =
      taskClasses(ctx, w) ??
      w.classes.map((c, ci) => ({
        name: c,
        prompts: Array.from({ length: w.prompts }, (_, i) =>
          classPrompt(c, w.promptTokens, vocab, w.seed * 1000 + ci * 100 + i),
        ),
      }));
    // The descriptor counts w.classes' units; the slices share them out in whole units.
    const perClass = 1 + specs.length;
    const unitAt = (ci: number, step: number) =>
      w.depths.length +
      Math.floor((ci * w.classes.length) / classes.length) * perClass +
      (classes.length === w.classes.length ? step : 0);
    for (const [ci, { name: promptClass, prompts }] of classes.entries()) {
      const results = [];
      for (const [i, prompt] of prompts.entries()) {
        ctx.signal.throwIfAborted();
        ctx.progress(
          unitAt(ci, 0),
          units,
          `${promptClass} prompt ${i + 1} of ${prompts.length}: plain decode, then each drafter`,
        );
        results.push(await onePrompt(prompt, w.gen, w.seed * 7919 + i));
      }
      const baseline = results.map((r) => r.baseline);
      const baselineTpotMs = mean(baseline.map((b) => b.tpotMs));
      ctx.progress(unitAt(ci, 1), units, `plain greedy decode, ${promptClass} prompts`);
      for (const [di, { text, spec }] of specs.entries()) {
        const label = drafterLabel(spec);
        const run = summarize(
          { text, spec, label, promptClass, w },
          results.map((r) => r.outcomes[di]),
          baseline,
          baselineTpotMs,
          wallCurve,
        );
        // Under sampling a text is one draw: nothing to compare token for token (the acceptance
        // rule is what keeps the distribution, checked over many seeds in its tests).
        if (run.identical === false) {
          ctx.warn(
            `${label} on ${promptClass} prompts: speculative output differs from plain greedy decode at prompt ${run.firstMismatch?.prompt}, token ${run.firstMismatch?.index}`,
          );
        }
        if (run.identical !== null)
          ctx.check({
            name: `speculative ${label} (${promptClass}) = greedy`,
            maxAbsErr: 0,
            maxRelErr: 0,
            passed: run.identical,
          });
        ctx.emit({ type: 'specRun', run });
        ctx.progress(unitAt(ci, 2 + di), units, `${label}, ${promptClass} prompts`);
      }
    }
  } finally {
    for (const d of drafts.values()) d.destroy();
  }
};

/** Every draft model the drafters name, built before anything is measured (a misfit fails first). */
async function buildDraftModels(ctx: WorkloadContext<SpecRecord>, target: Model, w: WorkloadOf<'spec'>) {
  const drafts = new Map<string, Model>();
  try {
    for (const text of w.drafters) {
      ctx.progress(0, 1, `building the draft for ${text}`);
      const draft = await createDraftModel(
        text,
        {
          gpu: ctx.gpu,
          weights: ctx.weights,
          pipelines: ctx.pipelines,
          variants: ctx.variants,
          pageSize: target.kv.pageSize,
        },
        { seed: w.seed + 1, capacityTokens: specRunContext(w) + VERIFY_CHUNK },
      );
      if (draft) drafts.set(text, draft);
    }
  } catch (e) {
    for (const d of drafts.values()) d.destroy();
    throw e;
  }
  return drafts;
}

/**
 * A trained model's prompt classes: each held-out slice whose cases fit `promptTokens`, with
 * `prompts` prompts made of its cases as the corpus streams them (BOS, the case, a newline, EOS),
 * the last case cut after its question, so generation answers it and goes on to the next; a text
 * slice's prompts are windows of its text. Slices that cannot make them are listed in `skipped`.
 */
export function slicePrompts(
  set: readonly TaskSlice[],
  tokenizer: Pick<Tokenizer, 'encode' | 'eos'>,
  promptTokens: number,
  count: number,
): { classes: { name: string; prompts: number[][] }[]; skipped: string[] } {
  const eos = tokenizer.eos === undefined ? [] : [tokenizer.eos];
  const classes: { name: string; prompts: number[][] }[] = [];
  const skipped: string[] = [];
  for (const slice of set) {
    const prompts: number[][] = [];
    if (slice.kind === 'text') {
      const ids = tokenizer.encode(slice.texts.map((t) => t.text).join('\n'));
      for (let i = 0; i < count && (i + 1) * promptTokens <= ids.length; i++)
        prompts.push(ids.slice(i * promptTokens, (i + 1) * promptTokens));
    } else {
      let next = 0;
      for (let i = 0; i < count; i++) {
        const ids: number[] = [];
        for (; next < slice.cases.length; next++) {
          const c = slice.cases[next];
          const whole = [...tokenizer.encode(`${c.prompt}${c.answer}\n`), ...eos];
          if (ids.length + whole.length <= promptTokens) {
            ids.push(...whole);
            continue;
          }
          const question = tokenizer.encode(c.prompt);
          if (ids.length + question.length <= promptTokens) ids.push(...question);
          next++;
          break;
        }
        if (ids.length > 0) prompts.push(ids);
      }
    }
    if (prompts.length === count) classes.push({ name: slice.name, prompts });
    else skipped.push(slice.name);
  }
  return { classes, skipped };
}

/** The slices' classes on a model with an evaluation set (and a warning naming those skipped); null without one. */
function taskClasses(ctx: WorkloadContext<SpecRecord>, w: WorkloadOf<'spec'>) {
  if (!ctx.taskSet || !ctx.tokenizer) return null;
  const { classes, skipped } = slicePrompts(ctx.taskSet, ctx.tokenizer, w.promptTokens, w.prompts);
  if (skipped.length > 0)
    ctx.warn(
      `Speculative decoding by slice: ${skipped.join(', ')} skipped (a case longer than the ${w.promptTokens}-token prompt, or too few cases for ${w.prompts} prompts; --prefill N sets the prompt length)`,
    );
  return classes;
}

/**
 * The prompts of a class. 'repetitive' is code-like: a line of tokens repeated with one position
 * counting up (a loop index), as code and structured text repeat, where prompt lookup pays.
 * 'random' is seeded uniform ids, which never repeat on purpose.
 */
export function classPrompt(promptClass: string, n: number, vocab: number, seed: number): number[] {
  const random = mulberry32(seed);
  if (promptClass === 'repetitive') {
    const line = Array.from({ length: 9 }, () => Math.floor(random() * vocab));
    return Array.from({ length: n }, (_, i) => {
      const row = Math.floor(i / line.length);
      const col = i % line.length;
      return col === 3 ? (line[col] + row) % vocab : line[col];
    });
  }
  return Array.from({ length: n }, () => Math.floor(random() * vocab));
}

/** Compiles the decode kernels of every verify size up to `rows` (per chunk), outside any timing. */
async function warmVerifySizes(model: Model, rows: number): Promise<void> {
  const seq = model.createSequence();
  try {
    await model.prefill([{ seq, tokens: promptTokens(1, model.config.vocabSize, 3) }], 'none');
    for (let r = 1; r <= rows; r++) {
      await model.verify(seq, promptTokens(r, model.config.vocabSize, 5));
      model.truncate(seq, 1);
    }
  } finally {
    model.freeSequence(seq);
  }
}

async function measureCurve(
  ctx: WorkloadContext<SpecRecord>,
  model: Model,
  w: WorkloadOf<'spec'>,
  depth: number,
) {
  const vocab = model.config.vocabSize;
  const ks = [...new Set(w.verifyKs)].sort((a, b) => a - b);
  const chunksOf = (k: number) => Math.ceil(k / VERIFY_CHUNK);
  const profiler = new GpuProfiler(ctx.gpu, chunksOf(Math.max(...ks)));
  const seq = model.createSequence();
  const out: { k: number; depth: number; verifyMs: number; decodeMs: number }[] = [];
  try {
    const prompt = promptTokens(decodePrompt(depth), vocab, depth + 11);
    await model.prefill([{ seq, tokens: prompt }], 'none');
    const length = model.sequenceLength(seq);
    const timing = { profiler, perKernel: false };
    /** One pass timed alone: the wall clock around the awaited pass, the GPU spans read after it. */
    const timeOnce = async (pass: () => Promise<unknown>, into: PointSamples) => {
      profiler.reset();
      const t0 = performance.now();
      await pass();
      const wall = performance.now() - t0;
      into.add(wall, await profiler.read());
      model.truncate(seq, length);
    };
    const decode = ks.map(() => new PointSamples(profiler.supported));
    const verify = ks.map(() => new PointSamples(profiler.supported));
    const drafts = ks.map((k) => promptTokens(k, vocab, depth + 17 * k));
    for (let r = 0; r < w.warmup + w.reps; r++) {
      ctx.signal.throwIfAborted();
      for (const [i, _k] of ks.entries()) {
        // A warm-up repetition compiles and builds every plan; its samples are dropped.
        const d = r < w.warmup ? new PointSamples(false) : decode[i];
        const v = r < w.warmup ? new PointSamples(false) : verify[i];
        await timeOnce(() => model.decode([{ seq, token: drafts[i][0] }], { timing }), d);
        await timeOnce(() => model.verify(seq, drafts[i], { timing }), v);
      }
    }
    for (const [i, k] of ks.entries()) {
      const v = verify[i].result();
      const d = decode[i].result();
      ctx.emit({
        type: 'verify',
        k,
        depth,
        reps: w.reps,
        chunks: chunksOf(k),
        verify: v,
        decode: d,
        cost: verifyCost(
          model.config,
          length,
          k,
          VERIFY_CHUNK,
          ctx.variants.attentionDecode,
          ctx.weightFormats,
          graphOf(model),
        ),
      });
      out.push({ k, depth, verifyMs: percentile(v.wallMs, 50), decodeMs: percentile(d.wallMs, 50) });
    }
  } finally {
    model.freeSequence(seq);
    profiler.destroy();
  }
  return out;
}

/**
 * The draws of one prompt under sampling, or undefined for greedy. The plain run and each drafter's
 * run get streams from the same seed, so their first tokens (drawn from the same prefill logits
 * with the stream's first number) are the same.
 */
function sampling(w: WorkloadOf<'spec'>, seed: number): (() => SeededDraws) | undefined {
  const temperature = w.temperature;
  if (!temperature) return undefined;
  return () => ({
    settings: { temperature, topK: 0, topP: 1 },
    random: mulberry32((seed ^ 0x5eed5eed) >>> 0),
  });
}

/** The first token after a prompt: its greedy one, or a draw from its logits. */
async function firstToken(model: Model, seq: number, prompt: number[], s: SeededDraws | undefined) {
  const [first] = await model.prefill([{ seq, tokens: prompt }], s ? 'last' : 'none');
  if (!s) return first.nextToken;
  if (!first.logits) throw new InternalError('the prefill returned no logits');
  return sampleToken(first.logits, s.settings, s.random());
}

/**
 * Plain decode of `gen` tokens, greedy or sampled: the baseline TPOT (wall clock) and the reference
 * output. A sampled step reads its logits back and draws on the CPU, as the speculative run does.
 */
async function plainRun(model: Model, prompt: number[], gen: number, draws: (() => SeededDraws) | undefined) {
  const s = draws?.();
  const seq = model.createSequence();
  try {
    const tokens = [await firstToken(model, seq, prompt, s)];
    const t0 = performance.now();
    let t = t0;
    while (tokens.length < gen) {
      const step = await model.decode([{ seq, token: tokens[tokens.length - 1] }], {
        logits: s !== undefined,
      });
      t = performance.now();
      if (!s) tokens.push(step.nextTokens[0]);
      else if (!step.logits) throw new InternalError('the decode step returned no logits');
      else tokens.push(sampleToken(step.logits, s.settings, s.random()));
    }
    return { tokens, tpotMs: (t - t0) / (gen - 1) };
  } finally {
    model.freeSequence(seq);
  }
}

async function specRun(
  ctx: WorkloadContext<SpecRecord>,
  model: Model,
  drafter: Drafter,
  prompt: number[],
  w: WorkloadOf<'spec'>,
  draws: (() => SeededDraws) | undefined,
) {
  const s = draws?.();
  const seq = model.createSequence();
  try {
    const first = await firstToken(model, seq, prompt, s);
    const now = () => performance.now();
    const r = await speculativeDecode(model, drafter, {
      seq,
      prompt,
      first,
      firstAt: now(),
      count: w.gen,
      k: w.k,
      adaptive: w.adaptiveK,
      now,
      signal: ctx.signal,
      sampling: s,
    });
    return { ...r, tpotMs: (r.arrivals[r.arrivals.length - 1] - r.arrivals[0]) / (w.gen - 1) };
  } finally {
    model.freeSequence(seq);
  }
}

type Outcome = Awaited<ReturnType<typeof specRun>>;

const mean = (xs: readonly number[]) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);

/** One run's record: acceptance pooled over its prompts, times per step, and the prediction. */
function summarize(
  id: { text: string; spec: DrafterSpec; label: string; promptClass: string; w: WorkloadOf<'spec'> },
  outcomes: Outcome[],
  baseline: { tokens: number[] }[],
  baselineTpotMs: number,
  curve: { k: number; depth: number; verifyMs: number; decodeMs: number }[],
): SpecRun {
  const { w } = id;
  const steps = outcomes.flatMap((o) => o.steps);
  const drafted = steps.reduce((a, s) => a + s.drafted, 0);
  const accepted = steps.reduce((a, s) => a + s.accepted, 0);
  const withDraft = steps.filter((s) => s.drafted > 0).length;
  const positions: { proposed: number; accepted: number }[] = [];
  for (const s of steps) {
    for (let i = 0; i < s.drafted; i++) {
      positions[i] ??= { proposed: 0, accepted: 0 };
      positions[i].proposed++;
      if (i < s.accepted) positions[i].accepted++;
    }
  }
  let firstMismatch: SpecRun['firstMismatch'] = null;
  for (const [p, o] of outcomes.entries()) {
    const index = o.tokens.findIndex((t, i) => t !== baseline[p].tokens[i]);
    if (index >= 0) {
      firstMismatch = { prompt: p, index };
      break;
    }
  }
  const tpotMs = mean(outcomes.map((o) => o.tpotMs));
  // The prediction from measured parts: tokens per step, the curve's verify time at each step's
  // own size (the last steps of a prompt verify fewer rows), and the measured draft time.
  const emitted = outcomes.reduce((a, o) => a + o.tokens.length - 1, 0);
  const depth = w.promptTokens + w.gen / 2;
  const at = (rows: number) => curveAt(curve, rows, depth);
  const base = at(1);
  const verifyFromCurve = mean(steps.map((s) => at(s.rows)?.verifyMs ?? 0));
  const draftMs = mean(steps.map((s) => s.draftMs));
  const predicted = base
    ? predictedSpeedup({
        meanAcceptanceLength: steps.length > 0 ? emitted / steps.length : 0,
        draftMs,
        verifyMs: verifyFromCurve,
        decodeMs: base.decodeMs,
      })
    : 0;
  return {
    drafter: id.text,
    label: id.label,
    synthetic: id.spec.kind === 'oracle',
    k: w.k,
    adaptiveK: w.adaptiveK,
    promptClass: id.promptClass,
    prompts: outcomes.length,
    promptTokens: w.promptTokens,
    tokens: w.gen,
    steps: steps.length,
    drafted,
    accepted,
    acceptanceRate: drafted > 0 ? accepted / drafted : 0,
    meanAcceptanceLength: withDraft > 0 ? 1 + accepted / withDraft : 1,
    perPosition: positions.map((p) => (p.proposed > 0 ? p.accepted / p.proposed : 0)),
    draftMs,
    verifyMs: mean(steps.map((s) => s.verifyMs)),
    tpotMs,
    baselineTpotMs,
    speedup: tpotMs > 0 ? baselineTpotMs / tpotMs : 0,
    predictedSpeedup: predicted,
    identical: w.temperature ? null : firstMismatch === null,
    firstMismatch: w.temperature ? null : firstMismatch,
    ...(w.temperature ? { temperature: w.temperature } : {}),
  };
}

type SpecRecord = VerifyRecord | SpecRunRecord;

/** Speculative decoding's engine: the verify curve placed on the roofline, its knee, and the runs. */
export const specEngine: WorkloadEngine<'spec', SpecRecord> = {
  run: specDecoding,
  describe: (r) =>
    r.type === 'verify'
      ? `verify k=${r.k} at depth ${r.depth}`
      : `speculative ${r.run.label} on ${r.run.promptClass} prompts`,
  collect: (records, run) => {
    const curve = records.flatMap((r) => (r.type === 'verify' ? [placeVerify(r, run.peaks, run.clock)] : []));
    const runs = records.flatMap((r) => (r.type === 'specRun' ? [r.run] : []));
    return curve.length > 0 || runs.length > 0 ? { speculative: speculativeResult(curve, runs) } : {};
  },
  targets: specTargets,
};
