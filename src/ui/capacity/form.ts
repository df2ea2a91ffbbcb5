/**
 * The capacity form: the model, the GPUs, the traffic and the roofs, with the CLI's inputs under
 * the CapacityInput field names. It validates with parseCapacityInput, the estimator's own
 * schema, and shows each issue at the field it names; the form only adds what a text box needs
 * first (a number that is not one, a required box left empty, a memory size that does not parse).
 */
import {
  CAPACITY_DEFAULTS,
  type CapacityField,
  type CapacityInput,
  parseBytes,
  parseCapacityInput,
} from '../../capacity/estimate.ts';
import { KV_DTYPES, type KvDtype } from '../../capacity/kv.ts';
import { type CapacityModel, WEIGHT_DTYPES } from '../../capacity/model.ts';
import { InputError } from '../../errors.ts';
import type { BenchResult } from '../../results/schema.ts';
import { h } from '../dom.ts';
import { type FormField, formField, numberInput, readNumber, selectInput } from './field.ts';
import { ModelPicker } from './model-picker.ts';
import { RoofsFields } from './roofs-fields.ts';

/** Number boxes other than the roofs (RoofsFields owns those). */
type NumberField =
  | 'gpus'
  | 'headroom'
  | 'pageSize'
  | 'window'
  | 'maxLen'
  | 'input'
  | 'output'
  | 'sessions'
  | 'longShare'
  | 'longFactor'
  | 'rps';

interface NumberSpec {
  label: string;
  whole: boolean;
  /** Required boxes have no default in CAPACITY_DEFAULTS; an empty optional box is left out. */
  required: boolean;
  hint: string;
}

const NUMBERS: Record<NumberField, NumberSpec> = {
  gpus: { label: 'GPUs', whole: true, required: false, hint: 'Taken as one tensor-parallel group.' },
  headroom: {
    label: 'Headroom',
    whole: false,
    required: false,
    hint: 'Share of memory to fill, in (0,\u00a01].',
  },
  pageSize: { label: 'KV page size (tokens)', whole: true, required: false, hint: 'Of the paged cache.' },
  window: {
    label: 'Sliding window (tokens)',
    whole: true,
    required: false,
    hint: 'Optional: each session keeps its last W tokens; empty is full attention.',
  },
  maxLen: {
    label: 'Max length (tokens)',
    whole: true,
    required: false,
    hint: 'Optional: what a contiguous cache reserves per session; default the longest session, at least the context.',
  },
  input: { label: 'Mean input tokens', whole: true, required: true, hint: 'Prompt of a session.' },
  output: { label: 'Mean output tokens', whole: true, required: true, hint: 'Generated per session.' },
  sessions: { label: 'Concurrent sessions', whole: true, required: true, hint: 'Alive at once.' },
  longShare: { label: 'Long-context share', whole: false, required: false, hint: 'Of the sessions, 0 to 1.' },
  longFactor: { label: 'Long factor', whole: false, required: false, hint: '× the mean input + output.' },
  rps: {
    label: 'Peak requests/s',
    whole: false,
    required: false,
    hint: 'Optional: else the sessions run as a closed loop.',
  },
};

/** What each KV type stores, under its box: int8's scale is what keeps it from a flat quarter of f32. */
const KV_DTYPE_HINTS: Record<KvDtype, string> = {
  f32: '4 B per value.',
  f16: '2 B per value: half of f32.',
  int8: '1 B per value + one 4 B f32 scale per head vector (K or V, per token and layer).',
};

/** What the form opens with: a real model on a 16 GB card, so the page shows an answer at once. */
const EXAMPLE = { gpuMem: '16GB', input: 1000, output: 250, sessions: 16, ...CAPACITY_DEFAULTS } as const;

export type FormState =
  | { status: 'ok'; model: CapacityModel; input: CapacityInput }
  /** Every problem is shown at its field. */
  | { status: 'invalid' }
  | { status: 'pending'; reason: string };

export class CapacityForm {
  readonly element: HTMLFormElement;
  private readonly model: ModelPicker;
  private readonly roofs: RoofsFields;
  private readonly gpuMem: FormField<HTMLInputElement>;
  private readonly kvDtype = formField('kvDtype', 'KV cache dtype', selectInput(KV_DTYPES));
  private readonly weights = formField('weights', 'Weights dtype', selectInput(WEIGHT_DTYPES));
  private readonly numbers = new Map<NumberField, FormField<HTMLInputElement>>();
  /** Every field the estimator's issues can name, by CapacityInput field. */
  private readonly fields = new Map<CapacityField, FormField>();
  private readonly formError = h('p', {
    className: 'field-error cap-form-error',
    testId: 'cap-form-error',
    attrs: { hidden: true },
  });

