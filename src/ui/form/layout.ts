/**
 * The run form's fields, each made once, in the order and groups the page shows them: the model,
 * the suite, the weights and the sweep, the speculative suite's and the load test's own fieldsets,
 * profiling, and the advanced settings. The sweep fields start with a sweep's words; the suite
 * table (suites.ts) changes them with the suite.
 */
import { PAGE_SIZES } from '../../kv/cache.ts';
import { KV_DTYPES } from '../../kv/format.ts';
import { PRESET_NAMES } from '../../model/config.ts';
import { WEIGHT_FORMATS } from '../../weight-format.ts';
import { h } from '../dom.ts';
import type { Fields } from './fields.ts';
import { PAGE_SUITES, SWEEP_TEXT, suiteForm } from './suites.ts';

interface Layout {
  fieldset: HTMLFieldSetElement;
  /** The speculative suite's own fields, shown only while it is chosen. */
  specFields: HTMLFieldSetElement;
  /** The load test's own fields, likewise. */
  serveFields: HTMLFieldSetElement;
  /** The sustained suite's duration and window, likewise. */
  sustainedFields: HTMLFieldSetElement;
}

/** The elements the form keeps itself, placed among the fields. */
interface Parts {
  presetInfo: HTMLElement;
  localModel: HTMLElement;
  /** The Prompt box: text to generate from, with the model's own tokenizer. */
  promptBox: HTMLElement;
  formError: HTMLElement;
}

/** Same value and text, for selects whose options say what they are. */
const plain = (values: readonly (string | number)[]) => values.map((v) => [String(v), String(v)] as const);

