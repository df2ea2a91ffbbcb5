import { h } from './dom.ts';

/** A column of a data table: its heading, what it means (the tooltip), and whether it is numeric. */
export interface Header {
  text: string;
  title: string;
  numeric?: boolean;
}

/**
 * A captioned data table in a focusable, scrollable region (narrow screens scroll it, a keyboard
 * reaches it): the formats and KV views' tables. `className` adds to `data-table compact`.
 */
export function captionedTable(
  caption: string,
  headers: readonly Header[],
  rows: HTMLElement[],
  testId: string,
  className = '',
): HTMLElement {
  return h(
    'div',
    { className: 'table-scroll', attrs: { tabindex: 0, role: 'region', 'aria-label': caption } },
    [
      h('table', { className: `data-table compact${className ? ` ${className}` : ''}`, testId }, [
        h('caption', { text: caption }),
        h('thead', {}, [
          h(
            'tr',
            {},
            headers.map((c) =>
              h('th', {
                className: c.numeric ? 'num' : undefined,
                text: c.text,
                attrs: { scope: 'col', title: c.title },
              }),
            ),
          ),
        ]),
        h('tbody', {}, rows),
      ]),
    ],
  );
}
