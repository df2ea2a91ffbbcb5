import { checkedRun } from '../gpu/device.ts';
import { measurePeaks } from '../measure/peaks.ts';
import type { Model } from '../model/forward.ts';
import { decodePrompt } from '../spec/workload.ts';
import {
  detectThrottling,
  type SustainedSection,
  type SustainedWindow,
} from '../spec/workloads/sustained.ts';
import { promptTokens } from './prompts.ts';
import { requireModel, type WorkloadEngine, type WorkloadRunner } from './workload.ts';

/** What the sustained runner hands the collector as it goes, so a cancel keeps what finished. */
export type SustainedRecord =
  | ({ type: 'sustained-window' } & SustainedWindow)
  | { type: 'sustained-roofs'; atS: number; fmaGflops: number; copyGBps: number }
  | {
      type: 'sustained-end';
      durationS: number;
      windowS: number;
      prefillTokens: number;
      decodeDepth: number;
    };

type Pass = SustainedWindow['pass'];

/** Tokens and wall time of each pass kind within one window. */
class WindowTally {
  readonly sums = new Map<Pass, { tokens: number; ms: number; passes: number }>();
  constructor(readonly index: number) {}
  add(pass: Pass, tokens: number, ms: number): void {
    const s = this.sums.get(pass) ?? { tokens: 0, ms: 0, passes: 0 };
    this.sums.set(pass, { tokens: s.tokens + tokens, ms: s.ms + ms, passes: s.passes + 1 });
  }
}

/** One prefill of L tokens on a fresh sequence: its wall time, the readback of its next token included. */
async function prefillOnce(model: Model, tokens: number[]): Promise<number> {
  const seq = model.createSequence();
  try {
    const start = performance.now();
    await model.prefill([{ seq, tokens }], 'none');
    return performance.now() - start;
  } finally {
    model.freeSequence(seq);
  }
}

/** One generation at a depth: the depth prompt's prefill (not counted), then gen − 1 timed decode steps. */
async function decodeOnce(model: Model, prompt: number[], gen: number): Promise<number> {
  const seq = model.createSequence();
  try {
    let token = (await model.prefill([{ seq, tokens: prompt }], 'none'))[0].nextToken;
    const start = performance.now();
    for (let s = 1; s < gen; s++) token = (await model.decode([{ seq, token }])).nextTokens[0];
    return performance.now() - start;
  } finally {
    model.freeSequence(seq);
  }
}

/**
 * Repeats a prefill of L and a decode generation at the depth until the duration is up. The clock
 * is the wall clock from the workload's start, stopped while the roofs are measured; each pass lands
 * in the window its start falls in, and a window's tok/s is its tokens over the wall time of those
 * passes. The roofs are the run's own at the start (measured just before the workloads), then
 * measured again every `roofEveryS`, and at the end when one is due there. Each window is emitted once the next has begun, so a cancel keeps every
 * finished window and drops only the one in progress.
 */
