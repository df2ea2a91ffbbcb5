import type { PeaksRecord as Peaks, Point } from '../results/schema.ts';
import type { BatchScalingPoint } from '../spec/workloads/decode.ts';
import type { ServeResult, ServeRun } from '../spec/workloads/serve-result.ts';
import { SERVE_DEFAULTS } from '../spec/workloads/serve-settings.ts';

/** What every serve figure is timed with. */
export const SERVE_CLOCK =
  'wall: performance.now() in the engine worker; a token is stamped when the readback of the step that produced it returns (each step is one submit of decode rows and prompt chunks)';

export const SERVE_DEFINITIONS =
  "vLLM's: queue = admission − arrival; TTFT = first token − arrival; TPOT = (E2E − TTFT) ÷ (output tokens − 1); ITL = every gap between consecutive tokens; E2E = finish − arrival; goodput = finished requests meeting every SLO given ÷ duration; percentiles by linear interpolation between closest ranks (numpy's default). Only finished requests count in latencies.";

/** The serve section: the arms as the workload emitted them, and the rate sweep read off the swept arms. */
export function serveResult(runs: readonly ServeRun[]): ServeResult {
  const swept = runs.filter((r) => r.experiment === 'sweep');
  const attainment = SERVE_DEFAULTS.sloAttainment;
  const points = swept.map((r) => {
    const s = r.summary;
    const offered =
      r.arrival.kind === 'poisson' && r.arrival.rateRps !== undefined ? r.arrival.rateRps : s.requestsPerSec;
    return {
      label: r.label,
      rateRps: offered,
      requestsPerSec: s.requestsPerSec,
      goodputRps: s.goodputRps,
      p95TtftMs: s.ttftMs?.p95 ?? null,
      // Without an SLO every finished request would count as meeting it: no rate is said to meet one.
      meetsSlo: hasSlo(r) && s.completed > 0 && s.goodputRps >= attainment * s.requestsPerSec,
    };
  });
  const meeting = points.filter((p) => p.meetsSlo).map((p) => p.rateRps);
  return {
    runs: [...runs],
    sweep:
      points.length > 0
        ? { points, attainment, maxRateMeetingSlo: meeting.length > 0 ? Math.max(...meeting) : null }
        : null,
    clock: SERVE_CLOCK,
    definitions: SERVE_DEFINITIONS,
  };
}

function hasSlo(r: ServeRun): boolean {
  return r.slo.ttftMs !== undefined || r.slo.tpotMs !== undefined || r.slo.e2elMs !== undefined;
}

/**
 * The B-scaling curve from decode points of several batch sizes at one depth: each step's median
 * against its roofline bound, max(FLOPs ÷ FMA peak, bytes ÷ copy bandwidth) + the measured submit
 * overhead, all from the run's own roofs. One point per batch (the shallowest depth if several).
 */
export function batchScaling(points: readonly Point[], peaks: Peaks): BatchScalingPoint[] {
  const decode = points.filter((p) => p.pass === 'decode');
  const batches = [...new Set(decode.map((p) => p.batch))].sort((a, b) => a - b);
  if (batches.length < 2) return [];
  return batches.map((batch) => {
    const p = decode.filter((q) => q.batch === batch).sort((a, b) => a.depth - b.depth)[0];
    const boundMs =
      Math.max(p.flops / (peaks.fmaGflops * 1e6), p.bytes / (peaks.copyGBps * 1e6)) + peaks.submitUs / 1000;
    return {
      batch,
      stepMs: p.medianMs,
      tokensPerSec: (batch * 1000) / p.medianMs,
      boundMs,
      ratio: p.medianMs / boundMs,
    };
  });
}
