/**
 * The run's "Beside llama.cpp" card: the headline (this adapter as a multiple of each peer's speed,
 * and the verdict), then per peer its points beside this run's, its clock and its agreement: what
 * the report's section says, as page elements.
 */
import { isSoftwareAdapter } from '../gpu/device.ts';
import {
  agreementDetail,
  agreementScope,
  llamaBenchName,
  nearTiesNote,
  ownPointFor,
  peerClockLine,
  peerName,
  peersHeadline,
} from '../peers/report.ts';
import type { PeerPoint, PeerRecord } from '../peers/schema.ts';
import { adapterLabel } from '../results/export.ts';
import { decodeGen } from '../results/peer-compare.ts';
import type { BenchResult } from '../results/schema.ts';
import { h } from './dom.ts';
import { formatMs } from './format.ts';
import { type Column, sortableTable } from './sortable-table.ts';

const tokPerS = (p: { pass: 'prefill' | 'decode'; tokens: number; medianMs: number }) =>
  p.medianMs > 0 ? ((p.pass === 'prefill' ? p.tokens : 1) * 1000) / p.medianMs : 0;

export class PeersView {
  readonly element = h('section', { className: 'card', testId: 'run-peers', attrs: { hidden: true } });

  show(r: BenchResult | null): void {
    const peers = r?.peers ?? [];
    this.element.hidden = !r || peers.length === 0;
    if (!r || peers.length === 0) {
      this.element.replaceChildren();
      return;
    }
    const adapter = `${adapterLabel(r.env.adapter)}, ${r.env.runtime?.name ?? 'browser'} runtime`;
    const headline = peersHeadline(r.points, peers, adapter, isSoftwareAdapter(r.env.adapter));
    this.element.replaceChildren(
      h('h2', { text: 'Beside llama.cpp (the same GGUF file in both engines)' }),
      ...headline.split('\n\n').map((text) => h('p', { text, testId: 'run-peers-headline' })),
      ...peers.flatMap((peer, i) => this.peer(r, peer, i)),
    );
  }

  private peer(r: BenchResult, peer: PeerRecord, index: number): HTMLElement[] {
    const name = peerName(peer);
    const out: HTMLElement[] = [
      h('h3', {
        text: `${name}: ${peer.version}; ${peer.device}; ${peer.threads} thread${peer.threads === 1 ? '' : 's'}; ${peer.fileType} weights`,
      }),
    ];
    if (peer.note) out.push(h('p', { className: 'muted', text: `Note: ${peer.note}.` }));
    if (peer.error) out.push(h('p', { className: 'error-text', text: `Not measured: ${peer.error}` }));
    if (peer.points.length > 0) {
      const gen = decodeGen(r);
      const mine = (p: PeerPoint) => ownPointFor(r.points, p);
      const columns: Column<PeerPoint>[] = [
        { header: 'test', cell: (p) => llamaBenchName(p, gen), sortValue: (p) => llamaBenchName(p, gen) },
        {
          header: 'this engine ms',
          cell: (p) => {
            const m = mine(p);
            return m ? formatMs(m.medianMs) : '–';
          },
          sortValue: (p) => mine(p)?.medianMs ?? Number.POSITIVE_INFINITY,
          numeric: true,
        },
        {
          header: `${name} ms`,
          cell: (p) => formatMs(p.medianMs),
          sortValue: (p) => p.medianMs,
          numeric: true,
        },
        {
          header: 'speed (this ÷ peer)',
          title:
            "This engine's tokens per second over the peer's on the same test (above 1: this engine faster)",
          cell: (p) => {
            const m = mine(p);
            return m && p.tokPerS > 0 ? `${(tokPerS(m) / p.tokPerS).toPrecision(2)}×` : '–';
          },
          sortValue: (p) => {
            const m = mine(p);
            return m && p.tokPerS > 0 ? tokPerS(m) / p.tokPerS : -1;
          },
          numeric: true,
        },
      ];
      out.push(
        sortableTable(columns, peer.points, { testId: `run-peers-table-${index}` }),
        h('p', { className: 'muted small', text: peerClockLine(peer) }),
      );
    }
    const a = peer.agreement;
    if (a) {
      out.push(
        h('p', {
          testId: `run-peers-agreement-${index}`,
          text:
            `Agreement on ${a.tokens} prompt positions${agreementScope(a, false)}: ` +
            `top-1 ${(a.top1 * 100).toFixed(1)}% (bound ${(a.tolerance.top1 * 100).toFixed(0)}%)${nearTiesNote(a)}, ` +
            `max |Δ log p| ${a.maxAbsLogprobDiff.toExponential(2)} (bound ${a.tolerance.maxAbsLogprobDiff.toExponential(1)}), ` +
            `KL ${a.kl.toExponential(2)} nats: ${a.passed ? 'passed' : 'FAILED'}${agreementDetail(a)}`,
        }),
      );
    }
    return out;
  }
}