  constructor(onChange: () => void) {
    this.model = new ModelPicker(onChange);
    this.roofs = new RoofsFields(onChange);
    this.gpuMem = formField(
      'gpuMem',
      'GPU memory',
      h('input', { attrs: { type: 'text', autocomplete: 'off', spellcheck: 'false', placeholder: '80GB' } }),
      'Per GPU: 80GB, 24GiB (GB = 10⁹ B, GiB = 2³⁰ B; no unit: GB).',
    );
    this.gpuMem.control.value = EXAMPLE.gpuMem;
    this.kvDtype.control.value = EXAMPLE.kvDtype;
    this.weights.control.value = EXAMPLE.weights;
    for (const [name, spec] of Object.entries(NUMBERS) as [NumberField, NumberSpec][]) {
      // An emptied box falls back to the estimator's default, and says which.
      const fallback = (CAPACITY_DEFAULTS as Partial<Record<NumberField, number>>)[name];
      const placeholder = spec.required ? '' : fallback === undefined ? 'optional' : `default ${fallback}`;
      const f = formField(name, spec.label, numberInput(spec.whole, placeholder), spec.hint);
      const initial = (EXAMPLE as Partial<Record<NumberField, number>>)[name];
      if (initial !== undefined) f.control.value = String(initial);
      this.numbers.set(name, f);
      this.fields.set(name, f);
    }
    for (const f of [
      this.gpuMem,
      this.kvDtype,
      this.weights,
      this.roofs.peakTflops,
      this.roofs.bandwidthGBs,
    ]) {
      this.fields.set(f.name as CapacityField, f);
    }
    const group = (legend: string, className: string, fields: readonly FormField[]) =>
      h('fieldset', { className: `cap-group ${className}` }, [
        h('legend', { text: legend }),
        h(
          'div',
          { className: 'cap-grid' },
          fields.map((f) => f.wrapper),
        ),
      ]);
    const n = (name: NumberField) => this.numbers.get(name) as FormField;
    this.element = h(
      'form',
      { className: 'cap-form', attrs: { novalidate: true, 'aria-label': 'Capacity inputs' } },
      [
        this.model.element,
        group('GPUs and memory', 'cap-gpus', [
          this.gpuMem,
          n('gpus'),
          n('headroom'),
          this.weights,
          this.kvDtype,
          n('pageSize'),
          n('window'),
          n('maxLen'),
        ]),
        group('Traffic', 'cap-traffic', [
          n('input'),
          n('output'),
          n('sessions'),
          n('longShare'),
          n('longFactor'),
          n('rps'),
        ]),
        this.roofs.element,
        this.formError,
      ],
    );
    this.element.addEventListener('submit', (ev) => ev.preventDefault());
    this.element.addEventListener('input', onChange);
    this.element.addEventListener('change', onChange);
  }

  /** Offers a finished run's roofs. */
  setRun(result: BenchResult): void {
    this.roofs.setRun(result);
  }

  /** Reads and validates everything, showing each problem at its field. */
  read(): FormState {
    const model = this.model.read();
    const raw: Record<string, unknown> = {
      kvDtype: this.kvDtype.control.value,
      weights: this.weights.control.value,
    };
    const issues = new Map<CapacityField, string>();

    const memText = this.gpuMem.control.value.trim();
    if (memText === '') issues.set('gpuMem', 'Enter a size, e.g. 80GB or 24GiB');
    else {
      try {
        raw.gpuMem = parseBytes(memText, 'GPU memory');
      } catch (e) {
        if (!(e instanceof InputError)) throw e;
        issues.set('gpuMem', e.message);
      }
    }
    for (const [name, f] of this.numbers) {
      const v = readNumber(f.control);
      if (v === 'bad') issues.set(name, 'Enter a number');
      else if (v === 'empty') {
        if (NUMBERS[name].required) issues.set(name, 'Enter a value');
      } else raw[name] = v;
    }
    const roofs = this.roofs.read();
    Object.assign(raw, roofs.raw);
    for (const [name, message] of roofs.issues) issues.set(name, message);

    // The schema judges what the boxes could read; a box already flagged keeps its first problem.
    const parsed = parseCapacityInput(raw);
    const formErrors: string[] = [];
    if (!parsed.ok) {
      for (const issue of parsed.issues) {
        if (issue.field !== null && this.fields.has(issue.field)) {
          if (!issues.has(issue.field)) issues.set(issue.field, issue.message);
        } else {
          formErrors.push(`${issue.field ?? 'input'}: ${issue.message}`);
        }
      }
    }
    for (const [name, f] of this.fields) f.setError(issues.get(name) ?? null);
    if (roofs.blocked) for (const f of [this.roofs.peakTflops, this.roofs.bandwidthGBs]) f.setInvalid(true);
    this.formError.textContent = formErrors.join('; ');
    this.formError.hidden = formErrors.length === 0;
    this.kvDtype.setHint(KV_DTYPE_HINTS[this.kvDtype.control.value as KvDtype] ?? '');
    this.weights.setHint(
      model.status === 'ok' && model.model.weightsBytes !== null
        ? 'Ignored: the file gives the exact weight bytes.'
        : '',
    );

    if (model.status === 'invalid' || !parsed.ok || issues.size > 0 || roofs.blocked)
      return { status: 'invalid' };
    if (model.status === 'pending') return model;
    return { status: 'ok', model: model.model, input: parsed.input };
  }
}
