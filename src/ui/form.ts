/**
 * The run configuration form. It builds a BenchSpec and validates it with the same zod schema the
 * CLI and the engine use (BenchSpecSchema); each zod issue is shown at the field its path names.
 * The speculative suite has fields of its own (drafters, K, adaptive K, verify sizes), shown only
 * while it is chosen; there the depths and the tokens to generate are the verify-K curve's depths
 * and the tokens per prompt, as in buildSpec, and the fields say so. The load test (serve) has its
 * own too (rate, requests, batching, prefix cache, SLOs, scheduler limits, sweep) and none of the
 * sweep's; the B-scaling suite (batch) takes one depth, the tokens and the repetitions. The weights
 * field picks the linear layers' format; with the format sweep (formats) it becomes a list of the
 * formats to sweep, and the sweep fields name its one prompt length and one decode depth.
 */
import { PAGE_SIZES } from '../kv/cache.ts';
import { isPresetName, PRESET_NAMES, PRESETS, presetConfig } from '../model/config.ts';
import { parameterCount } from '../model/weights.ts';
import { parseSlo } from '../serve/metrics.ts';
import { fitToModel, modelErrors } from '../spec/fit.ts';
import { buildSpec, type SpecOptions } from '../spec/options.ts';
import type { BenchSpec } from '../spec/schema.ts';
import { SPEC_DEFAULTS, SUITES } from '../spec/suites.ts';
import { SERVE_DEFAULTS } from '../spec/workloads/serve-settings.ts';
import { BYTES, WEIGHT_FORMATS, type WeightFormat } from '../weight-format.ts';
import { h, uniqueId } from './dom.ts';
import { formatCount } from './format.ts';

/** The form's fields, by the name of the spec field they fill (preset and seed fill `model`). */
const FIELD_NAMES = [
  'preset',
  'seed',
  'suite',
  'weights',
  'weightsList',
  'prefill',
  'depths',
  'gen',
  'reps',
  'warmup',
  'pageSize',
  'kvMode',
  'batch',
  'profile',
  'autotune',
  'fuse',
  'drafters',
  'k',
  'adaptiveK',
  'verifyKs',
  'rate',
  'requests',
  'batching',
  'prefixCache',
  'prefixTokens',
  'slo',
  'maxBatch',
  'tokenBudget',
  'sweep',
] as const;

type FieldName = (typeof FIELD_NAMES)[number];

function isField(name: string | null): name is FieldName {
  return name !== null && (FIELD_NAMES as readonly string[]).includes(name);
}

type Control = HTMLInputElement | HTMLSelectElement;

interface Field {
  control: Control;
  error: HTMLElement;
  wrapper: HTMLElement;
  /** The label above the control (none for a checkbox, whose label wraps it). */
  label: HTMLLabelElement | null;
  /** The hint under the control, hidden while empty. */
  hint: HTMLElement;
}

/**
 * Labels and hints of the fields whose meaning changes with the suite: a sweep's, the speculative
 * suite's, B-scaling's or the format sweep's.
 */
const SUITE_TEXT = {
  sweep: {
    prefill: { label: 'Prefill lengths L', hint: 'Prompt lengths, comma-separated.' },
    depths: { label: 'Decode depths', hint: 'Context tokens before generation.' },
    gen: { label: 'Tokens to generate', hint: '' },
    reps: { label: 'Repetitions', hint: '' },
  },
  spec: {
    depths: { label: 'Verify-curve depths', hint: 'Context tokens before each verify pass of the curve.' },
    gen: { label: 'Tokens per prompt', hint: 'Generated per prompt, by plain decode and by each drafter.' },
    reps: { label: 'Repetitions', hint: 'Timed samples of each curve point.' },
  },
  batch: {
    depths: { label: 'Depth', hint: 'Context tokens of every sequence before its timed decode steps.' },
    gen: { label: 'Tokens to generate', hint: 'Decode steps of B sequences each repetition times.' },
    reps: { label: 'Repetitions', hint: 'Timed samples at each B.' },
  },
  formats: {
    prefill: { label: 'Prompt length L', hint: 'One length: each format’s timed prefill.' },
    depths: { label: 'Decode depth', hint: 'One depth: context tokens before each format’s decode steps.' },
    gen: { label: 'Tokens to generate', hint: '' },
    reps: { label: 'Repetitions', hint: 'Timed samples of each format’s prefill and decode.' },
  },
} as const;

