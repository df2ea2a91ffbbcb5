import type { TimelinePoint } from './driver.ts';

/**
 * The request rate the engine sustains when saturated, from a run that sent every request at
 * t = 0. Its overall requests/s understates that: once the queue is empty the batch drains and the
 * last long generations run nearly alone. So only the saturated part counts: output tokens per
 * second (tokens emitted, first tokens included) over the steps while requests were still waiting (the batch full, prompts and decodes in
 * the trace's own proportions), divided by the trace's mean output tokens per request. Null when
 * the queue emptied in the first step (fewer requests than the batch holds): then there is no
 * saturated part to read.
 */
export function saturationRate(timeline: readonly TimelinePoint[], meanOutputTokens: number): number | null {
  if (timeline.length === 0 || meanOutputTokens <= 0) return null;
  const end = timeline.findIndex((p) => p.waiting === 0);
  if (end === 0) return null;
  const last = end < 0 ? timeline.length - 1 : end - 1;
  const startMs = timeline[0].tMs - timeline[0].stepMs;
  const spanMs = timeline[last].tMs - startMs;
  let tokens = 0;
  for (let i = 0; i <= last; i++) tokens += timeline[i].tokensOut;
  return spanMs > 0 && tokens > 0 ? (tokens * 1000) / spanMs / meanOutputTokens : null;
}
