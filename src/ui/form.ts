/**
 * The run configuration form. It builds a BenchSpec and validates it with the same zod schema the
 * CLI and the engine use (BenchSpecSchema); each zod issue is shown at the field its path names.
 */
import { PAGE_SIZES } from '../kv/cache.ts';
import {
  type BenchSpec,
  buildSpec,
  fitToModel,
  SPEC_DEFAULTS,
  type SpecOptions,
  SUITES,
} from '../measure/spec.ts';
import { isPresetName, PRESET_NAMES, PRESETS, presetConfig } from '../model/config.ts';
import { BYTES } from '../model/formats.ts';
import { parameterCount } from '../model/weights.ts';
import { h, uniqueId } from './dom.ts';
import { formatCount } from './format.ts';

/** The form's fields, by the name of the spec field they fill (preset and seed fill `model`). */
type FieldName =
  | 'preset'
  | 'seed'
  | 'suite'
  | 'prefill'
  | 'depths'
  | 'gen'
  | 'reps'
  | 'warmup'
  | 'pageSize'
  | 'kvMode'
  | 'batch'
  | 'profile'
  | 'autotune';

type Control = HTMLInputElement | HTMLSelectElement;

interface Field {
  control: Control;
  error: HTMLElement;
  wrapper: HTMLElement;
}

/** Defaults of the fields a suite does not set: the spec's own, so the CLI and the page agree. */
const DEFAULTS = {
  seed: SPEC_DEFAULTS.seed,
  warmup: SPEC_DEFAULTS.warmup,
  pageSize: SPEC_DEFAULTS.pageSize,
  kvMode: SPEC_DEFAULTS.kvMode,
  batch: SPEC_DEFAULTS.batch,
  profile: SPEC_DEFAULTS.profile,
  autotune: SPEC_DEFAULTS.autotune,
} as const;

/** The suites the page offers; the kernel suite is a CLI job (npm run bench -- --suite kernels). */
type PageSuite = 'quick' | 'full';

/** Result of reading a comma- or space-separated list of whole numbers. */
type ParsedList = { ok: true; values: number[] } | { ok: false; message: string };

function parseList(text: string): ParsedList {
  const tokens = text.split(/[\s,;]+/).filter(Boolean);
  const bad = tokens.find((t) => !/^\d+$/.test(t));
  if (bad !== undefined) return { ok: false, message: `“${bad}” is not a whole number` };
  return { ok: true, values: tokens.map(Number) };
}

function parseNumber(text: string): number | null {
  const t = text.trim();
  return t === '' || Number.isNaN(Number(t)) ? null : Number(t);
}

