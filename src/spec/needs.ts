import type { BenchSpec } from './schema.ts';
import { VALIDATION_TOKENS, type WorkloadNeeds } from './workload.ts';
import { descriptorOf } from './workloads/index.ts';

/** The most a spec's workloads ask of the engine at once. */
export type EngineNeeds = WorkloadNeeds;

/**
 * Sizes the engine for a fitted spec: the most any workload asks, each by its descriptor. The
 * validation pass (5 tokens, one sequence, one row) is counted too, so a spec of only short points
 * still validates.
 */
export function engineNeeds(spec: BenchSpec): EngineNeeds {
  const needs: EngineNeeds = {
    model: false,
    kernels: false,
    maxPrompt: VALIDATION_TOKENS,
    maxSequences: 1,
    maxContextTokens: VALIDATION_TOKENS,
    maxBatch: 1,
    gemvBatches: [1],
    decodeContext: 0,
  };
  for (const w of spec.workloads) {
    const n = descriptorOf(w).needs(w);
    needs.model ||= n.model;
    needs.kernels ||= n.kernels;
    needs.maxPrompt = Math.max(needs.maxPrompt, n.maxPrompt);
    needs.maxSequences = Math.max(needs.maxSequences, n.maxSequences);
    needs.maxContextTokens = Math.max(needs.maxContextTokens, n.maxContextTokens);
    needs.maxBatch = Math.max(needs.maxBatch, n.maxBatch);
    needs.gemvBatches.push(...n.gemvBatches);
    needs.decodeContext = Math.max(needs.decodeContext, n.decodeContext);
  }
  needs.gemvBatches = [...new Set(needs.gemvBatches)].sort((a, b) => a - b);
  return needs;
}
