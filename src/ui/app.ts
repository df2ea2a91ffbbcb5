/**
 * The page: device card, configuration, Run and Cancel with progress, history, and the run,
 * compare and capacity views. It talks to the engine only through the worker's typed API (EngineApi).
 */
import { proxy, type Remote } from 'comlink';
import type { Peaks } from '../measure/peaks.ts';
import { adapterLabel } from '../results/export.ts';
import type { BenchResult, Point } from '../results/schema.ts';
import type { EngineApi, GenerateEvent, GpuInfo, Progress } from '../runtime/api.ts';
import { CapacityView } from './capacity/view.ts';
import { CompareView } from './compare.ts';
import { DeviceCard } from './device-card.ts';
import { button, card, h } from './dom.ts';
import { ErrorBanner } from './error-banner.ts';
import { ConfigForm } from './form/form.ts';
import { formatDate } from './format.ts';
import { saveRun } from './history.ts';
import { HistoryList } from './history-list.ts';
import { preparePagePeer, runPagePeer, specBesidePeer } from './peer-run.ts';
import { ProgressView } from './progress.ts';
import { RunView } from './run-view.ts';

/**
 * The preset chosen when the URL does not name one: the model trained here, on any adapter. It is
 * small (16 MiB in f32), so Run shows its text and its quality table within a minute or two even
 * on a CPU emulation; its decode reads too few bytes to load a GPU's DRAM, which the run's warning
 * says, and the shapes of real models are one pick away (smollm2-135m and up).
 */
const DEFAULT_PRESET = 'trained-4m';

type Tab = 'run' | 'compare' | 'capacity';

export class App {
  readonly element: HTMLElement;
  private readonly errors = new ErrorBanner();
  private readonly device = new DeviceCard();
  private readonly form = new ConfigForm(
    () => void this.run(),
    () => void this.generate(),
  );
  private readonly progress = new ProgressView();
  private readonly runView = new RunView();
  private readonly compareView: CompareView;
  private readonly capacityView = new CapacityView();
  private readonly history: HistoryList;
  private readonly runButton: HTMLButtonElement;
  private readonly cancelButton: HTMLButtonElement;
  private readonly tabs: Record<Tab, { tab: HTMLButtonElement; panel: HTMLElement }>;
  /** Number of runs in the comparison, shown on its tab. */
  private readonly compareCount = h('span', { className: 'tab-count' });
  private gpu: GpuInfo | null = null;
  private running = false;
  /** The id of the run in flight, which Cancel names. */
  private runId = '';
  private runs = 0;

  constructor(private readonly engine: Remote<EngineApi>) {
    this.compareView = new CompareView(
      this.errors,
      () => this.runView.current,
      (count) => {
        this.compareCount.textContent = count > 0 ? ` (${count})` : '';
      },
    );
    this.history = new HistoryList({
      open: (entry) => {
        if (this.running) return;
        this.runView.showResult(entry.result);
        this.compareView.setCurrentAvailable(true);
        this.capacityView.setRun(entry.result);
        this.showTab('run');
      },
      compare: (entry) => {
        this.compareView.add(
          `history:${entry.id}`,
          `saved run ${formatDate(entry.result.createdAt)}`,
          entry.result,
        );
        this.showTab('compare');
      },
    });
    this.runButton = button('Run', () => void this.run(), {
      className: 'btn btn-primary btn-large',
      testId: 'run',
      attrs: { disabled: true },
    });
    this.cancelButton = button('Cancel', () => void this.cancel(), {
      className: 'btn btn-large',
      testId: 'cancel',
      attrs: { disabled: true },
    });

    const tab = (name: Tab, label: string, panel: HTMLElement) => {
      const t = button(label, () => this.showTab(name), {
        className: 'tab',
        testId: `tab-${name}`,
        attrs: { role: 'tab', id: `tab-${name}`, 'aria-controls': `panel-${name}` },
      });
      panel.id = `panel-${name}`;
      panel.setAttribute('role', 'tabpanel');
      panel.setAttribute('aria-labelledby', `tab-${name}`);
      return { tab: t, panel };
    };
    this.tabs = {
      run: tab('run', 'This run', h('div', {}, [this.runView.element])),
      compare: tab('compare', 'Compare', h('div', {}, [this.compareView.element])),
      capacity: tab('capacity', 'Capacity', h('div', {}, [this.capacityView.element])),
    };
    this.tabs.compare.tab.append(this.compareCount);

    this.element = h('div', { className: 'app' }, [
      h('header', { className: 'app-header' }, [
        h('h1', { text: 'WebGPU inference benchmark' }),
        h('p', {
          className: 'tagline',
          text: 'Prefill, decode and overhead of a Llama-style model on your GPU, placed on a roofline measured in this tab.',
        }),
      ]),
      this.errors.element,
      h('div', { className: 'layout' }, [
        h('aside', { className: 'sidebar' }, [
          this.device.element,
          card('Run', { className: 'run-card' }, [
            this.form.element,
            h('div', { className: 'run-actions' }, [this.runButton, this.cancelButton]),
            this.progress.element,
          ]),
          this.history.element,
        ]),
        h('main', { className: 'main' }, [
          h('div', { className: 'tabs', attrs: { role: 'tablist', 'aria-label': 'Views' } }, [
            this.tabs.run.tab,
            this.tabs.compare.tab,
            this.tabs.capacity.tab,
          ]),
          this.tabs.run.panel,
          this.tabs.compare.panel,
          this.tabs.capacity.panel,
        ]),
      ]),
      h('footer', { className: 'app-footer' }, [
        'Everything runs in this tab: no data is sent anywhere, and runs are kept only in this browser.',
      ]),
    ]);
    this.showTab('run');
    // A file dropped outside the drop zone would replace the page; ignore such drops.
    for (const type of ['dragover', 'drop'] as const) {
      window.addEventListener(type, (ev) => {
        if (ev.dataTransfer?.types.includes('Files')) ev.preventDefault();
      });
    }
  }

