/**
 * Several Plot charts in one SVG, one under the other, each with a heading. Plot draws one set of
 * scales per chart, so quantities with different units (KV pages and requests; goodput and TTFT;
 * step time and tokens/s) that share an x axis are drawn as separate plots of the same width and x
 * domain, stacked here. The result is one SVG, so the panel's download exports all of it.
 */
import { CHART_FONT } from './common.ts';

const SVG_NS = 'http://www.w3.org/2000/svg';

/** Height of a part's heading line, px, and the gap above a heading that follows a chart. */
const HEADING_PX = 18;
const GAP_PX = 10;

export interface StackPart {
  /** Shown above the chart, bold; omitted when empty. */
  heading?: string;
  /** A Plot SVG (drawn without legends, so Plot returns the bare SVG). */
  chart: SVGSVGElement | HTMLElement;
}

function svgOf(node: SVGSVGElement | HTMLElement): SVGSVGElement | null {
  if (node instanceof SVGSVGElement) return node;
  return node.querySelector('svg');
}

/** The parts stacked top to bottom in one SVG `width` px wide. */
export function stackCharts(parts: readonly StackPart[], width: number): SVGSVGElement {
  const out = document.createElementNS(SVG_NS, 'svg');
  out.setAttribute('font-family', CHART_FONT);
  out.setAttribute('font-size', '12');
  let y = 0;
  parts.forEach((part, i) => {
    if (i > 0) y += GAP_PX;
    if (part.heading) {
      const text = document.createElementNS(SVG_NS, 'text');
      text.setAttribute('x', '4');
      text.setAttribute('y', String(y + 13));
      text.setAttribute('font-weight', '600');
      text.setAttribute('fill', '#0f172a');
      text.textContent = part.heading;
      out.append(text);
      y += HEADING_PX;
    }
    const svg = svgOf(part.chart);
    if (!svg) return;
    const height = Number(svg.getAttribute('height')) || 0;
    svg.setAttribute('x', '0');
    svg.setAttribute('y', String(y));
    // The page's `.chart-body svg { height: auto }` would make a nested SVG 100% tall; inline
    // sizes (set through CSSOM, which the CSP allows) keep each part its own size.
    svg.style.setProperty('width', `${width}px`);
    svg.style.setProperty('height', `${height}px`);
    out.append(svg);
    y += height;
  });
  out.setAttribute('width', String(width));
  out.setAttribute('height', String(y));
  out.setAttribute('viewBox', `0 0 ${width} ${y}`);
  return out;
}

export interface LegendItem {
  label: string;
  color: string;
  /** A filled square (the default), a line, a dashed line, a cross (an ended stay), or a square with a white tick. */
  shape?: 'square' | 'line' | 'dash' | 'cross' | 'tick';
}

/** Legend entries' layout, px. */
const LEGEND = { row: 18, swatch: 12, gap: 16, charWidth: 6.3 } as const;

function legendIcon(item: LegendItem, x: number, y: number): SVGElement[] {
  const el = (tag: string, attrs: Record<string, string | number>) => {
    const e = document.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    return e;
  };
  const s = LEGEND.swatch;
  const mid = y + s / 2;
  switch (item.shape) {
    case 'line':
    case 'dash':
      return [
        el('line', {
          x1: x,
          x2: x + s,
          y1: mid,
          y2: mid,
          stroke: item.color,
          'stroke-width': 2.5,
          ...(item.shape === 'dash' ? { 'stroke-dasharray': '4,2' } : {}),
        }),
      ];
    case 'cross':
      return [
        el('path', {
          d: `M${x + 2},${y + 2}L${x + s - 2},${y + s - 2}M${x + s - 2},${y + 2}L${x + 2},${y + s - 2}`,
          stroke: item.color,
          'stroke-width': 2.5,
        }),
      ];
    case 'tick':
      return [
        el('rect', { x, y, width: s, height: s, rx: 2, fill: item.color }),
        el('line', {
          x1: x + s / 2,
          x2: x + s / 2,
          y1: y + 2,
          y2: y + s - 2,
          stroke: 'white',
          'stroke-width': 1.5,
        }),
      ];
    default:
      return [el('rect', { x, y, width: s, height: s, rx: 2, fill: item.color })];
  }
}

/**
 * A legend drawn as SVG (Plot's own legends are HTML, which a stacked chart cannot hold): entries
 * in a row, wrapped to `width`.
 */
export function legendSvg(items: readonly LegendItem[], width: number): SVGSVGElement {
  const out = document.createElementNS(SVG_NS, 'svg');
  let x = 4;
  let y = 3;
  for (const item of items) {
    const w = LEGEND.swatch + 5 + item.label.length * LEGEND.charWidth + LEGEND.gap;
    if (x > 4 && x + w > width) {
      x = 4;
      y += LEGEND.row;
    }
    out.append(...legendIcon(item, x, y));
    const text = document.createElementNS(SVG_NS, 'text');
    text.setAttribute('x', String(x + LEGEND.swatch + 5));
    text.setAttribute('y', String(y + 10));
    text.setAttribute('fill', '#1e293b');
    text.textContent = item.label;
    out.append(text);
    x += w;
  }
  const height = y + LEGEND.row;
  out.setAttribute('width', String(width));
  out.setAttribute('height', String(height));
  return out;
}
