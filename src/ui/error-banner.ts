/**
 * The page's one error region (data-testid=error): a failed run, a lost device, a rejected import.
 * It is an alert, so screen readers announce it, and it can be dismissed.
 */
import { button, h } from './dom.ts';

/** What raised the error, so fixing one thing (a good import) does not hide another (a failed run). */
export type ErrorSource = 'device' | 'run' | 'import';

export class ErrorBanner {
  readonly element: HTMLElement;
  private source: ErrorSource | null = null;
  private readonly title = h('strong');
  private readonly detail = h('p');

  constructor() {
    this.element = h(
      'div',
      { className: 'error-banner', testId: 'error', attrs: { role: 'alert', hidden: true } },
      [
        h('div', { className: 'error-text' }, [this.title, this.detail]),
        button('Dismiss', () => this.clear(), { className: 'btn btn-small btn-ghost' }),
      ],
    );
  }

  show(source: ErrorSource, title: string, detail = ''): void {
    this.source = source;
    this.title.textContent = title;
    this.detail.textContent = detail;
    this.detail.hidden = detail === '';
    this.element.hidden = false;
  }

  /** Hides the banner if it shows an error from `source`. */
  clearFrom(source: ErrorSource): void {
    if (this.source === source) this.clear();
  }

  clear(): void {
    this.source = null;
    this.element.hidden = true;
    this.title.textContent = '';
    this.detail.textContent = '';
  }
}
