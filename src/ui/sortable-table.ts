/**
 * A table whose columns sort on click (ascending, then descending, then back to the original
 * order). Cells are text; sorting uses each column's own value, so "104.6 ⚠" sorts as 104.6.
 */
import { h } from './dom.ts';

export interface Column<T> {
  header: string;
  cell: (row: T) => string;
  /** Sort key; numbers sort numerically, strings by locale. */
  sortValue: (row: T) => number | string;
  /** Right-aligned, like the Markdown report's number columns. */
  numeric?: boolean;
  /** Extra class of the cell, e.g. to colour a bound or a speed-up. */
  cellClass?: (row: T) => string | undefined;
  /** Tooltip of the header, to explain a column. */
  title?: string;
  /** Tooltip of a cell, to explain a mark in it. */
  cellTitle?: (row: T) => string | undefined;
}

type Direction = 'ascending' | 'descending';

export function sortableTable<T>(
  columns: readonly Column<T>[],
  rows: readonly T[],
  props: { testId: string; caption?: string },
): HTMLElement {
  let sortColumn = -1;
  let direction: Direction = 'ascending';
  const tbody = h('tbody');
  const headers = columns.map((column, i) => {
    const sortButton = h('button', {
      className: 'sort',
      text: column.header,
      attrs: { type: 'button', title: column.title ?? `Sort by ${column.header}` },
    });
    sortButton.addEventListener('click', () => {
      if (sortColumn !== i) {
        sortColumn = i;
        direction = 'ascending';
      } else if (direction === 'ascending') {
        direction = 'descending';
      } else {
        sortColumn = -1;
      }
      renderBody();
    });
    return h('th', { className: column.numeric ? 'num' : undefined, attrs: { scope: 'col' } }, [sortButton]);
  });

  function renderBody(): void {
    headers.forEach((th, i) => {
      if (i === sortColumn) th.setAttribute('aria-sort', direction);
      else th.removeAttribute('aria-sort');
    });
    const ordered = [...rows];
    if (sortColumn >= 0) {
      const key = columns[sortColumn].sortValue;
      const sign = direction === 'ascending' ? 1 : -1;
      ordered.sort((a, b) => {
        const ka = key(a);
        const kb = key(b);
        const cmp =
          typeof ka === 'number' && typeof kb === 'number' ? ka - kb : String(ka).localeCompare(String(kb));
        return sign * cmp;
      });
    }
    tbody.replaceChildren(
      ...ordered.map((row) =>
        h(
          'tr',
          {},
          columns.map((c) =>
            h('td', {
              className: [c.numeric ? 'num' : '', c.cellClass?.(row) ?? ''].join(' ').trim() || undefined,
              text: c.cell(row),
              ...(c.cellTitle?.(row) ? { attrs: { title: c.cellTitle(row) as string } } : {}),
            }),
          ),
        ),
      ),
    );
  }
  renderBody();

  const table = h('table', { className: 'data-table', testId: props.testId }, [
    props.caption ? h('caption', { text: props.caption }) : null,
    h('thead', {}, [h('tr', {}, headers)]),
    tbody,
  ]);
  // Wide tables scroll sideways on phones instead of squeezing the page.
  return h(
    'div',
    {
      className: 'table-scroll',
      attrs: { tabindex: 0, role: 'region', 'aria-label': props.caption ?? 'table' },
    },
    [table],
  );
}