export function layOut(fields: Fields, parts: Parts): Layout {
  const specFields = h('fieldset', {
    className: 'spec-fields',
    testId: 'spec-fields',
    attrs: { hidden: true },
  });
  const serveFields = h('fieldset', {
    className: 'spec-fields',
    testId: 'serve-fields',
    attrs: { hidden: true },
  });
  const sustainedFields = h('fieldset', {
    className: 'spec-fields',
    testId: 'sustained-fields',
    attrs: { hidden: true },
  });
  // The KV type and window sit under Advanced, beside the layout; filled last (see below).
  const kvFields = h('div', { className: 'form-grid' });
  const fieldset = h('fieldset', {}, [
    h('legend', { className: 'visually-hidden', text: 'Benchmark configuration' }),
    h('div', { className: 'form-grid' }, [
      fields.select('preset', 'Model preset', plain(PRESET_NAMES)),
      fields.number('seed', 'Seed', { min: 0 }),
    ]),
    parts.presetInfo,
    parts.localModel,
    parts.promptBox,
    h('div', { className: 'form-grid' }, [
      fields.select(
        'suite',
        'Suite',
        PAGE_SUITES.map((s) => [s, suiteForm(s).option] as const),
      ),
      fields.select('pageSize', 'KV page size', plain(PAGE_SIZES)),
    ]),
    fields.select(
      'weights',
      'Weights',
      plain(WEIGHT_FORMATS),
      'Format of the linear layers, embedding table and LM head, quantized on load (a quantized .gguf keeps its own).',
    ),
    fields.text(
      'weightsList',
      'Formats to sweep',
      WEIGHT_FORMATS.join(', '),
      `Comma-separated, of ${WEIGHT_FORMATS.join(', ')}; f32 is always measured, as the reference.`,
    ),
    fields.list('prefill', SWEEP_TEXT.prefill.label, '16, 32, 64', SWEEP_TEXT.prefill.hint),
    fields.list('depths', SWEEP_TEXT.depths.label, '16, 128, 512', SWEEP_TEXT.depths.hint),
    h('div', { className: 'form-grid' }, [
      fields.number('gen', SWEEP_TEXT.gen.label, { min: 2 }),
      fields.number('reps', SWEEP_TEXT.reps.label, { min: 3 }),
    ]),
    specFields,
    serveFields,
    sustainedFields,
    fields.check('profile', 'Profile every repetition (a timed pass per kernel; slower)'),
    fields.check(
      'peer',
      'Compare with llama.cpp: the same weights through wllama (llama.cpp in WebAssembly) in this page, after the run',
      'The model is written as a GGUF file in the chosen format, which both engines then load; needs a preset or a model whose layers llama.cpp’s format can hold.',
    ),
    h('details', { className: 'advanced' }, [
      h('summary', { text: 'Advanced' }),
      h('div', { className: 'form-grid' }, [
        fields.number('warmup', 'Warm-up reps', { min: 1 }),
        fields.number('batch', 'Decode batch', { min: 1 }),
      ]),
      fields.select('kvMode', 'KV cache layout', [
        ['paged', 'paged'],
        ['contiguous', 'contiguous (A/B baseline)'],
      ]),
      kvFields,
      fields.check('autotune', 'Autotune: pick the fastest kernel family for this device first'),
      fields.check(
        'fuse',
        'Fused graph: 6 dispatches per layer (off: the unfused reference, 16)',
        'The quick suite also times both graphs side by side, whatever this says.',
      ),
    ]),
    parts.formError,
  ]);
  // Filled after the fields above, so that the fields' page-unique ids number as they always have.
  specFields.append(
    h('legend', { text: 'Speculative decoding' }),
    fields.text(
      'drafters',
      'Drafters',
      'ngram, oracle:0.8, truncated:1',
      'Comma-separated: ngram (or ngram:MIN-MAX), model:PRESET, truncated:N (the first N layers), oracle:P (synthetic, calibration only). None: the curve alone.',
    ),
    h('div', { className: 'form-grid' }, [
      fields.number('k', 'Draft length K', { min: 1, max: 16 }, '1…16 tokens per step.'),
      fields.list('verifyKs', 'Verify sizes k', '1, 2, 4, 8, 16', 'Tokens per curve pass, 1…17.'),
    ]),
    fields.check('adaptiveK', 'Adaptive K: shorter after a rejection, longer after a full acceptance'),
    fields.text(
      'temperature',
      'Temperature',
      'greedy',
      'Empty: greedy, each output checked token for token against plain decode. 0 < T ≤ 10: speculative sampling (the target’s distribution kept by the acceptance rule) against plain sampling.',
      'decimal',
    ),
  );
  serveFields.append(
    h('legend', { text: 'Load test' }),
    h('div', { className: 'form-grid' }, [
      fields.text(
        'rate',
        'Request rate (req/s)',
        'auto',
        'Poisson. Empty: 90% of the saturation rate, measured first; inf: all at once.',
        'decimal',
      ),
      fields.number('requests', 'Requests', { min: 1 }, 'In the trace every arm replays.'),
    ]),
    h('div', { className: 'form-grid' }, [
      fields.select('batching', 'Batching', [
        ['both', 'both (A/B)'],
        ['continuous', 'continuous'],
        ['static', 'static'],
      ]),
      fields.select('prefixCache', 'Prefix cache', [
        ['off', 'off'],
        ['on', 'on'],
        ['both', 'both (A/B)'],
      ]),
    ]),
    h('div', { className: 'form-grid' }, [
      fields.number(
        'prefixTokens',
        'Shared prefix tokens',
        { min: 0 },
        'A system prompt half the requests start with; 0: none.',
      ),
      fields.number(
        'sweep',
        'Rate sweep',
        { min: 0 },
        'Rates between one-at-a-time and all-at-once; 0: the A/B arms.',
      ),
    ]),
    fields.text(
      'slo',
      'SLOs',
      'ttft:500,tpot:50,e2el:5000',
      'Goodput counts requests meeting every one (ms), as vLLM’s --goodput; empty: none.',
    ),
    h('div', { className: 'form-grid' }, [
      fields.number('maxBatch', 'Max batch', { min: 1 }, 'Requests running at once.'),
      fields.number('tokenBudget', 'Token budget', { min: 1 }, 'Tokens one step computes.'),
    ]),
  );
  sustainedFields.append(
    h('legend', { text: 'Sustained load' }),
    h('div', { className: 'form-grid' }, [
      fields.text(
        'durationS',
        'Duration',
        '5m',
        'Seconds, or 90s, 5m, 1h. A laptop that throttles shows it after a minute or more.',
      ),
      fields.number(
        'windowS',
        'Window (s)',
        { min: 1 },
        'tok/s is reported per window; the roofs are measured again every minute.',
      ),
    ]),
  );
  kvFields.append(
    fields.select(
      'kvDtype',
      'KV type',
      plain(KV_DTYPES),
      'How the cache stores K and V: f16 halves it; int8 (an f32 scale per token and KV head) about quarters it.',
    ),
    fields.number(
      'window',
      'Window (tokens)',
      { min: 1 },
      'Attention sees only the last W tokens; older pages return to the pool. Empty: full attention.',
    ),
  );
  return { fieldset, specFields, serveFields, sustainedFields };
}
