/**
 * The model part of the capacity form: a preset, a file (config.json or GGUF), or dimensions typed
 * in. Whatever the source, it ends as one CapacityModel from src/capacity/model.ts, validated there;
 * this module only gathers the values and shows each problem where it was made: a dimension's own
 * range at its box, anything about the model as a whole (inconsistent heads, a bad or foreign
 * file) at the model field. Strings from files reach the page only as text.
 */
import {
  type CapacityModel,
  CapacityModelSchema,
  capacityModelFromDims,
  capacityModelFromPreset,
  llamaParameterCount,
} from '../../capacity/model.ts';
import { InputError } from '../../errors.ts';
import { PRESET_NAMES } from '../../model/config.ts';
import { h } from '../dom.ts';
import { formatBytes, formatCount } from '../format.ts';
import { type FormField, formField, numberInput, readNumber, selectInput } from './field.ts';
import { capacityModelFromFile } from './model-file.ts';

type Source = 'preset' | 'file' | 'dims';

const SOURCE_LABELS: Record<Source, string> = {
  preset: 'Preset',
  file: 'config.json or .gguf',
  dims: 'Dimensions',
};

/** The preset shown first: the largest real model shape the engine ships. */
const DEFAULT_PRESET = 'llama-3.2-1b';

/** The typed dimensions, by CapacityModel field. kvHeads and headDim may stay blank, as on the CLI. */
const DIMS = {
  layers: { label: 'Layers', placeholder: '' },
  heads: { label: 'Attention heads', placeholder: '' },
  kvHeads: { label: 'KV heads', placeholder: '= heads' },
  headDim: { label: 'Head dim', placeholder: '= hidden ÷ heads' },
  hidden: { label: 'Hidden size', placeholder: '' },
  intermediate: { label: 'MLP (intermediate) size', placeholder: '' },
  vocab: { label: 'Vocabulary', placeholder: '' },
  contextLength: { label: 'Context length', placeholder: '' },
} as const;
type DimName = keyof typeof DIMS;
const DIM_NAMES = Object.keys(DIMS) as DimName[];
const OPTIONAL_DIMS: readonly DimName[] = ['kvHeads', 'headDim'];

/** What the picker holds now; problems are already on the page when it is not 'ok'. */
export type ModelState =
  | { status: 'ok'; model: CapacityModel }
  | { status: 'invalid' }
  /** Nothing to judge yet: no file picked, or one still being read. */
  | { status: 'pending'; reason: string };

type FileState =
  | { status: 'none' }
  | { status: 'reading'; name: string }
  | { status: 'ok'; model: CapacityModel }
  | { status: 'error'; message: string };

/** One line describing the model, so a user sees what their file or typing was read as. */
function modelSummary(m: CapacityModel): string {
  const weights =
    m.weightsBytes === null ? '' : `; weights ${formatBytes(m.weightsBytes, 'decimal')}, exact from the file`;
  return (
    `${m.name}: ${formatCount(llamaParameterCount(m))} parameters; ${m.layers} layers, ` +
    `${m.heads} query heads and ${m.kvHeads} KV heads of ${m.headDim}, hidden ${m.hidden}, ` +
    `MLP ${m.intermediate}, vocabulary ${m.vocab}, context ${m.contextLength}` +
    `${m.tied ? ', tied embeddings' : ''}${weights}.`
  );
}

/** An input error's message says it all; anything else (the browser failing to read a file) is named. */
function errorText(e: unknown): string {
  if (e instanceof InputError) return e.message;
  const err = e as Error;
  return `${err.name}: ${err.message}`;
}