  /** Finds the adapter, then applies the URL: ?preset=NAME, ?autorun=quick|full|spec. */
  async start(params: URLSearchParams): Promise<void> {
    void this.history.refresh();
    if (!('gpu' in navigator) || !navigator.gpu) {
      // The worker would say the same; checking here explains it without waiting for the worker.
      this.showUnavailable(
        Object.assign(new Error(this.unavailableReason()), { name: 'WebGpuUnavailableError' }),
      );
      return;
    }
    try {
      this.gpu = await this.engine.gpuInfo();
    } catch (e) {
      this.showUnavailable(e as Error);
      return;
    }
    this.device.showInfo(this.gpu);
    const preset = params.get('preset');
    this.form.setPreset(preset ?? DEFAULT_PRESET);
    this.runButton.disabled = false;
    const autorun = params.get('autorun');
    if (autorun === 'quick' || autorun === 'full' || autorun === 'spec') {
      this.form.applySuite(autorun);
      await this.run();
    }
  }

  private unavailableReason(): string {
    return globalThis.isSecureContext === false
      ? 'WebGPU needs a secure context: this page was opened over plain http from a non-local address or from a file.'
      : 'This browser does not expose WebGPU (navigator.gpu is missing).';
  }

  private showUnavailable(e: Error): void {
    this.device.showUnavailable(e);
    this.errors.show('device', `${e.name}: WebGPU is not available.`, 'See the Device card for what to do.');
  }

  private showTab(name: Tab): void {
    for (const [key, { tab, panel }] of Object.entries(this.tabs)) {
      const selected = key === name;
      tab.setAttribute('aria-selected', String(selected));
      panel.hidden = !selected;
    }
    if (name === 'compare') this.compareView.shown();
  }