/** Defaults of the fields a suite does not set: the spec's own, so the CLI and the page agree. */
const DEFAULTS = {
  seed: SPEC_DEFAULTS.seed,
  weights: 'f32',
  weightsList: WEIGHT_FORMATS.join(', '),
  warmup: SPEC_DEFAULTS.warmup,
  pageSize: SPEC_DEFAULTS.pageSize,
  kvMode: SPEC_DEFAULTS.kvMode,
  batch: SPEC_DEFAULTS.batch,
  profile: SPEC_DEFAULTS.profile,
  autotune: SPEC_DEFAULTS.autotune,
  fuse: SPEC_DEFAULTS.fuse,
  drafters: SPEC_DEFAULTS.drafters.join(', '),
  k: SPEC_DEFAULTS.draftK,
  adaptiveK: false,
  verifyKs: SPEC_DEFAULTS.verifyKs.join(', '),
  rate: '',
  requests: SERVE_DEFAULTS.requests,
  batching: 'both',
  prefixCache: 'off',
  prefixTokens: 0,
  slo: '',
  maxBatch: SERVE_DEFAULTS.maxBatch,
  tokenBudget: SERVE_DEFAULTS.tokenBudget,
  sweep: 0,
} as const;

/**
 * The suites the page offers; the kernel suite is a CLI job (npm run bench -- --suite kernels), and
 * so is the capacity probe, whose pool has no field here (--pool-mib).
 */
type PageSuite = 'quick' | 'full' | 'spec' | 'serve' | 'batch' | 'formats';

function isPageSuite(suite: string): suite is PageSuite {
  return ['quick', 'full', 'spec', 'serve', 'batch', 'formats'].includes(suite);
}

/** Suites whose depths, tokens and repetitions are their own, sent as typed: typing them keeps the suite. */
const OWN_SWEEP_FIELDS: ReadonlySet<string> = new Set(['spec', 'batch', 'formats']);

/**
 * The formats to sweep as typed, comma- or space-separated. The names go to the spec schema as
 * they are (as drafter names do): it is the one that knows the formats and rejects a stranger.
 */
function parseFormats(text: string): WeightFormat[] {
  return text.split(/[\s,;]+/).filter(Boolean) as WeightFormat[];
}

/** A request rate as typed: empty for the calibrated rate, `inf` for all at once, else requests/s. */
function parseRate(text: string): { ok: true; value: number | undefined } | { ok: false; message: string } {
  const t = text.trim().toLowerCase();
  if (t === '') return { ok: true, value: undefined };
  if (t === 'inf' || t === '∞') return { ok: true, value: Number.POSITIVE_INFINITY };
  const v = Number(t);
  return Number.isNaN(v)
    ? { ok: false, message: 'Enter req/s (e.g. 2.5), inf, or nothing' }
    : { ok: true, value: v };
}

/** Result of reading a comma- or space-separated list of whole numbers. */
type ParsedList = { ok: true; values: number[] } | { ok: false; message: string };

function parseList(text: string): ParsedList {
  const tokens = text.split(/[\s,;]+/).filter(Boolean);
  const bad = tokens.find((t) => !/^\d+$/.test(t));
  if (bad !== undefined) return { ok: false, message: `“${bad}” is not a whole number` };
  return { ok: true, values: tokens.map(Number) };
}

/** Drafter names, comma- or space-separated; each is validated by the spec schema. */
function parseDrafters(text: string): string[] {
  return text.split(/[\s,;]+/).filter(Boolean);
}

function parseNumber(text: string): number | null {
  const t = text.trim();
  return t === '' || Number.isNaN(Number(t)) ? null : Number(t);
}

