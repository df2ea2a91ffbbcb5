/**
 * The device card: which adapter this page got, whether it is a real GPU, what it supports, and
 * once a run has measured them, its roofs. Without WebGPU it says how to get it instead.
 */
import { type AdapterRecord, isSoftwareAdapter } from '../gpu/device.ts';
import type { Peaks } from '../measure/peaks.ts';
import type { GpuInfo } from '../runtime/api.ts';
import { type Child, card, h, setChildren } from './dom.ts';
import { formatBinaryBytes, formatIntensity, formatNumber } from './format.ts';

/** Limits that decide which models and kernels fit, with how to show them. */
const KEY_LIMITS: readonly { name: string; label: string; bytes: boolean }[] = [
  { name: 'maxBufferSize', label: 'Max buffer', bytes: true },
  { name: 'maxStorageBufferBindingSize', label: 'Max storage binding', bytes: true },
  { name: 'maxComputeWorkgroupStorageSize', label: 'Workgroup memory', bytes: true },
  { name: 'maxComputeInvocationsPerWorkgroup', label: 'Invocations per workgroup', bytes: false },
];

function adapterName(a: AdapterRecord): string {
  return [a.vendor, a.architecture, a.device, a.description].filter(Boolean).join(' / ') || 'unnamed adapter';
}

function badge(label: string, on: boolean, detail = ''): HTMLElement {
  return h('li', { className: `badge ${on ? 'badge-on' : 'badge-off'}` }, [
    h('span', { attrs: { 'aria-hidden': true }, text: on ? '✓' : '✗' }),
    ` ${label}${detail ? ` ${detail}` : ''}`,
    h('span', { className: 'visually-hidden', text: on ? ' (available)' : ' (not available)' }),
  ]);
}

function definitions(rows: readonly [string, Child][]): HTMLElement {
  return h(
    'dl',
    { className: 'facts' },
    rows.flatMap(([term, value]) => [h('dt', { text: term }), h('dd', {}, [value])]),
  );
}

export class DeviceCard {
  readonly element: HTMLElement;
  private readonly body = h('div', { className: 'device-body' }, [
    h('p', { className: 'muted', text: 'Looking for a WebGPU adapter…' }),
  ]);
  private readonly peaks = h('div', { className: 'device-peaks' });

  constructor() {
    this.element = card('Device', { testId: 'device', className: 'device-card' }, [this.body, this.peaks]);
  }

  showInfo(info: GpuInfo): void {
    const a = info.adapter;
    const software = isSoftwareAdapter(a);
    const f16 = info.features.includes('shader-f16');
    const subgroups = info.features.includes('subgroups');
    const timestamps = info.features.includes('timestamp-query');
    const subgroupSizes =
      a.subgroupMinSize !== undefined && a.subgroupMaxSize !== undefined
        ? `(${a.subgroupMinSize}–${a.subgroupMaxSize})`
        : '';
    setChildren(this.body, [
      h('p', { className: 'adapter-line' }, [h('strong', { text: 'Adapter: ' }), adapterName(a)]),
      software
        ? h('div', { className: 'warning-loud', attrs: { role: 'note' } }, [
            h('strong', { text: '⚠ Software adapter. ' }),
            'WebGPU is running on the CPU (',
            a.isFallbackAdapter ? 'the browser’s fallback adapter' : 'a software rasterizer',
            '). The numbers measure that emulation, not a GPU. Check chrome://gpu, or enable hardware acceleration.',
          ])
        : null,
      definitions([
        ['Vendor', a.vendor || '–'],
        ['Architecture', a.architecture || '–'],
        ['Device', a.device || '–'],
        ['Description', a.description || '–'],
      ]),
      // Chromium reports the device and description only with its WebGPU developer features on
      // (issue 37, item 11): say so rather than leave two dashes unexplained.
      !a.device && !a.description
        ? h('p', {
            className: 'muted small',
            testId: 'adapter-info-note',
            text: 'Device and description: this browser did not report them. Chromium withholds both unless WebGPU developer features are on (chrome://flags/#enable-webgpu-developer-features); results name the adapter by vendor and architecture.',
          })
        : null,
      h('ul', { className: 'badges', attrs: { 'aria-label': 'Features' } }, [
        badge('f16', f16),
        badge('subgroups', subgroups, subgroupSizes),
        badge('timestamps', timestamps),
        badge('cross-origin isolated', globalThis.crossOriginIsolated === true),
      ]),
      isolationNote(),
      timestamps
        ? null
        : h('p', {
            className: 'muted small',
            text: 'No GPU timestamps: only wall-clock times, and no per-kernel breakdown.',
          }),
      definitions(
        KEY_LIMITS.map(({ name, label, bytes }): [string, string] => {
          const v = info.limits[name];
          return [label, v === undefined ? '–' : bytes ? formatBinaryBytes(v) : String(v)];
        }),
      ),
    ]);
  }

