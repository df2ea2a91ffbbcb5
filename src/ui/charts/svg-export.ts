/**
 * A chart as a standalone SVG file. Plot draws legends as HTML beside its SVG, so the export copies
 * each legend swatch (Plot's own little SVG) and its label into the file, above the chart, with a
 * title. Text is copied as text nodes; XMLSerializer escapes it, so an imported file's adapter name
 * cannot become markup in the exported SVG.
 */
import { CHART_FONT, type ChartNode, PLOT_CLASS } from './common.ts';

const SVG_NS = 'http://www.w3.org/2000/svg';

/** Layout of the exported header, px. */
const LAYOUT = {
  pad: 12,
  titleHeight: 22,
  swatch: 14,
  rowHeight: 20,
  /** Rough width of one 12 px character, to wrap legend entries. */
  charWidth: 7,
  gap: 16,
} as const;

function svgEl<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number>,
): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

/** The chart's own SVG: the node itself, or the last SVG child of Plot's figure (legends come first). */
function chartSvgOf(node: ChartNode): SVGSVGElement | null {
  if (node instanceof SVGSVGElement) return node;
  const svgs = node.querySelectorAll<SVGSVGElement>(':scope > svg');
  return svgs.length > 0 ? svgs[svgs.length - 1] : null;
}

export function exportSvg(node: ChartNode, title: string): string {
  const svg = chartSvgOf(node);
  const width = Math.max(320, Number(svg?.getAttribute('width')) || 0);
  const out = svgEl('svg', { xmlns: SVG_NS, 'font-family': CHART_FONT, 'font-size': 12 });
  const heading = svgEl('text', {
    x: LAYOUT.pad,
    y: LAYOUT.pad + 14,
    'font-size': 15,
    'font-weight': 600,
    fill: '#0f172a',
  });
  heading.textContent = title;
  out.append(svgEl('rect', { x: 0, y: 0, width: '100%', height: '100%', fill: 'white' }), heading);
  let y = LAYOUT.pad + LAYOUT.titleHeight;

  // Legend entries, wrapped to the chart width.
  const swatches = [...node.querySelectorAll<HTMLElement>(`.${PLOT_CLASS}-swatch`)];
  let x = LAYOUT.pad;
  if (swatches.length > 0) y += 4;
  for (const swatch of swatches) {
    const label = swatch.textContent ?? '';
    const itemWidth = LAYOUT.swatch + 6 + label.length * LAYOUT.charWidth + LAYOUT.gap;
    if (x > LAYOUT.pad && x + itemWidth > width - LAYOUT.pad) {
      x = LAYOUT.pad;
      y += LAYOUT.rowHeight;
    }
    const icon = swatch.querySelector('svg');
    if (icon) {
      const copy = icon.cloneNode(true) as SVGSVGElement;
      for (const [k, v] of Object.entries({ x, y, width: LAYOUT.swatch, height: LAYOUT.swatch })) {
        copy.setAttribute(k, String(v));
      }
      out.append(copy);
    }
    const text = svgEl('text', { x: x + LAYOUT.swatch + 6, y: y + 11, fill: '#1e293b' });
    text.textContent = label;
    out.append(text);
    x += itemWidth;
  }
  if (swatches.length > 0) y += LAYOUT.rowHeight + 4;

  if (svg) {
    const copy = svg.cloneNode(true) as SVGSVGElement;
    copy.setAttribute('x', '0');
    copy.setAttribute('y', String(y));
    out.append(copy);
    y += Number(svg.getAttribute('height')) || 0;
  }
  const height = y + LAYOUT.pad;
  out.setAttribute('width', String(width));
  out.setAttribute('height', String(height));
  out.setAttribute('viewBox', `0 0 ${width} ${height}`);
  return `<?xml version="1.0" encoding="UTF-8"?>\n${new XMLSerializer().serializeToString(out)}\n`;
}