/** The form field a spec option fills: the same name, except the model source (preset and seed). */
function fieldOfOption(option: keyof SpecOptions | 'model' | null, message: string): FieldName | null {
  if (option === 'model') return message.startsWith('seed') ? 'seed' : 'preset';
  // Options the page has no field for (the capacity probe's pool, the load test's traffic) are CLI options.
  return isField(option) ? option : null;
}

export class ConfigForm {
  readonly element: HTMLFormElement;
  private readonly fields = new Map<FieldName, Field>();
  private readonly fieldset: HTMLFieldSetElement;
  private readonly formError = h('p', {
    className: 'field-error form-error',
    attrs: { role: 'alert', hidden: true },
  });
  private readonly presetInfo = h('p', { className: 'hint' });
  /** The speculative suite's own fields, shown only while it is chosen. */
  private readonly specFields = h('fieldset', {
    className: 'spec-fields',
    testId: 'spec-fields',
    attrs: { hidden: true },
  });
  /** The load test's own fields, likewise. */
  private readonly serveFields = h('fieldset', {
    className: 'spec-fields',
    testId: 'serve-fields',
    attrs: { hidden: true },
  });
  /** A model picked from disk; when set it replaces the preset. */
  private localModel: Extract<BenchSpec['model'], { kind: 'files' }> | undefined;

