/**
 * The seed's case 8.1, scaled to the user's model (`--suite case`): a RAG service's short Q&A
 * requests (a shared system prompt, a short question, a short answer) meet a new document-summary
 * feature whose prompts fill most of the context. The arms, the traffic's shape and the remedies'
 * settings are here; src/workloads/serve.ts runs them and serve-case-report.ts reads the diagnosis
 * off the incident's own figures.
 */

/** The short requests' class, and the long one the incident adds. */
export const CASE_SHORT = 'qa';
export const CASE_LONG = 'summary';

export const CASE_DEFAULTS = {
  /** Requests per arm. */
  requests: 40,
  /** The summaries' share of the incident's requests: the seed names none; one in five is ours. */
  longShare: 0.2,
  /** The baseline's arrival rate as a share of its measured saturation rate: a service with headroom. */
  load: 0.5,
  /** Without --slo, goodput counts a request within this many times the baseline's short TTFT p99. */
  sloFactor: 2,
  /**
   * The routing remedy's pools: the short pool keeps three quarters of the pages, slots and step
   * tokens. On one device routing cannot add hardware, as the seed's separate cluster does; it can
   * only fence the long prompts into a smaller share.
   */
  shortPoolShare: 0.75,
  /** The capacity remedy multiplies the KV pool and the step's token budget (the batch slots stay: the model's). */
  capacityFactor: 2,
} as const;

export const CASE_ROLES = [
  'baseline',
  'incident',
  'routing',
  'prefix-cache',
  'capacity',
  'kv-budget',
  'all',
] as const;
export type CaseRole = (typeof CASE_ROLES)[number];

/** Lengths in tokens of the case's requests for a context of L (floored, at least 1). */
export function caseShape(maxSeqLen: number) {
  const L = maxSeqLen;
  const f = (d: number) => Math.max(1, Math.floor(L / d));
  const system = f(16);
  return {
    /** The shared system prompt at the head of every request. */
    systemTokens: system,
    short: {
      prompt: { min: system + 16, max: system + Math.max(16, f(32)) },
      output: { min: 8, max: Math.max(8, f(64)) },
    },
    long: { prompt: { min: Math.floor((5 * L) / 8), max: Math.floor((3 * L) / 4) }, output: f(32) },
    /** The KV budget remedy: a quarter of the context per request, the long prompts cut to fit. */
    kvBudgetTokens: f(4),
  };
}

/** The arm labels, by role. */
export const CASE_LABELS: Record<CaseRole, string> = {
  baseline: 'baseline: short Q&A',
  incident: 'incident: + document summaries',
  routing: 'remedy: route summaries to their own pool',
  'prefix-cache': 'remedy: prefix cache',
  capacity: 'remedy: more capacity',
  'kv-budget': 'remedy: per-request KV budget',
  all: 'all four remedies',
};