export class ModelPicker {
  readonly element: HTMLElement;
  private source: Source = 'preset';
  private readonly radios = {} as Record<Source, HTMLInputElement>;
  private readonly panels: Record<Source, HTMLElement>;
  private readonly preset: FormField<HTMLSelectElement>;
  private readonly file: FormField<HTMLInputElement>;
  private readonly dims = new Map<DimName, FormField<HTMLInputElement>>();
  private readonly tied: FormField<HTMLInputElement>;
  private readonly modelError = h('p', {
    className: 'field-error',
    testId: 'cap-model-error',
    attrs: { id: 'cap-model-error', hidden: true },
  });
  private readonly summary = h('p', { className: 'hint model-summary', testId: 'cap-model-summary' });
  private fileState: FileState = { status: 'none' };
  /** Counts file picks, so a slow read of an earlier file cannot overwrite a later one. */
  private fileReads = 0;
  /** Typed dimensions are the user's; until then they follow the model last shown. */
  private dimsEdited = false;
  private lastModel: CapacityModel | null = null;

  constructor(private readonly onChange: () => void) {
    const sourceGroup = h('div', {
      className: 'source-choice',
      attrs: { role: 'radiogroup', 'aria-label': 'Model from' },
    });
    for (const source of Object.keys(SOURCE_LABELS) as Source[]) {
      const radio = h('input', {
        testId: `cap-source-${source}`,
        attrs: { type: 'radio', name: 'cap-source', value: source, id: `cap-source-${source}` },
      });
      radio.addEventListener('change', () => {
        if (radio.checked) this.setSource(source);
      });
      this.radios[source] = radio;
      sourceGroup.append(
        h('label', { className: 'source-option', attrs: { for: radio.id } }, [
          radio,
          ` ${SOURCE_LABELS[source]}`,
        ]),
      );
    }

    this.preset = formField('preset', 'Model preset', selectInput(PRESET_NAMES));
    this.preset.control.value = PRESET_NAMES.includes(DEFAULT_PRESET) ? DEFAULT_PRESET : PRESET_NAMES[0];
    this.preset.control.addEventListener('change', () => this.onChange());

    const fileInput = h('input', { attrs: { type: 'file', accept: '.json,.gguf,application/json' } });
    this.file = formField(
      'file',
      'Model file',
      fileInput,
      'A Hugging Face config.json, or a .gguf file: only its header is read, so any size is fine. Nothing is uploaded.',
    );
    fileInput.addEventListener('change', () => {
      const picked = fileInput.files?.[0];
      if (picked) void this.readFile(picked);
    });

    for (const name of DIM_NAMES) {
      const f = formField(name, DIMS[name].label, numberInput(true, DIMS[name].placeholder));
      f.control.addEventListener('input', () => {
        this.dimsEdited = true;
      });
      this.dims.set(name, f);
    }
    this.tied = formField(
      'tied',
      'Tied embeddings (the LM head reuses the embedding matrix)',
      h('input', { attrs: { type: 'checkbox' } }),
    );
    this.tied.control.addEventListener('change', () => {
      this.dimsEdited = true;
    });

    this.panels = {
      preset: h('div', { className: 'source-panel' }, [this.preset.wrapper]),
      file: h('div', { className: 'source-panel' }, [this.file.wrapper]),
      dims: h('div', { className: 'source-panel' }, [
        h(
          'div',
          { className: 'cap-grid' },
          [...this.dims.values()].map((f) => f.wrapper),
        ),
        this.tied.wrapper,
      ]),
    };
    this.element = h('fieldset', { className: 'cap-group cap-model' }, [
      h('legend', { text: 'Model' }),
      sourceGroup,
      ...Object.values(this.panels),
      this.modelError,
      this.summary,
    ]);

    // Screen readers read the model's error with whichever control the user is on.
    for (const f of [this.preset, this.file, ...this.dims.values(), this.tied]) {
      f.control.setAttribute(
        'aria-describedby',
        `${f.control.getAttribute('aria-describedby')} cap-model-error`,
      );
    }
    const initial = this.presetModel();
    if (initial.status === 'ok') this.fillDims(initial.model);
    this.setSource('preset', false);
  }