  constructor(private readonly onSubmit: () => void) {
    const presetSelect = h(
      'select',
      {},
      PRESET_NAMES.map((name) => h('option', { text: name, attrs: { value: name } })),
    );
    const suiteSelect = h('select', {}, [
      h('option', { text: 'quick', attrs: { value: 'quick' } }),
      h('option', { text: 'full', attrs: { value: 'full' } }),
      h('option', { text: 'speculative', attrs: { value: 'spec' } }),
      h('option', { text: 'load test', attrs: { value: 'serve' } }),
      h('option', { text: 'B-scaling', attrs: { value: 'batch' } }),
      h('option', { text: 'weight formats', attrs: { value: 'formats' } }),
      h('option', { text: 'custom', attrs: { value: 'custom' } }),
    ]);
    const pageSelect = h(
      'select',
      {},
      PAGE_SIZES.map((n) => h('option', { text: String(n), attrs: { value: String(n) } })),
    );
    const kvSelect = h('select', {}, [
      h('option', { text: 'paged', attrs: { value: 'paged' } }),
      h('option', { text: 'contiguous (A/B baseline)', attrs: { value: 'contiguous' } }),
    ]);
    const numberInput = (min: number) =>
      h('input', { attrs: { type: 'number', inputmode: 'numeric', min, step: 1 } });
    const listInput = (placeholder: string) =>
      h('input', { attrs: { type: 'text', inputmode: 'numeric', autocomplete: 'off', placeholder } });
    const textInput = (placeholder: string) =>
      h('input', { attrs: { type: 'text', autocomplete: 'off', spellcheck: 'false', placeholder } });
    const profile = h('input', { attrs: { type: 'checkbox' } });
    const autotune = h('input', { attrs: { type: 'checkbox' } });
    const fuse = h('input', { attrs: { type: 'checkbox' } });
    const adaptiveK = h('input', { attrs: { type: 'checkbox' } });
    const draftK = numberInput(1);
    draftK.max = '16';
    const choice = (entries: readonly (readonly [string, string])[]) =>
      h(
        'select',
        {},
        entries.map(([value, text]) => h('option', { text, attrs: { value } })),
      );

    const field = (name: FieldName, label: string, control: Control, hint = ''): HTMLElement => {
      const id = uniqueId(`f-${name}`);
      const errorId = `${id}-error`;
      const hintId = `${id}-hint`;
      control.id = id;
      control.name = name;
      control.setAttribute('aria-describedby', `${hintId} ${errorId}`);
      const error = h('p', { className: 'field-error', attrs: { id: errorId, hidden: true } });
      const hintEl = h('p', { className: 'hint', text: hint, attrs: { id: hintId, hidden: hint === '' } });
      const isCheckbox = control instanceof HTMLInputElement && control.type === 'checkbox';
      const labelEl = isCheckbox ? null : h('label', { text: label, attrs: { for: id } });
      const wrapper = h('div', { className: `field field-${name}${isCheckbox ? ' field-check' : ''}` }, [
        labelEl,
        isCheckbox ? h('label', { attrs: { for: id } }, [control, ` ${label}`]) : control,
        hintEl,
        error,
      ]);
      this.fields.set(name, { control, error, wrapper, label: labelEl, hint: hintEl });
      return wrapper;
    };

    // A local model: a Hugging Face one (config.json plus one .safetensors file) or a llama.cpp
    // .gguf file (its config inside), picked as files or as the folder holding them. The Blobs go
    // to the worker as they are; nothing is uploaded.
    const pickFiles = h('input', {
      attrs: { id: 'local-model', type: 'file', accept: '.safetensors,.json,.gguf', multiple: true },
    });
    const pickFolder = h('input', { attrs: { id: 'local-folder', type: 'file', webkitdirectory: '' } });
    const pickHint =
      'Pick config.json and model.safetensors (f32, f16 or bf16), or a .gguf file (F32, F16, BF16, Q8_0, Q4_0), or the folder holding them.';
    const localNote = h('p', { className: 'hint', text: pickHint });
    const localError = h('p', { className: 'field-error', attrs: { role: 'alert' } });
    const clearLocal = h('button', { text: 'Use the preset', attrs: { type: 'button', hidden: '' } });
    const onPick = (input: HTMLInputElement) => () => {
      const files = [...(input.files ?? [])];
      const config = files.find((f) => f.name === 'config.json');
      const weights = files.find((f) => f.name.endsWith('.safetensors'));
      const gguf = files.find((f) => f.name.toLowerCase().endsWith('.gguf'));
      localError.textContent = '';
      if (gguf) {
        this.localModel = { kind: 'files', weights: gguf, name: gguf.name };
        localNote.textContent = `Using ${gguf.name} (${(gguf.size / 2 ** 20).toFixed(1)} MiB) instead of the preset.`;
      } else if (!config || !weights) {
        this.localModel = undefined;
        localError.textContent = `Need config.json and a .safetensors file, or a .gguf file; got ${files.map((f) => f.name).join(', ') || 'nothing'}.`;
      } else {
        this.localModel = { kind: 'files', config, weights, name: weights.name };
        localNote.textContent = `Using ${weights.name} (${(weights.size / 2 ** 20).toFixed(1)} MiB) with its config.json instead of the preset.`;
      }
      clearLocal.hidden = !this.localModel;
    };
    pickFiles.addEventListener('change', onPick(pickFiles));
    pickFolder.addEventListener('change', onPick(pickFolder));
    clearLocal.addEventListener('click', () => {
      this.localModel = undefined;
      pickFiles.value = '';
      pickFolder.value = '';
      clearLocal.hidden = true;
      localNote.textContent = pickHint;
    });
    const localPicker = h('div', { className: 'field field-local' }, [
      h('label', { text: 'Or a local safetensors or GGUF model', attrs: { for: 'local-model' } }),
      pickFiles,
      h('label', { text: 'or a folder', attrs: { for: 'local-folder' } }),
      pickFolder,
      clearLocal,
      localNote,
      localError,
    ]);

    this.fieldset = h('fieldset', {}, [
      h('legend', { className: 'visually-hidden', text: 'Benchmark configuration' }),
      h('div', { className: 'form-grid' }, [
        field('preset', 'Model preset', presetSelect),
        field('seed', 'Seed', numberInput(0)),
      ]),
      this.presetInfo,
      localPicker,
      h('div', { className: 'form-grid' }, [
        field('suite', 'Suite', suiteSelect),
        field('pageSize', 'KV page size', pageSelect),
      ]),
      field(
        'weights',
        'Weights',
        choice(WEIGHT_FORMATS.map((f) => [f, f] as const)),
        'Format of the linear layers and LM head, quantized on load (a quantized .gguf keeps its own).',
      ),
      field(
        'weightsList',
        'Formats to sweep',
        textInput(WEIGHT_FORMATS.join(', ')),
        `Comma-separated, of ${WEIGHT_FORMATS.join(', ')}; f32 is always measured, as the reference.`,
      ),
      field(
        'prefill',
        SUITE_TEXT.sweep.prefill.label,
        listInput('16, 32, 64'),
        SUITE_TEXT.sweep.prefill.hint,
      ),
      field('depths', SUITE_TEXT.sweep.depths.label, listInput('16, 128, 512'), SUITE_TEXT.sweep.depths.hint),
      h('div', { className: 'form-grid' }, [
        field('gen', SUITE_TEXT.sweep.gen.label, numberInput(2)),
        field('reps', SUITE_TEXT.sweep.reps.label, numberInput(3)),
      ]),
      this.specFields,
      this.serveFields,
      field('profile', 'Profile every repetition (a timed pass per kernel; slower)', profile),
      h('details', { className: 'advanced' }, [
        h('summary', { text: 'Advanced' }),
        h('div', { className: 'form-grid' }, [
          field('warmup', 'Warm-up reps', numberInput(1)),
          field('batch', 'Decode batch', numberInput(1)),
        ]),
        field('kvMode', 'KV cache layout', kvSelect),
        field('autotune', 'Autotune: pick the fastest kernel family for this device first', autotune),
        field(
          'fuse',
          'Fused graph: 6 dispatches per layer (off: the unfused reference, 16)',
          fuse,
          'The quick suite also times both graphs side by side, whatever this says.',
        ),
      ]),
      this.formError,
    ]);
    this.specFields.append(
      h('legend', { text: 'Speculative decoding' }),
      field(
        'drafters',
        'Drafters',
        textInput('ngram, oracle:0.8, truncated:1'),
        'Comma-separated: ngram (or ngram:MIN-MAX), model:PRESET, truncated:N (the first N layers), oracle:P (synthetic, calibration only). None: the curve alone.',
      ),
      h('div', { className: 'form-grid' }, [
        field('k', 'Draft length K', draftK, '1…16 tokens per step.'),
        field('verifyKs', 'Verify sizes k', listInput('1, 2, 4, 8, 16'), 'Tokens per curve pass, 1…17.'),
      ]),
      field('adaptiveK', 'Adaptive K: shorter after a rejection, longer after a full acceptance', adaptiveK),
    );
    this.serveFields.append(
      h('legend', { text: 'Load test' }),
      h('div', { className: 'form-grid' }, [
        field(
          'rate',
          'Request rate (req/s)',
          h('input', {
            attrs: {
              type: 'text',
              inputmode: 'decimal',
              autocomplete: 'off',
              spellcheck: 'false',
              placeholder: 'auto',
            },
          }),
          'Poisson. Empty: 90% of the saturation rate, measured first; inf: all at once.',
        ),
        field('requests', 'Requests', numberInput(1), 'In the trace every arm replays.'),
      ]),
      h('div', { className: 'form-grid' }, [
        field(
          'batching',
          'Batching',
          choice([
            ['both', 'both (A/B)'],
            ['continuous', 'continuous'],
            ['static', 'static'],
          ]),
        ),
        field(
          'prefixCache',
          'Prefix cache',
          choice([
            ['off', 'off'],
            ['on', 'on'],
            ['both', 'both (A/B)'],
          ]),
        ),
      ]),
      h('div', { className: 'form-grid' }, [
        field(
          'prefixTokens',
          'Shared prefix tokens',
          numberInput(0),
          'A system prompt half the requests start with; 0: none.',
        ),
        field(
          'sweep',
          'Rate sweep',
          numberInput(0),
          'Rates between one-at-a-time and all-at-once; 0: the A/B arms.',
        ),
      ]),
      field(
        'slo',
        'SLOs',
        textInput('ttft:500,tpot:50,e2el:5000'),
        'Goodput counts requests meeting every one (ms), as vLLM’s --goodput; empty: none.',
      ),
      h('div', { className: 'form-grid' }, [
        field('maxBatch', 'Max batch', numberInput(1), 'Requests running at once.'),
        field('tokenBudget', 'Token budget', numberInput(1), 'Tokens one step computes.'),
      ]),
    );
    this.element = h(
      'form',
      { className: 'config-form', attrs: { novalidate: true, 'aria-label': 'Benchmark configuration' } },
      [this.fieldset],
    );
    this.element.addEventListener('submit', (ev) => {
      ev.preventDefault();
      this.onSubmit();
    });

    this.setValue('preset', PRESET_NAMES[0]);
    for (const [name, value] of Object.entries(DEFAULTS)) this.setValue(name as FieldName, value);
    this.applySuite('quick');

    suiteSelect.addEventListener('change', () => {
      const suite = suiteSelect.value;
      if (isPageSuite(suite)) this.applySuite(suite);
      else this.showSuiteFields();
      this.validate();
    });
    for (const name of ['prefill', 'depths', 'gen', 'reps'] as const) {
      this.control(name).addEventListener('input', () => {
        // The speculative and B-scaling suites' depths and tokens are their own to set; a sweep's make it custom.
        if (!OWN_SWEEP_FIELDS.has(this.text('suite'))) this.setValue('suite', this.matchingSuite());
      });
    }
    presetSelect.addEventListener('change', () => this.updatePresetInfo());
    this.element.addEventListener('input', () => this.validate());
    this.element.addEventListener('change', () => this.validate());
    this.updatePresetInfo();
  }