export const sustainedRun: WorkloadRunner<'sustained', SustainedRecord> = async (ctx, w) => {
  const model = requireModel(ctx);
  const vocab = ctx.config.vocabSize;
  const windows = Math.ceil(w.durationS / w.windowS);
  // The load's clock: wall time since the start, less the roof checks (it stops while they run, so
  // every window holds the same span of load whatever the roofs cost on this device).
  const t0 = performance.now();
  let pausedMs = 0;
  const elapsedS = () => (performance.now() - t0 - pausedMs) / 1000;
  const roofs = async () => {
    const atS = elapsedS();
    const started = performance.now();
    ctx.progress(Math.min(windows, atS / w.windowS), windows, 'measuring the roofs again');
    const p = await measurePeaks(ctx.gpu, ctx.pipelines, ctx.signal, ctx.roofs);
    pausedMs += performance.now() - started;
    ctx.emit({ type: 'sustained-roofs', atS, fmaGflops: p.fmaGflops, copyGBps: p.copyGBps });
  };
  const flush = (t: WindowTally) => {
    for (const [pass, s] of t.sums) {
      if (s.ms <= 0) continue;
      ctx.emit({
        type: 'sustained-window',
        startS: t.index * w.windowS,
        pass,
        tokPerS: s.tokens / (s.ms / 1000),
        passes: s.passes,
      });
    }
  };

  // The roofs at 0 s are the run's own, measured just before the workloads.
  ctx.emit({ type: 'sustained-roofs', atS: 0, fmaGflops: ctx.roofs.fmaGflops, copyGBps: ctx.roofs.copyGBps });
  let nextRoofS = w.roofEveryS;
  let tally = new WindowTally(0);
  const depthPrompt = decodePrompt(w.depth);
  for (let i = 0; ; i++) {
    ctx.signal.throwIfAborted();
    if (elapsedS() >= w.durationS) break;
    if (elapsedS() >= nextRoofS) {
      await roofs();
      while (nextRoofS <= elapsedS()) nextRoofS += w.roofEveryS;
    }
    for (const pass of ['prefill', 'decode'] as const) {
      ctx.signal.throwIfAborted();
      const startS = elapsedS();
      if (startS >= w.durationS) break;
      const index = Math.floor(startS / w.windowS);
      if (index !== tally.index) {
        flush(tally);
        tally = new WindowTally(index);
        ctx.progress(index, windows, `window ${index + 1} of ${windows}`);
      }
      // Distinct prompts each time, so nothing is served from a cache the next pass could reuse.
      const run =
        pass === 'prefill'
          ? () => prefillOnce(model, promptTokens(w.length, vocab, 1000 + i))
          : () => decodeOnce(model, promptTokens(depthPrompt, vocab, 5000 + i), w.gen);
      const ms = i === 0 ? await checkedRun(ctx.gpu, `sustained ${pass}`, run) : await run();
      tally.add(pass, pass === 'prefill' ? w.length : w.gen - 1, ms);
    }
  }
  flush(tally);
  if (elapsedS() >= nextRoofS - 1e-9 && nextRoofS <= w.durationS + 1e-9) await roofs();
  ctx.emit({
    type: 'sustained-end',
    durationS: elapsedS(),
    windowS: w.windowS,
    prefillTokens: w.length,
    decodeDepth: w.depth,
  });
  ctx.progress(windows, windows, 'done');
};

/** The section from the records so far: a cancelled run has its finished windows and roofs. */
export function sustainedSection(
  records: readonly SustainedRecord[],
  settings: { durationS: number; windowS: number; length: number; depth: number } | undefined,
): SustainedSection | undefined {
  const windows = records.flatMap((r) =>
    r.type === 'sustained-window'
      ? [{ startS: r.startS, pass: r.pass, tokPerS: r.tokPerS, passes: r.passes }]
      : [],
  );
  const roofs = records.flatMap((r) =>
    r.type === 'sustained-roofs' ? [{ atS: r.atS, fmaGflops: r.fmaGflops, copyGBps: r.copyGBps }] : [],
  );
  if (windows.length === 0 && roofs.length === 0) return undefined;
  const end = records.find((r) => r.type === 'sustained-end');
  const windowS = end?.windowS ?? settings?.windowS ?? 10;
  return {
    // A cancelled run lasted as far as its last finished window.
    durationS: end?.durationS ?? Math.max(0, ...windows.map((x) => x.startS + windowS)),
    windowS,
    prefillTokens: end?.prefillTokens ?? settings?.length ?? 1,
    decodeDepth: end?.decodeDepth ?? settings?.depth ?? 0,
    windows,
    roofs,
    throttling: detectThrottling(windows),
  };
}

export const sustainedEngine: WorkloadEngine<'sustained', SustainedRecord> = {
  run: sustainedRun,
  describe: (r) =>
    r.type === 'sustained-window'
      ? `${r.pass} ${r.tokPerS.toFixed(1)} tok/s in the window from ${r.startS.toFixed(0)} s`
      : r.type === 'sustained-roofs'
        ? `roofs at ${r.atS.toFixed(0)} s: ${r.fmaGflops.toFixed(1)} GFLOP/s, ${r.copyGBps.toFixed(1)} GB/s`
        : 'sustained load finished',
  collect: (records, run) => {
    const section = sustainedSection(records, run.workloads[0]);
    return section ? { sustained: section } : {};
  },
  targets: () => [],
};
