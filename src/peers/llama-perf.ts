/**
 * Reading llama.cpp's own counters out of the lines `llama_perf_context_print` logs: pure, so the
 * unit tests reach it without loading the native peer (llama-cpp.ts, which only the peer's own
 * process may import).
 */

/**
 * llama.cpp's per-context counters since their last reset, as `llama_perf_context_print` prints
 * them. llama.cpp adds a `llama_decode` call to them when it synchronizes after it (node-llama-cpp's
 * decode worker calls `llama_synchronize` right after `llama_decode`), from the start of the decode
 * to the end of that synchronize: the span llama-bench times. A call of more than one token counts
 * as "prompt eval", a call of one token as "eval".
 */
export interface LlamaPerfReading {
  promptEvalMs: number;
  promptTokens: number;
  evalMs: number;
  evalRuns: number;
}

export const PERF_PREFIX = 'llama_perf_context_print:';

/**
 * Reads the counters out of `llama_perf_context_print`'s lines (other lines are skipped), or null
 * when either line is missing. Its format, from llama.cpp's llama-context.cpp:
 *   `…: prompt eval time = %10.2f ms / %5d tokens (…)` and `…:        eval time = %10.2f ms / %5d runs   (…)`.
 * Two things to know about it: times have 10 µs resolution, and a count of 0 prints as 1
 * (`std::max(1, n)`), with 0.00 ms, which is why the callers check counts against what they ran.
 */
export function parseLlamaPerf(lines: readonly string[]): LlamaPerfReading | null {
  let prompt: [number, number] | undefined;
  let evals: [number, number] | undefined;
  for (const line of lines.flatMap((l) => l.split('\n'))) {
    const at = line.indexOf(PERF_PREFIX);
    if (at < 0) continue;
    const rest = line.slice(at + PERF_PREFIX.length).trim();
    const m = /^(prompt eval|eval) time\s*=\s*(\d+(?:\.\d+)?) ms \/\s*(\d+) (tokens|runs)\b/.exec(rest);
    if (!m) continue;
    const pair: [number, number] = [Number(m[2]), Number(m[3])];
    if (m[1] === 'prompt eval' && m[4] === 'tokens') prompt = pair;
    else if (m[1] === 'eval' && m[4] === 'runs') evals = pair;
  }
  if (!prompt || !evals) return null;
  return { promptEvalMs: prompt[0], promptTokens: prompt[1], evalMs: evals[0], evalRuns: evals[1] };
}

/**
 * A prefill's time by llama.cpp's counters, read after that prefill alone: its prompt eval time,
 * or, for a one-token prompt (which llama.cpp counts as an eval run), its eval time. Throws when
 * the counters saw another count of prompt tokens, or single-token runs beside them, because the
 * figure would then not be the prefill's. (The batch is the context, so the prompt is one decode.)
 */
export function prefillMsFromPerf(r: LlamaPerfReading, tokens: number): number {
  const ok =
    tokens > 1 ? r.promptTokens === tokens && r.evalMs === 0 : r.evalRuns === 1 && r.promptEvalMs === 0;
  if (!ok)
    throw new Error(
      `llama.cpp peer: its counters saw ${r.promptTokens} prompt tokens (${r.promptEvalMs} ms) and ${r.evalRuns} single-token runs (${r.evalMs} ms) for a prefill of ${tokens} tokens`,
    );
  return tokens > 1 ? r.promptEvalMs : r.evalMs;
}

/**
 * One decode sample by llama.cpp's counters, read after `steps` single-token decodes of one
 * generation: the eval time per step. Throws when the counters saw another count of decodes.
 */
export function decodeStepMsFromPerf(r: LlamaPerfReading, steps: number): number {
  if (steps < 1 || r.evalRuns !== steps || r.promptEvalMs !== 0)
    throw new Error(
      `llama.cpp peer: its counters saw ${r.evalRuns} single-token runs and ${r.promptTokens} prompt tokens (${r.promptEvalMs} ms) for ${steps} decode steps`,
    );
  return r.evalMs / steps;
}