  /**
   * Fills the sweep fields with a built-in suite's values. The speculative and B-scaling suites keep
   * the prefill lengths as they were (they have none, and hide them) and their own fields as last
   * set; the load test has no sweep fields at all and leaves them be.
   */
  applySuite(suite: PageSuite): void {
    const s = SUITES[suite];
    this.setValue('suite', suite);
    if (suite !== 'serve') {
      if (suite !== 'spec' && suite !== 'batch') this.setValue('prefill', s.prefill.join(', '));
      this.setValue('depths', s.depths.join(', '));
      this.setValue('gen', s.gen);
      this.setValue('reps', s.reps);
    }
    this.showSuiteFields();
  }

  setPreset(name: string): void {
    if (!isPresetName(name)) return;
    this.setValue('preset', name);
    this.updatePresetInfo();
  }

  setDisabled(disabled: boolean): void {
    this.fieldset.disabled = disabled;
  }

  /** The validated spec, or null with every problem shown at its field. */
  read(): BenchSpec | null {
    return this.validate();
  }

  private control(name: FieldName): Control {
    const f = this.fields.get(name);
    if (!f) throw new Error(`no form field ${name}`);
    return f.control;
  }

  private setValue(name: FieldName, value: string | number | boolean): void {
    const c = this.control(name);
    if (c instanceof HTMLInputElement && c.type === 'checkbox') c.checked = value === true;
    else c.value = String(value);
  }