  private async run(): Promise<void> {
    if (this.running || !this.gpu) return;
    const spec = this.form.read();
    if (!spec) return;
    this.setRunning(true);
    this.errors.clearFrom('run');
    this.showTab('run');
    const label = adapterLabel(this.gpu.adapter);
    const points: Point[] = [];
    this.progress.start();
    let peaks: Peaks | null = null;
    this.runView.showLive(label, points, peaks);
    // Progress arrives on its own message port, so the last reports can land after the result;
    // once the result is in, they are stale.
    let finished = false;
    const onProgress = (p: Progress) => {
      if (finished) return;
      this.progress.update(p);
      // Redraw when a point lands, and once when the roofs become known.
      let redraw = Boolean(p.point);
      if (p.peaks && !peaks) {
        peaks = p.peaks;
        this.device.showPeaks(p.peaks);
        redraw = true;
      }
      if (p.point) points.push(p.point);
      if (p.generated) this.runView.generation.event(p.generated);
      if (redraw) this.runView.showLive(label, [...points], peaks);
    };
    if (spec.generate) {
      this.runView.generation.start(
        spec.generate.prompt,
        'To be generated greedily on the run’s model once its workloads are done…',
      );
    }
    let result: BenchResult;
    // Compare with llama.cpp: the engine runs from the GGUF file the peer will load.
    let peer: Awaited<ReturnType<typeof preparePagePeer>> | null = null;
    let runSpec = spec;
    let probe: number[] | undefined;
    try {
      this.runId = `page-${++this.runs}-${Date.now()}`;
      if (this.form.peerRequested()) {
        this.progress.step('Writing the model as a GGUF file for llama.cpp…');
        peer = await preparePagePeer(spec);
        if ('file' in peer) ({ spec: runSpec, probe } = specBesidePeer(spec, peer));
      }
      result = await this.engine.run(runSpec, proxy(onProgress), this.runId, probe);
    } catch (e) {
      finished = true;
      const err = e as Error;
      this.errors.show(
        'run',
        `The run failed: ${err.name}`,
        `${err.message}${points.length > 0 ? ` The ${points.length} finished points are shown below (export needs a finished run).` : ''}`,
      );
      if (spec.generate) this.runView.generation.fail(`${err.name}: ${err.message}`);
      this.progress.finish('Failed');
      this.setRunning(false);
      return;
    }
    finished = true;
    if (peer && result.status === 'complete') {
      this.runView.showResult(result);
      this.progress.step('llama.cpp (wllama, in this page) on the same file…');
      const logits = await this.engine.takeProbe(this.runId);
      result.peers = [
        await runPagePeer(
          spec,
          peer,
          logits && 'logits' in logits ? logits.logits : undefined,
          result.model.weightFormat,
        ),
      ];
    }
    this.runView.showResult(result);
    this.device.showPeaks(result.peaks);
    this.compareView.setCurrentAvailable(true);
    // Offered at once, so a run that lands while the Capacity tab is open can feed its roofs.
    this.capacityView.setRun(result);
    this.progress.finish(this.outcome(result));
    if (result.status === 'failed') {
      const lost = result.error?.name === 'DeviceLostError';
      this.errors.show(
        'run',
        lost ? 'The GPU device was lost during the run.' : 'The run failed.',
        `${result.error ? `${result.error.name}: ${result.error.message}` : ''}${result.points.length > 0 ? ` The ${result.points.length} finished points are kept below.` : ''}`,
      );
    }
    this.setRunning(false);
    if (result.points.length > 0 || result.speculative) {
      try {
        await saveRun(result);
        await this.history.refresh();
      } catch {
        // History is a convenience; the card already says when IndexedDB is unavailable.
      }
    }
  }

  /**
   * The Prompt box's Generate: the picked GGUF file built and checked against the CPU reference,
   * then the text streamed into the run view token by token. Cancel stops it between two tokens.
   */
  private async generate(): Promise<void> {
    if (this.running || !this.gpu) return;
    const request = this.form.generateRequest();
    if (!request) return;
    this.setRunning(true);
    this.errors.clearFrom('run');
    this.showTab('run');
    const where =
      'Generated greedily with Generate: the model built for it and checked against the CPU reference, on this adapter’s default kernels.';
    const view = this.runView.generation;
    view.start(request.prompt, 'Loading the model…');
    this.runId = `page-generate-${++this.runs}-${Date.now()}`;
    this.progress.start();
    this.progress.step('Generating text from the prompt…');
    try {
      const r = await this.engine.generate(
        request,
        proxy((e: GenerateEvent) => view.event(e)),
        this.runId,
      );
      view.finish(r.generation, where);
      this.progress.finish(`Done: ${r.generation.tokens.length} tokens`);
    } catch (e) {
      const err = e as Error;
      view.fail(`${err.name}: ${err.message}`);
      this.progress.finish('Failed');
    } finally {
      this.setRunning(false);
    }
  }

  private outcome(r: BenchResult): string {
    const total = r.points.length;
    if (r.status === 'complete') return `Done: ${total} points`;
    if (r.status === 'cancelled') return `Cancelled: ${total} finished point${total === 1 ? '' : 's'} kept`;
    return `Failed after ${total} point${total === 1 ? '' : 's'}`;
  }

  private async cancel(): Promise<void> {
    if (!this.running) return;
    this.cancelButton.disabled = true;
    this.cancelButton.textContent = 'Cancelling…';
    await this.engine.cancel(this.runId);
  }

  private setRunning(running: boolean): void {
    this.running = running;
    this.runButton.disabled = running;
    this.runButton.textContent = running ? 'Running…' : 'Run';
    this.cancelButton.disabled = !running;
    this.cancelButton.textContent = 'Cancel';
    this.form.setDisabled(running);
    document.body.classList.toggle('is-running', running);
  }
}
