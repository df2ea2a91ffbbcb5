/**
 * A chart card: title, optional controls, the chart, a caption that says how to read it, and an SVG
 * download. The chart is redrawn at the card's width whenever that width changes, so it stays crisp
 * from a phone to a wide screen (Plot draws at a fixed pixel width).
 */
import { button, type Child, h } from '../dom.ts';
import { download } from '../export.ts';
import type { ChartNode } from './common.ts';
import { exportSvg } from './svg-export.ts';

export interface PanelOptions {
  title: string;
  caption: string;
  /** `data-testid` of the chart's container. */
  testId: string;
  /** Shown while there is nothing to draw. */
  emptyText: string;
  /** File name of the SVG download, without extension. */
  fileStem: () => string;
  controls?: readonly Child[];
  /** Spans the full width of the chart grid. */
  wide?: boolean;
}

export type Draw = (width: number) => ChartNode | null;

export class ChartPanel {
  readonly element: HTMLElement;
  private readonly body: HTMLElement;
  private readonly exportButton: HTMLButtonElement;
  private draw: Draw | null = null;
  private node: ChartNode | null = null;
  private drawnWidth = 0;

  constructor(private readonly options: PanelOptions) {
    this.body = h('div', { className: 'chart-body', testId: options.testId });
    this.exportButton = button('SVG', () => this.exportSvg(), {
      className: 'btn btn-small',
      testId: `${options.testId}-svg`,
      attrs: { 'aria-label': `Download the ${options.title} chart as SVG`, disabled: true },
    });
    this.element = h('figure', { className: `chart-panel${options.wide ? ' wide' : ''}` }, [
      h('div', { className: 'chart-head' }, [
        h('h3', { text: options.title }),
        h('div', { className: 'chart-controls' }, [...(options.controls ?? []), this.exportButton]),
      ]),
      this.body,
      h('figcaption', { text: options.caption }),
    ]);
    this.showEmpty();
    // Redraw when the width changes (window resize, layout switch, or a hidden view being shown).
    new ResizeObserver(() => {
      const width = Math.floor(this.body.clientWidth);
      if (width > 0 && width !== this.drawnWidth) this.render();
    }).observe(this.body);
  }

  /** Sets what to draw and draws it now if the panel is visible. */
  update(draw: Draw | null): void {
    this.draw = draw;
    this.render();
  }

  /** Redraws with the current data, e.g. after a control changed. */
  render(): void {
    const width = Math.floor(this.body.clientWidth);
    if (width <= 0) return;
    this.drawnWidth = width;
    this.node = this.draw ? this.draw(width) : null;
    if (this.node) this.body.replaceChildren(this.node);
    else this.showEmpty();
    this.exportButton.disabled = this.node === null;
  }

  private showEmpty(): void {
    this.body.replaceChildren(h('p', { className: 'chart-empty', text: this.options.emptyText }));
  }

  private exportSvg(): void {
    if (!this.node) return;
    download(`${this.options.fileStem()}.svg`, exportSvg(this.node, this.options.title), 'svg');
  }
}