  /** The roofs measured by the latest run, or nothing before one. */
  showPeaks(peaks: Peaks | null): void {
    if (!peaks) {
      this.peaks.replaceChildren();
      return;
    }
    const ridge = peaks.copyGBps > 0 ? `${formatIntensity(peaks.fmaGflops / peaks.copyGBps)} FLOP/B` : '–';
    this.peaks.replaceChildren(
      h('h3', { text: 'Measured peaks' }),
      definitions([
        ['FMA', `${formatNumber(peaks.fmaGflops)} GFLOP/s`],
        ['Copy bandwidth', `${formatNumber(peaks.copyGBps)} GB/s`],
        ['Dispatch (dependent, bound)', `${formatNumber(peaks.dispatchUs)} µs`],
        ['Dispatch (empty)', `${formatNumber(peaks.emptyDispatchUs)} µs`],
        ['Submit + readback', `${formatNumber(peaks.submitUs)} µs`],
        ['Ridge point', ridge],
      ]),
    );
  }

  /** No WebGPU, or no adapter: what happened and what to do, instead of a blank page. */
  showUnavailable(error: Error): void {
    const insecure = globalThis.isSecureContext === false;
    this.body.replaceChildren(
      h('div', { className: 'warning-loud', attrs: { role: 'note' } }, [
        h('strong', {
          text: error.name === 'NoAdapterError' ? 'No GPU adapter. ' : 'WebGPU is not available. ',
        }),
        error.message,
      ]),
      h('h3', { text: 'How to get WebGPU' }),
      h('ul', { className: 'help-list' }, [
        h('li', {}, [
          h('strong', { text: 'Browser: ' }),
          'a recent Chrome or Edge (113 or newer) on Windows, macOS or ChromeOS; Chrome on Android 121+.',
        ]),
        h('li', {}, [
          h('strong', { text: 'Linux: ' }),
          'enable chrome://flags/#enable-unsafe-webgpu and chrome://flags/#enable-vulkan, then restart Chrome.',
        ]),
        h('li', {}, [
          h('strong', { text: 'Secure context: ' }),
          'open the page over https:// or from http://localhost or 127.0.0.1, not file:// or a LAN address.',
          insecure ? h('em', { text: ' This page is not in a secure context.' }) : null,
        ]),
        h('li', {}, [
          h('strong', { text: 'GPU blocked: ' }),
          'chrome://gpu shows whether WebGPU is hardware accelerated or blocklisted for your driver.',
        ]),
        h('li', {}, [
          h('strong', { text: 'Firefox and Safari: ' }),
          'turn WebGPU on in their settings (Nightly / Technology Preview).',
        ]),
      ]),
    );
  }
}

/** How the page is isolated when that is worth saying: by the service worker, or not at all and why. */
function isolationNote(): HTMLElement | null {
  const state = window.pageIsolation;
  if (!state || (state.isolated && state.by === 'headers')) return null;
  return state.isolated
    ? h('p', {
        className: 'muted small',
        testId: 'isolation-note',
        text: 'Cross-origin isolated by this page’s service worker: the host sends no COOP/COEP headers, so the page added them and reloaded once.',
      })
    : h('p', {
        className: 'warning',
        testId: 'isolation-note',
        attrs: { role: 'note' },
        text: `Not cross-origin isolated: ${state.why}. The browser coarsens performance.now(), so wall-clock times are less precise; the result records it.`,
      });
}
