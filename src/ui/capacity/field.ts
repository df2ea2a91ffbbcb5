/**
 * One labelled control of the capacity form, with its hint and its error line. Ids and test ids
 * are `cap-<name>` (the CapacityInput or CapacityModel field it fills), so a parse issue that names
 * a field finds its control, and a test finds both by the same name.
 */
import { h } from '../dom.ts';

export type Control = HTMLInputElement | HTMLSelectElement;

export interface FormField<C extends Control = Control> {
  readonly name: string;
  readonly control: C;
  readonly wrapper: HTMLElement;
  /** Shows `message` under the control and marks it invalid; null clears both. */
  setError(message: string | null): void;
  /** Marks the control invalid when the message stands elsewhere (one message for two boxes). */
  setInvalid(invalid: boolean): void;
  setHint(text: string): void;
}

export function formField<C extends Control>(
  name: string,
  label: string,
  control: C,
  hint = '',
): FormField<C> {
  const id = `cap-${name}`;
  control.id = id;
  control.name = name;
  control.dataset.testid = id;
  const hintEl = h('p', {
    className: 'hint',
    text: hint,
    testId: `${id}-hint`,
    attrs: { id: `${id}-hint`, hidden: hint === '' },
  });
  const error = h('p', {
    className: 'field-error',
    testId: `${id}-error`,
    attrs: { id: `${id}-error`, hidden: true },
  });
  control.setAttribute('aria-describedby', `${id}-hint ${id}-error`);
  const isCheckbox = control instanceof HTMLInputElement && control.type === 'checkbox';
  const wrapper = h('div', { className: `field field-${name}${isCheckbox ? ' field-check' : ''}` }, [
    isCheckbox
      ? h('label', { attrs: { for: id } }, [control, ` ${label}`])
      : h('label', { text: label, attrs: { for: id } }),
    isCheckbox ? null : control,
    hintEl,
    error,
  ]);
  const setInvalid = (invalid: boolean) => {
    wrapper.classList.toggle('invalid', invalid);
    if (invalid) control.setAttribute('aria-invalid', 'true');
    else control.removeAttribute('aria-invalid');
  };
  return {
    name,
    control,
    wrapper,
    setError(message) {
      error.textContent = message ?? '';
      error.hidden = message === null;
      setInvalid(message !== null);
    },
    setInvalid,
    setHint(text) {
      hintEl.textContent = text;
      hintEl.hidden = text === '';
    },
  };
}

/** A number box; `whole` asks phones for the digits keypad. No browser validation: the schema judges. */
export function numberInput(whole: boolean, placeholder = ''): HTMLInputElement {
  return h('input', {
    attrs: {
      type: 'number',
      inputmode: whole ? 'numeric' : 'decimal',
      step: whole ? 1 : 'any',
      min: 0,
      placeholder,
      autocomplete: 'off',
    },
  });
}

export function selectInput(values: readonly string[]): HTMLSelectElement {
  return h(
    'select',
    {},
    values.map((v) => h('option', { text: v, attrs: { value: v } })),
  );
}

/** A number box's value: a number, 'empty', or 'bad' (text the browser could not read as a number). */
export function readNumber(input: HTMLInputElement): number | 'empty' | 'bad' {
  if (input.validity.badInput) return 'bad';
  const text = input.value.trim();
  if (text === '') return 'empty';
  const v = Number(text);
  return Number.isFinite(v) ? v : 'bad';
}
