/**
 * The run form's fields: each a control with its label, hint and error, wired for screen readers
 * (`aria-describedby` names the hint and the error), kept by the name of the spec option it fills.
 */
import { h, uniqueId } from '../dom.ts';

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
  'kvDtype',
  'window',
  'batch',
  'profile',
  'autotune',
  'fuse',
  'drafters',
  'k',
  'adaptiveK',
  'verifyKs',
  'temperature',
  'rate',
  'requests',
  'batching',
  'prefixCache',
  'prefixTokens',
  'slo',
  'maxBatch',
  'tokenBudget',
  'sweep',
  'durationS',
  'windowS',
  // Not a spec field: the page's choice to run llama.cpp (wllama) beside the run.
  'peer',
] as const;

export type FieldName = (typeof FIELD_NAMES)[number];

export function isField(name: string | null): name is FieldName {
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

/** A select's options, as [value, text]. */
type Choices = readonly (readonly [string, string])[];

/** Result of reading a comma- or space-separated list of whole numbers. */
type ParsedList = { ok: true; values: number[] } | { ok: false; message: string };

/** A number-list field's text: whole numbers, comma- or space-separated. */
export function parseList(text: string): ParsedList {
  const tokens = text.split(/[\s,;]+/).filter(Boolean);
  const bad = tokens.find((t) => !/^\d+$/.test(t));
  if (bad !== undefined) return { ok: false, message: `“${bad}” is not a whole number` };
  return { ok: true, values: tokens.map(Number) };
}

/** A number field's text, or null when it holds none. */
export function parseNumber(text: string): number | null {
  const t = text.trim();
  return t === '' || Number.isNaN(Number(t)) ? null : Number(t);
}

/**
 * The fields, made by the factories below and then found by name. Each factory returns the field's
 * wrapper, to be placed in the form.
 */
export class Fields {
  private readonly byName = new Map<FieldName, Field>();

  /** A whole-number field, from `min` (and up to `max`). */
  number(
    name: FieldName,
    label: string,
    { min, max }: { min: number; max?: number },
    hint = '',
  ): HTMLElement {
    return this.add(
      name,
      label,
      h('input', { attrs: { type: 'number', inputmode: 'numeric', min, step: 1, max } }),
      hint,
    );
  }

  /** A list of whole numbers, typed comma- or space-separated (read with `parseList`). */
  list(name: FieldName, label: string, placeholder: string, hint = ''): HTMLElement {
    return this.add(
      name,
      label,
      h('input', { attrs: { type: 'text', inputmode: 'numeric', autocomplete: 'off', placeholder } }),
      hint,
    );
  }

  /** Free text: names, SLOs, a rate (`inputmode` picks the phone's keyboard). */
  text(name: FieldName, label: string, placeholder: string, hint = '', inputmode?: 'decimal'): HTMLElement {
    return this.add(
      name,
      label,
      h('input', {
        attrs: { type: 'text', inputmode, autocomplete: 'off', spellcheck: 'false', placeholder },
      }),
      hint,
    );
  }

  select(name: FieldName, label: string, choices: Choices, hint = ''): HTMLElement {
    return this.add(
      name,
      label,
      h(
        'select',
        {},
        choices.map(([value, text]) => h('option', { text, attrs: { value } })),
      ),
      hint,
    );
  }

  /** A checkbox, its label beside it. */
  check(name: FieldName, label: string, hint = ''): HTMLElement {
    return this.add(name, label, h('input', { attrs: { type: 'checkbox' } }), hint);
  }

  get(name: FieldName): Field {
    const f = this.byName.get(name);
    if (!f) throw new Error(`no form field ${name}`);
    return f;
  }

  control(name: FieldName): Control {
    return this.get(name).control;
  }

  value(name: FieldName): string {
    return this.control(name).value;
  }

  checked(name: FieldName): boolean {
    const c = this.control(name);
    return c instanceof HTMLInputElement && c.checked;
  }

  setValue(name: FieldName, value: string | number | boolean): void {
    const c = this.control(name);
    if (c instanceof HTMLInputElement && c.type === 'checkbox') c.checked = value === true;
    else c.value = String(value);
  }

  /** Sets a field's label and hint (an empty hint hides it). */
  setText(name: FieldName, label: string, hint: string): void {
    const f = this.get(name);
    if (f.label) f.label.textContent = label;
    f.hint.textContent = hint;
    f.hint.hidden = hint === '';
  }

  /** Shows each field's error, or clears it: one message per field at most. */
  showErrors(errors: ReadonlyMap<FieldName, string>): void {
    for (const [name, f] of this.byName) {
      const message = errors.get(name);
      f.error.textContent = message ?? '';
      f.error.hidden = message === undefined;
      f.wrapper.classList.toggle('invalid', message !== undefined);
      if (message === undefined) f.control.removeAttribute('aria-invalid');
      else f.control.setAttribute('aria-invalid', 'true');
    }
  }

  private add(name: FieldName, label: string, control: Control, hint: string): HTMLElement {
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
    this.byName.set(name, { control, error, wrapper, label: labelEl, hint: hintEl });
    return wrapper;
  }
}