  private text(name: FieldName): string {
    return this.control(name).value;
  }

  /** Shows the fields the chosen suite uses, labelled for what they mean in it. */
  private showSuiteFields(): void {
    const suite = this.text('suite');
    const spec = suite === 'spec';
    const serve = suite === 'serve';
    const batch = suite === 'batch';
    const formats = suite === 'formats';
    this.specFields.hidden = !spec;
    this.serveFields.hidden = !serve;
    // Prefill lengths, per-kernel profiling and the decode batch are the sweeps'; the speculative
    // workload has none of them, B-scaling sets the batch itself, and the load test has no sweep.
    // The format sweep times one sequence without a profile, and takes a list of formats.
    const hidden: Record<
      'prefill' | 'profile' | 'batch' | 'depths' | 'gen' | 'reps' | 'weights' | 'weightsList',
      boolean
    > = {
      prefill: spec || serve || batch,
      profile: spec || serve || formats,
      batch: spec || serve || batch || formats,
      depths: serve,
      gen: serve,
      reps: serve,
      weights: formats,
      weightsList: !formats,
    };
    for (const [name, hide] of Object.entries(hidden)) {
      const f = this.fields.get(name as FieldName);
      if (f) f.wrapper.hidden = hide;
    }
    const texts = spec
      ? SUITE_TEXT.spec
      : batch
        ? SUITE_TEXT.batch
        : formats
          ? SUITE_TEXT.formats
          : SUITE_TEXT.sweep;
    for (const name of ['prefill', 'depths', 'gen', 'reps'] as const) {
      const f = this.fields.get(name);
      const text = name === 'prefill' ? ('prefill' in texts ? texts.prefill : null) : texts[name];
      if (!f || !text) continue;
      if (f.label) f.label.textContent = text.label;
      f.hint.textContent = text.hint;
      f.hint.hidden = text.hint === '';
    }
  }