/** The form field a spec option fills: the same name, except the model source (preset and seed). */
function fieldOfOption(option: keyof SpecOptions | 'model' | null, message: string): FieldName | null {
  if (option === 'model') return message.startsWith('seed') ? 'seed' : 'preset';
  // The capacity probe's pool is a CLI option (--pool-mib); the page has no field for it.
  return option === 'poolMiB' ? null : option;
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
    const profile = h('input', { attrs: { type: 'checkbox' } });
    const autotune = h('input', { attrs: { type: 'checkbox' } });

    const field = (name: FieldName, label: string, control: Control, hint?: string): HTMLElement => {
      const id = uniqueId(`f-${name}`);
      const errorId = `${id}-error`;
      const hintId = hint ? `${id}-hint` : undefined;
      control.id = id;
      control.name = name;
      control.setAttribute('aria-describedby', [hintId, errorId].filter(Boolean).join(' '));
      const error = h('p', { className: 'field-error', attrs: { id: errorId, hidden: true } });
      const isCheckbox = control instanceof HTMLInputElement && control.type === 'checkbox';
      const wrapper = h('div', { className: `field field-${name}${isCheckbox ? ' field-check' : ''}` }, [
        isCheckbox ? null : h('label', { text: label, attrs: { for: id } }),
        isCheckbox ? h('label', { attrs: { for: id } }, [control, ` ${label}`]) : control,
        hint ? h('p', { className: 'hint', text: hint, attrs: { id: hintId } }) : null,
        error,
      ]);
      this.fields.set(name, { control, error, wrapper });
      return wrapper;
    };

    // A local Hugging Face model: config.json plus one .safetensors file, picked as files or as
    // the folder holding them. The Blobs go to the worker as they are; nothing is uploaded.
    const pickFiles = h('input', {
      attrs: { id: 'local-model', type: 'file', accept: '.safetensors,.json', multiple: true },
    });
    const pickFolder = h('input', { attrs: { id: 'local-folder', type: 'file', webkitdirectory: '' } });
    const localNote = h('p', {
      className: 'hint',
      text: 'Pick config.json and model.safetensors (f32, f16 or bf16), or the folder holding them.',
    });
    const localError = h('p', { className: 'field-error', attrs: { role: 'alert' } });
    const clearLocal = h('button', { text: 'Use the preset', attrs: { type: 'button', hidden: '' } });
    const onPick = (input: HTMLInputElement) => () => {
      const files = [...(input.files ?? [])];
      const config = files.find((f) => f.name === 'config.json');
      const weights = files.find((f) => f.name.endsWith('.safetensors'));
      localError.textContent = '';
      if (!config || !weights) {
        this.localModel = undefined;
        localError.textContent = `Need config.json and a .safetensors file; got ${files.map((f) => f.name).join(', ') || 'nothing'}.`;
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
      localNote.textContent =
        'Pick config.json and model.safetensors (f32, f16 or bf16), or the folder holding them.';
    });
    const localPicker = h('div', { className: 'field field-local' }, [
      h('label', { text: 'Or a local safetensors model', attrs: { for: 'local-model' } }),
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
      field('prefill', 'Prefill lengths L', listInput('16, 32, 64'), 'Prompt lengths, comma-separated.'),
      field('depths', 'Decode depths', listInput('16, 128, 512'), 'Context tokens before generation.'),
      h('div', { className: 'form-grid' }, [
        field('gen', 'Tokens to generate', numberInput(2)),
        field('reps', 'Repetitions', numberInput(3)),
      ]),
      field('profile', 'Profile every repetition (a timed pass per kernel; slower)', profile),
      h('details', { className: 'advanced' }, [
        h('summary', { text: 'Advanced' }),
        h('div', { className: 'form-grid' }, [
          field('warmup', 'Warm-up reps', numberInput(1)),
          field('batch', 'Decode batch', numberInput(1)),
        ]),
        field('kvMode', 'KV cache layout', kvSelect),
        field('autotune', 'Autotune: pick the fastest kernel family for this device first', autotune),
      ]),
      this.formError,
    ]);
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
      if (suite === 'quick' || suite === 'full') this.applySuite(suite);
      this.validate();
    });
    for (const name of ['prefill', 'depths', 'gen', 'reps'] as const) {
      this.control(name).addEventListener('input', () => {
        this.setValue('suite', this.matchingSuite());
      });
    }
    presetSelect.addEventListener('change', () => this.updatePresetInfo());
    this.element.addEventListener('input', () => this.validate());
    this.element.addEventListener('change', () => this.validate());
    this.updatePresetInfo();
  }

  /** Fills the sweep fields with a built-in suite's values. */
  applySuite(suite: PageSuite): void {
    const s = SUITES[suite];
    this.setValue('suite', suite);
    this.setValue('prefill', s.prefill.join(', '));
    this.setValue('depths', s.depths.join(', '));
    this.setValue('gen', s.gen);
    this.setValue('reps', s.reps);
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
    const list = (name: 'prefill' | 'depths'): number[] => {
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
    const options: SpecOptions = {
      suite: this.text('suite') as SpecOptions['suite'],
      prefill: list('prefill'),
      depths: list('depths'),
      gen: number('gen'),
      reps: number('reps'),
      warmup: number('warmup'),
      pageSize: number('pageSize'),
      kvMode: this.text('kvMode') as SpecOptions['kvMode'],
      batch: number('batch'),
      profile: checked('profile'),
      autotune: checked('autotune'),
    };
    // The page always sends its sweep fields, so a named suite stays named only while they match it.
    if (options.suite !== 'custom') {
      options.prefill = undefined;
      options.depths = undefined;
      options.gen = undefined;
      options.reps = undefined;
    }
    const built = buildSpec(model, options);
    let spec: BenchSpec | null = null;
    if (!built.ok) {
      for (const issue of built.issues) {
        const field = fieldOfOption(issue.option, issue.message);
        const message =
          issue.index === undefined ? issue.message : `value ${issue.index + 1}: ${issue.message}`;
        if (field === null) formErrors.push(message);
        else if (!errors.has(field)) errors.set(field, message);
      }
    } else {
      spec = built.spec;
      if (spec.model.kind === 'preset' && isPresetName(spec.model.preset)) {
        // The engine rejects typed sweep values beyond the model's length; say so here, at the field.
        const { errors: unfit } = fitToModel(spec, presetConfig(spec.model.preset).maxSeqLen);
        for (const u of unfit) if (!errors.has(u.option)) errors.set(u.option, u.message);
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
    return spec !== null && errors.size === 0 ? spec : null;
  }
}
