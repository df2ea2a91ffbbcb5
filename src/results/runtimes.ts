import { escapeMarkdown, fixed, formatMs, markdownDelimiter, markdownRow } from '../markdown.ts';
import { pointId } from './compare.ts';
import { passCell, pointSize } from './export.ts';
import type { BenchResult } from './schema.ts';

/**
 * The browser's own cost: the same spec run in the browser's worker and natively on Dawn, on the
 * same adapter. Per point, both medians in both clocks and their ratio (browser ÷ native; above 1
 * means the browser is slower); then the roofs and overheads each runtime measured, side by side.
 * The wall clock holds what the browser adds around the GPU work (IPC to its GPU process, the
 * submit and the readback); the GPU clock should agree where the two run the same kernels.
 */
export function runtimeComparison(browser: BenchResult, native: BenchResult): string {
  // Joined as compare joins runs: the fusion workload's graphs and the format sweep's formats
  // never stand in for the sweeps' points, nor each other.
  const nativePoints = new Map(native.points.map((p) => [pointId(p), p]));
  const pass = passCell(browser.points);
  const ratio = (a: number | null, b: number | null) =>
    a !== null && b !== null && b > 0 ? fixed(a / b, 2) : '–';
  const ms = (x: number | null) => (x === null ? '–' : formatMs(x));
  const rows = browser.points.flatMap((b) => {
    const n = nativePoints.get(pointId(b));
    if (!n) return [];
    return [
      markdownRow([
        pass(b),
        pointSize(b),
        ms(b.wallMedianMs),
        ms(n.wallMedianMs),
        ratio(b.wallMedianMs, n.wallMedianMs),
        ms(b.gpuMedianMs),
        ms(n.gpuMedianMs),
        ratio(b.gpuMedianMs, n.gpuMedianMs),
      ]),
    ];
  });
  const roofs: [string, number, number][] = [
    ['submit + 4-byte readback, µs', browser.peaks.submitUs, native.peaks.submitUs],
    ['dependent dispatch, µs', browser.peaks.dispatchUs, native.peaks.dispatchUs],
    ['empty dispatch, µs', browser.peaks.emptyDispatchUs, native.peaks.emptyDispatchUs],
    ['FMA, GFLOP/s', browser.peaks.fmaGflops, native.peaks.fmaGflops],
    ['copy, GB/s', browser.peaks.copyGBps, native.peaks.copyGBps],
  ];
  return [
    `**Browser against native** (${escapeMarkdown(browser.env.browser)} against ${escapeMarkdown(native.env.browser)}; ratio = browser ÷ native, above 1: the browser is slower)`,
    '',
    markdownRow([
      'pass',
      'L/depth',
      'browser wall ms',
      'native wall ms',
      'wall ratio',
      'browser GPU ms',
      'native GPU ms',
      'GPU ratio',
    ]),
    markdownDelimiter('llrrrrrr'),
    ...(rows.length > 0 ? rows : [markdownRow(['no point ran in both', '', '', '', '', '', '', ''])]),
    '',
    markdownRow(['overhead or roof', 'browser', 'native', 'browser ÷ native']),
    markdownDelimiter('lrrr'),
    ...roofs.map(([name, b, n]) => markdownRow([name, fixed(b, 1), fixed(n, 1), ratio(b, n)])),
  ].join('\n');
}