  /** The model the fields describe now, with every problem shown at its field. */
  read(): ModelState {
    const state = this.current();
    if (state.status === 'ok') {
      this.lastModel = state.model;
      this.summary.textContent = modelSummary(state.model);
    } else {
      this.summary.textContent = state.status === 'pending' ? state.reason : '';
    }
    return state;
  }

  private current(): ModelState {
    // A hidden source's errors would otherwise linger, marked invalid, behind the one in use.
    if (this.source !== 'dims') for (const f of this.dims.values()) f.setError(null);
    if (this.source === 'preset') return this.presetModel();
    if (this.source === 'file') return this.fileModel();
    return this.dimsModel();
  }

  private presetModel(): ModelState {
    try {
      return this.ok(capacityModelFromPreset(this.preset.control.value));
    } catch (e) {
      return this.invalid(errorText(e), this.preset);
    }
  }

  private fileModel(): ModelState {
    const s = this.fileState;
    this.showModelError(null);
    switch (s.status) {
      case 'none':
        return { status: 'pending', reason: 'Pick a config.json or a .gguf file.' };
      case 'reading':
        return { status: 'pending', reason: `Reading ${s.name}…` };
      case 'error':
        return this.invalid(s.message, this.file);
      case 'ok':
        return this.ok(s.model);
    }
  }

  private dimsModel(): ModelState {
    const dims: Record<string, number | boolean> = { tied: this.tied.control.checked };
    let fieldErrors = 0;
    for (const [name, f] of this.dims) {
      const v = readNumber(f.control);
      let message: string | null = null;
      if (v === 'bad') message = 'Enter a number';
      else if (v === 'empty') message = OPTIONAL_DIMS.includes(name) ? null : 'Enter a value';
      else {
        // The model schema's own rule for this field, so the page and the CLI say the same thing.
        const r = CapacityModelSchema.shape[name].safeParse(v);
        if (r.success) dims[name] = v;
        else message = r.error.issues[0]?.message ?? 'invalid';
      }
      f.setError(message);
      if (message !== null) fieldErrors++;
    }
    if (fieldErrors > 0) {
      this.showModelError(null);
      return { status: 'invalid' };
    }
    try {
      return this.ok(capacityModelFromDims(dims, 'hand-entered dims'));
    } catch (e) {
      return this.invalid(errorText(e), null);
    }
  }

  private ok(model: CapacityModel): ModelState {
    this.showModelError(null);
    return { status: 'ok', model };
  }

  /** A problem with the model as a whole, shown at the model field (and `at`, the control it came from). */
  private invalid(message: string, at: FormField | null): ModelState {
    this.showModelError(message);
    if (at) at.control.setAttribute('aria-invalid', 'true');
    return { status: 'invalid' };
  }

  private showModelError(message: string | null): void {
    this.modelError.textContent = message ?? '';
    this.modelError.hidden = message === null;
    this.element.classList.toggle('invalid', message !== null);
    for (const f of [this.preset, this.file]) f.control.removeAttribute('aria-invalid');
  }

  private setSource(source: Source, notify = true): void {
    this.source = source;
    this.radios[source].checked = true;
    for (const [key, panel] of Object.entries(this.panels)) panel.hidden = key !== source;
    // Switching to dimensions starts from the model shown, so a preset or file can be edited.
    if (source === 'dims' && !this.dimsEdited && this.lastModel) this.fillDims(this.lastModel);
    if (notify) this.onChange();
  }

  private fillDims(m: CapacityModel): void {
    for (const [name, f] of this.dims) f.control.value = String(m[name]);
    this.tied.control.checked = m.tied;
  }

  private async readFile(file: File): Promise<void> {
    const read = ++this.fileReads;
    this.fileState = { status: 'reading', name: file.name };
    this.setSource('file');
    let next: FileState;
    try {
      next = { status: 'ok', model: await capacityModelFromFile(file) };
    } catch (e) {
      next = { status: 'error', message: errorText(e) };
    }
    if (read !== this.fileReads) return;
    this.fileState = next;
    this.onChange();
  }
}
