/**
 * The six charts of a run, or of a comparison, as panels in a grid. The run view and the compare
 * view each own one set and feed it ChartRuns; everything else about drawing is in the chart modules.
 * Compared runs are labelled with their weight formats; a run of several formats (the format sweep)
 * is one series per format in the time charts and one joined series per pass on the roofline.
 */
import { h } from '../dom.ts';
import type { ChartRun, PlotNode } from './common.ts';
import { itlChart, tpotChart } from './decode.ts';
import { splitByFormat, withFormats } from './formats.ts';
import { splitByGraph } from './graphs.ts';
import { kernelsChart } from './kernels.ts';
import { ChartPanel } from './panel.ts';
import { prefillThroughputChart, ttftChart } from './prefill.ts';
import { rooflineChart } from './roofline.ts';

/** The time charts' series: one per run, format and graph. */
function series(runs: readonly ChartRun[]): ChartRun[] {
  return splitByGraph(splitByFormat(runs));
}

export interface ChartSetOptions {
  /** Prefix of the panels' test ids; the run view's roofline is plain `roofline`. */
  idPrefix: string;
  /** Stem of SVG file names, e.g. the result file's stem. */
  fileStem: () => string;
}

/** A labelled checkbox that redraws one panel when toggled. */
function toggle(label: string, onChange: () => void): { element: HTMLElement; input: HTMLInputElement } {
  const input = h('input', { attrs: { type: 'checkbox' } });
  input.addEventListener('change', onChange);
  return { element: h('label', { className: 'toggle' }, [input, ` ${label}`]), input };
}

export class ChartSet {
  readonly element: HTMLElement;
  private runs: readonly ChartRun[] = [];
  private readonly panels: {
    panel: ChartPanel;
    draw: (runs: readonly ChartRun[], width: number) => PlotNode | null;
  }[];

  constructor(options: ChartSetOptions) {
    const id = (name: string) => (options.idPrefix ? `${options.idPrefix}-${name}` : name);
    const stem = (name: string) => () => `${options.fileStem()}-${name}`;
    const kernelToggle = toggle('per-kernel points', () => roofline.render());
    const shareToggle = toggle('share of pass', () => kernels.render());
    kernelToggle.input.dataset.testid = id('roofline-kernels');

    const roofline = new ChartPanel({
      title: 'Roofline',
      testId: id('roofline'),
      wide: true,
      fileStem: stem('roofline'),
      emptyText: 'Points appear here as they are measured.',
      controls: [kernelToggle.element],
      caption:
        'Each filled mark is one measured pass: prefill at prompt length L, decode at context depth d, ' +
        'placed by the clock named above the chart (GPU time where timestamps are exact, else wall time). ' +
        'On the sloped line (copy bandwidth) a pass is bandwidth-bound; under the flat roof (FMA peak), ' +
        'compute-bound; near the dashed overhead ceiling, bound by kernel launches and submits. The ring ' +
        'marks the ridge point. A pass of F FLOPs and n dispatches can reach at most F / (n·dispatch + ' +
        'submit) FLOP/s, which depends on its size, so the ceiling is drawn for a typical decode step ' +
        '(median FLOPs and dispatches of the decode points). Far below every line means time lost to ' +
        'something the roofs do not model (synchronisation, poor occupancy, a software adapter).',
    });
    const prefill = new ChartPanel({
      title: 'Prefill throughput',
      testId: id('prefill-chart'),
      fileStem: stem('prefill-throughput'),
      emptyText: 'No prefill points yet.',
      caption:
        'Prompt tokens per second at each prompt length (solid) and what the cost model predicts from ' +
        'the measured roofs (dashed). The gap is efficiency lost.',
    });
    const ttft = new ChartPanel({
      title: 'Time to first token',
      testId: id('ttft-chart'),
      fileStem: stem('ttft'),
      emptyText: 'No prefill points yet.',
      caption:
        'Wall-clock prefill time, submit and reading back the first token included (solid); cost model dashed.',
    });
    const tpot = new ChartPanel({
      title: 'Decode: time per output token',
      testId: id('tpot-chart'),
      fileStem: stem('tpot'),
      emptyText: 'No decode points yet.',
      caption:
        'Median TPOT at each context depth, one sample per repetition: (last − first token) / (tokens − 1), ' +
        'wall clock (solid); cost model dashed. A rise with depth is attention reading a longer KV cache.',
    });
    const itl = new ChartPanel({
      title: 'Inter-token latency',
      testId: id('itl-chart'),
      fileStem: stem('itl'),
      emptyText: 'No decode points yet.',
      caption:
        'Cumulative distribution of the wall time between consecutive generated tokens, every gap of ' +
        'every repetition: one curve per depth for a single run; with several runs, one curve per run ' +
        'with its depths pooled (the legend names them). A steep curve is steady; a long tail is stutter.',
    });
    const kernels = new ChartPanel({
      title: 'Where the GPU time goes',
      testId: id('kernels-chart'),
      wide: true,
      fileStem: stem('kernels'),
      emptyText:
        'No per-kernel times in these runs: they come from a profiled run (“Profile every repetition”, or bench --profile), which also needs GPU timestamp queries.',
      controls: [shareToggle.element],
      caption:
        'GPU time of each kernel role, from a profiled run of each point in which every kernel has its ' +
        'own timed pass. The stack can differ from the wall-clock time, which also holds submit and readback.',
    });
    this.panels = [
      {
        panel: roofline,
        draw: (runs, width) =>
          rooflineChart(withFormats(runs), { width, showKernels: kernelToggle.input.checked }),
      },
      // A run of several formats is one series per format here, so each legend names its format, and
      // the fusion workload's points are one series per graph beside the sweeps'.
      { panel: prefill, draw: (runs, width) => prefillThroughputChart(series(runs), width) },
      { panel: ttft, draw: (runs, width) => ttftChart(series(runs), width) },
      { panel: tpot, draw: (runs, width) => tpotChart(series(runs), width) },
      { panel: itl, draw: (runs, width) => itlChart(series(runs), width) },
      {
        panel: kernels,
        draw: (runs, width) => kernelsChart(withFormats(runs), width, shareToggle.input.checked),
      },
    ];
    this.element = h(
      'div',
      { className: 'chart-grid' },
      this.panels.map((p) => p.panel.element),
    );
  }

  update(runs: readonly ChartRun[]): void {
    this.runs = runs;
    for (const { panel, draw } of this.panels) {
      panel.update(runs.length > 0 ? (width) => draw(this.runs, width) : null);
    }
  }
}
