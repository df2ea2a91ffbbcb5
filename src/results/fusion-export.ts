import { fixed, formatMs, formatPerLayer, MISSING, markdownDelimiter, markdownRow } from '../markdown.ts';
import type { FusionSummary } from './schema.ts';

/** What the fusion table's columns are, in the words the report and the page use. */
export const FUSION_CAPTION =
  'Fused against unfused graph (same weights, kernel families and run; dispatches as the engine recorded them, per layer without the embedding, LM head, argmax and final norm; prefill ms and TPOT are wall-clock p50)';

/** A graph as a row names it, saying so when a fused model ran unfused. */
export function fusionGraphLabel(f: Pick<FusionSummary, 'graph' | 'fused'>): string {
  return f.graph === 'fused' && !f.fused ? 'fused (ran unfused)' : f.graph;
}

export function fusionTable(rows: readonly FusionSummary[]): string[] {
  return [
    `**${FUSION_CAPTION}**`,
    '',
    markdownRow([
      'graph',
      'dispatches / layer, prefill',
      'dispatches / layer, decode',
      'dispatches per pass (prefill, decode)',
      'prefill ms',
      'TPOT ms',
      'prefill ÷ unfused',
      'TPOT ÷ unfused',
    ]),
    markdownDelimiter('lrrrrrrr'),
    ...rows.map((f) =>
      markdownRow([
        fusionGraphLabel(f),
        formatPerLayer(f.prefillPerLayer),
        formatPerLayer(f.decodePerLayer),
        `${f.prefillDispatches}, ${f.decodeDispatches}`,
        `${formatMs(f.prefillMs)} (L=${f.prefillTokens})`,
        `${formatMs(f.tpotMs)} (depth ${f.decodeDepth})`,
        f.prefillRatio === null ? MISSING : fixed(f.prefillRatio, 2),
        f.tpotRatio === null ? MISSING : fixed(f.tpotRatio, 2),
      ]),
    ),
  ];
}
