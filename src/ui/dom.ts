/**
 * Tiny DOM helpers. Every string reaches the page through text nodes or attributes, never through
 * innerHTML: result files are untrusted, and this keeps "render strings as text" true by construction.
 */

export type Child = Node | string | number | null | undefined | false;

export interface Props {
  className?: string;
  text?: string;
  /** Stable hook for tests (`data-testid`). */
  testId?: string;
  /** Attributes; `true` sets an empty attribute, `false`, null and undefined leave it out. */
  attrs?: Record<string, string | number | boolean | null | undefined>;
}

/** Creates an element with its props and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  children: readonly Child[] = [],
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (props.className) el.className = props.className;
  if (props.testId) el.dataset.testid = props.testId;
  for (const [name, value] of Object.entries(props.attrs ?? {})) {
    if (value === true) el.setAttribute(name, '');
    else if (value !== false && value !== null && value !== undefined) el.setAttribute(name, String(value));
  }
  if (props.text !== undefined) el.textContent = props.text;
  append(el, children);
  return el;
}

/** Appends children, turning strings and numbers into text nodes and skipping empty ones. */
export function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces an element's children, with the same rules as `append`. */
export function setChildren(parent: Element, children: readonly Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/** A `<button type="button">` that runs `onClick`. */
export function button(
  label: string,
  onClick: (ev: MouseEvent) => void,
  props: Props = {},
): HTMLButtonElement {
  const b = h('button', { ...props, text: label, attrs: { type: 'button', ...props.attrs } });
  b.addEventListener('click', onClick);
  return b;
}

/** A card: a titled section of the page. */
export function card(title: string, props: Props = {}, children: readonly Child[] = []): HTMLElement {
  return h('section', { ...props, className: `card ${props.className ?? ''}`.trim() }, [
    h('h2', { text: title }),
    ...children,
  ]);
}

let idCounter = 0;
/** A page-unique id, for label/aria wiring. */
export function uniqueId(prefix: string): string {
  idCounter += 1;
  return `${prefix}-${idCounter}`;
}