  /** 'quick' or 'full' when the sweep fields hold exactly that suite, else 'custom'. */
  private matchingSuite(): 'quick' | 'full' | 'custom' {
    const prefill = parseList(this.text('prefill'));
    const depths = parseList(this.text('depths'));
    for (const suite of ['quick', 'full'] as const) {
      const s = SUITES[suite];
      if (
        prefill.ok &&
        depths.ok &&
        prefill.values.join() === s.prefill.join() &&
        depths.values.join() === s.depths.join() &&
        parseNumber(this.text('gen')) === s.gen &&
        parseNumber(this.text('reps')) === s.reps
      ) {
        return suite;
      }
    }
    return 'custom';
  }

  private updatePresetInfo(): void {
    const name = this.text('preset');
    if (!isPresetName(name)) return;
    const config = presetConfig(name);
    const params = parameterCount(config);
    this.presetInfo.textContent = `${PRESETS[name].description}. ${formatCount(params)} parameters, ${(
      (params * BYTES.f32) / 2 ** 20
    ).toFixed(0)} MiB of f32 weights, up to ${config.maxSeqLen} tokens.`;
  }

  private validate(): BenchSpec | null {
    const errors = new Map<FieldName, string>();
    const formErrors: string[] = [];
    const list = (name: 'prefill' | 'depths' | 'verifyKs'): number[] => {
      const parsed = parseList(this.text(name));
      if (parsed.ok) return parsed.values;
      errors.set(name, parsed.message);
      return [];
    };
    const number = (name: FieldName): number => {
      const v = parseNumber(this.text(name));
      if (v === null) errors.set(name, 'Enter a number');
      return v ?? 0;
    };
    const checked = (name: FieldName) => {
      const c = this.control(name);
      return c instanceof HTMLInputElement && c.checked;
    };
    const model = this.localModel ?? { kind: 'preset', preset: this.text('preset'), seed: number('seed') };
    const suite = this.text('suite') as SpecOptions['suite'];
    const spec = suite === 'spec';
    const serve = suite === 'serve';
    const batchSuite = suite === 'batch';
    const formatsSuite = suite === 'formats';
    const options: SpecOptions = {
      suite,
      prefill: spec || serve || batchSuite ? undefined : list('prefill'),
      depths: serve ? undefined : list('depths'),
      gen: serve ? undefined : number('gen'),
      reps: serve ? undefined : number('reps'),
      warmup: number('warmup'),
      pageSize: number('pageSize'),
      kvMode: this.text('kvMode') as SpecOptions['kvMode'],
      batch: number('batch'),
      profile: formatsSuite ? false : checked('profile'),
      autotune: checked('autotune'),
      fuse: checked('fuse'),
      weights: formatsSuite ? parseFormats(this.text('weightsList')) : [this.text('weights') as WeightFormat],
    };
    if (spec) {
      // The speculative suite's own fields; its depths, tokens and repetitions are sent as typed.
      options.drafters = parseDrafters(this.text('drafters'));
      options.k = number('k');
      options.adaptiveK = checked('adaptiveK');
      options.verifyKs = list('verifyKs');
      if (options.depths?.length === 0 && !errors.has('depths')) {
        errors.set('depths', 'the verify-K curve needs at least one depth');
      }
    } else if (serve) {
      // The load test's own fields; the sweep fields are hidden and not sent.
      const rate = parseRate(this.text('rate'));
      if (rate.ok) options.rate = rate.value;
      else errors.set('rate', rate.message);
      options.requests = number('requests');
      options.batching = this.text('batching') as SpecOptions['batching'];
      options.prefixCache = this.text('prefixCache') as SpecOptions['prefixCache'];
      options.prefixTokens = number('prefixTokens');
      options.maxBatch = number('maxBatch');
      options.tokenBudget = number('tokenBudget');
      options.sweep = number('sweep');
      const slo = this.text('slo');
      try {
        options.slo = slo.trim() === '' ? {} : parseSlo(slo);
      } catch (e) {
        errors.set('slo', (e as Error).message);
      }
    } else if (formatsSuite) {
      // The sweep times every format at one prompt length and one depth, sent as typed.
      if (options.weights?.length === 0)
        errors.set('weightsList', `Name a format: ${WEIGHT_FORMATS.join(', ')}`);
      for (const [name, what] of [
        ['prefill', 'prompt length'],
        ['depths', 'depth'],
      ] as const) {
        const values = options[name] ?? [];
        if (errors.has(name)) continue;
        if (values.length !== 1) errors.set(name, `the format sweep times one ${what}; give one`);
      }
    } else if (batchSuite) {
      // B-scaling's depth, tokens and repetitions are sent as typed.
      if (options.depths?.length === 0 && !errors.has('depths')) {
        errors.set('depths', 'B-scaling needs a depth');
      }
    } else if (options.suite !== 'custom') {
      // The page always sends its sweep fields, so a named suite stays named only while they match it.
      options.prefill = undefined;
      options.depths = undefined;
      options.gen = undefined;
      options.reps = undefined;
    }
    const built = buildSpec(model, options);
    let result: BenchSpec | null = null;
    if (!built.ok) {
      for (const issue of built.issues) {
        const option = fieldOfOption(issue.option, issue.message);
        // The weights option is the list field while the format sweep is chosen, the choice otherwise.
        const field = option === 'weights' && formatsSuite ? 'weightsList' : option;
        const message =
          issue.index === undefined ? issue.message : `value ${issue.index + 1}: ${issue.message}`;
        if (field === null) formErrors.push(message);
        else if (!errors.has(field)) errors.set(field, message);
      }
    } else {
      result = built.spec;
      if (result.model.kind === 'preset' && isPresetName(result.model.preset)) {
        // The engine rejects typed sweep values beyond the model's length; say so here, at the field.
        // The speculative, B-scaling and format suites' values are always typed here, so what would
        // not fit is an error too.
        const config = presetConfig(result.model.preset);
        const fit = fitToModel(result, config.maxSeqLen);
        for (const u of spec || batchSuite || formatsSuite ? fit.dropped : fit.errors) {
          if (isField(u.option) && !errors.has(u.option)) errors.set(u.option, u.message);
        }
        // Drafters this model cannot use (a truncation as deep as the model, another vocabulary).
        const drafters = modelErrors(result, config);
        if (drafters.length > 0 && !errors.has('drafters')) errors.set('drafters', drafters.join('; '));
      }
    }

    // A shared prefix as long as the context would fill every prompt: the generator cuts it to each
    // prompt, so no request would share what was asked for. Said even while other fields are wrong.
    const preset = this.text('preset');
    const prefix = options.prefixTokens ?? 0;
    if (serve && !this.localModel && isPresetName(preset) && !errors.has('prefixTokens')) {
      const { maxSeqLen } = presetConfig(preset);
      if (prefix >= maxSeqLen) {
        errors.set(
          'prefixTokens',
          `a ${prefix}-token prefix does not fit the model's maxSeqLen of ${maxSeqLen}`,
        );
      }
    }

    for (const [name, f] of this.fields) {
      const message = errors.get(name);
      f.error.textContent = message ?? '';
      f.error.hidden = message === undefined;
      f.wrapper.classList.toggle('invalid', message !== undefined);
      if (message === undefined) f.control.removeAttribute('aria-invalid');
      else f.control.setAttribute('aria-invalid', 'true');
    }
    this.formError.textContent = formErrors.map((m) => m.charAt(0).toUpperCase() + m.slice(1)).join('. ');
    this.formError.hidden = formErrors.length === 0;
    return result !== null && errors.size === 0 ? result : null;
  }
}
