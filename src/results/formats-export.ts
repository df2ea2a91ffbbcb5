import { escapeMarkdown, fixed, formatMs, MISSING, markdownDelimiter, markdownRow } from '../markdown.ts';
import { PRESETS } from '../model/config.ts';
import type { BenchResult, FormatSummary, Quality } from './schema.ts';

/** Said wherever the error table is shown: what seeded weights can and cannot tell. */
export const QUALITY_CAVEAT =
  'Seeded random weights measure numerical error, not task quality; a loaded real model measures both.';

/** What each error column means, in the words the report and the page use. */
export const QUALITY_DEFINITIONS =
  'Each slice compares next-token distributions with f32 on the same inputs: every prompt’s prefill, then decode steps fed f32’s greedy tokens. rel err = ‖logits − f32‖₂ ÷ ‖f32‖₂ over the slice; top-1 = share of distributions with f32’s argmax; KL = mean KL(f32 ‖ format), nats; diverges at = the first generated token (0-based) where greedy output leaves f32’s, – if none.';

const MiB = 2 ** 20;

export function formatsTable(rows: readonly FormatSummary[]): string[] {
  return [
    '**Weight formats** (same preset, same run; TPOT and prefill are wall-clock medians; bytes per token from the cost model, scales included)',
    '',
    markdownRow([
      'format',
      'linear weights MiB',
      'bytes / decode token',
      'TPOT ms',
      'tokens/s',
      'TPOT ÷ f32',
      'prefill ms',
      'prefill ÷ f32',
    ]),
    markdownDelimiter('lrrrrrrr'),
    ...rows.map((f) =>
      markdownRow([
        f.format,
        fixed(f.linearBytes / MiB, 2),
        `${fixed(f.decodeBytesPerToken / MiB, 2)} MiB`,
        formatMs(f.tpotMs),
        fixed(f.tokensPerSec, 1),
        f.tpotRatio === null ? MISSING : fixed(f.tpotRatio, 2),
        formatMs(f.prefillMs),
        f.prefillRatio === null ? MISSING : fixed(f.prefillRatio, 2),
      ]),
    ),
  ];
}

/** Whether the run's weights were seeded random ones (a preset) or a loaded model's. */
export function qualitySource(preset: string): string {
  return preset in PRESETS ? 'this run: seeded random weights' : 'this run: a loaded model';
}

export function qualityTable(rows: readonly Quality[], preset: string): string[] {
  return [
    `**Error against f32, by slice** (${qualitySource(preset)}). ${QUALITY_CAVEAT}`,
    '',
    markdownRow([
      'format',
      'slice',
      'prompts × steps',
      'prompt tokens',
      'rel err',
      'top-1',
      'KL',
      'diverges at',
    ]),
    markdownDelimiter('llrrrrrr'),
    ...rows.map((q) =>
      markdownRow([
        q.format,
        q.slice,
        `${q.prompts} × ${q.steps}`,
        q.promptTokens.join(', '),
        q.relErr.toExponential(2),
        `${fixed(q.top1Agreement * 100, 1)}%`,
        q.klDiv.toExponential(2),
        q.divergenceStep === null ? MISSING : String(q.divergenceStep),
      ]),
    ),
    '',
    escapeMarkdown(QUALITY_DEFINITIONS),
  ];
}

/** The format sweep's sections of the Markdown report. */
export function formatSections(r: BenchResult): string[][] {
  const out: string[][] = [];
  if (r.formats && r.formats.length > 0) out.push(formatsTable(r.formats));
  if (r.quality && r.quality.length > 0) out.push(qualityTable(r.quality, r.model.preset));
  return out;
}
