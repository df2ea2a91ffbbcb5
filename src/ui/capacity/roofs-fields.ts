/**
 * The roofs of the capacity form: peak TFLOP/s and bandwidth GB/s of one GPU, typed in, or taken
 * from the run this page measured (roofsFromResult, the same reading the CLI's --roofs makes of a
 * result file). The App hands every finished run over as it lands, so a run that completes while
 * the Capacity tab is open is offered at once.
 */
import { type CapacityRoofs, roofsFromResult } from '../../capacity/roofs.ts';
import { adapterLabel } from '../../results/export.ts';
import type { BenchResult } from '../../results/schema.ts';
import { h } from '../dom.ts';
import { formatDate, formatNumber } from '../format.ts';
import { type FormField, formField, numberInput, readNumber } from './field.ts';

/** The roof fields' part of the raw estimator input, and the problems found before the schema sees it. */
export interface RoofsRead {
  raw: { peakTflops?: number; bandwidthGBs?: number; roofsSource?: string };
  issues: Map<'peakTflops' | 'bandwidthGBs', string>;
  /** Using the run's roofs was asked for and is impossible: the estimate must wait. */
  blocked: boolean;
}

type Measured = { roofs: CapacityRoofs } | { error: string };

export class RoofsFields {
  readonly element: HTMLElement;
  readonly peakTflops: FormField<HTMLInputElement>;
  readonly bandwidthGBs: FormField<HTMLInputElement>;
  private readonly useRun: FormField<HTMLInputElement>;
  private readonly source = h('p', { className: 'hint roofs-source', testId: 'cap-roofs-source' });
  private measured: Measured | null = null;
  /** What the user had typed before switching to the run's roofs; restored when switching back. */
  private typed = { peakTflops: '', bandwidthGBs: '' };

  constructor(private readonly onChange: () => void) {
    this.peakTflops = formField('peakTflops', 'Peak TFLOP/s per GPU', numberInput(false, 'optional'));
    this.bandwidthGBs = formField('bandwidthGBs', 'Bandwidth GB/s per GPU', numberInput(false, 'optional'));
    this.useRun = formField(
      'useRoofs',
      'Use the roofs measured by this page’s run',
      h('input', { attrs: { type: 'checkbox', disabled: true } }),
    );
    this.useRun.control.addEventListener('change', () => this.switchSource());
    this.element = h('fieldset', { className: 'cap-group cap-roofs' }, [
      h('legend', { text: 'Roofs (for the time estimates; optional)' }),
      this.useRun.wrapper,
      h('div', { className: 'cap-grid' }, [this.peakTflops.wrapper, this.bandwidthGBs.wrapper]),
      this.source,
    ]);
    this.describeRun(null);
  }

  /** A finished run (or one opened from history) becomes the run whose roofs are offered. */
  setRun(result: BenchResult): void {
    const name = `the run of ${formatDate(result.createdAt)}`;
    try {
      this.measured = { roofs: roofsFromResult(result, name) };
    } catch (e) {
      this.measured = { error: (e as Error).message };
    }
    this.useRun.control.disabled = false;
    this.describeRun(result);
    if (this.useRun.control.checked) this.fillFromRun();
    this.onChange();
  }

  read(): RoofsRead {
    const raw: RoofsRead['raw'] = {};
    const issues: RoofsRead['issues'] = new Map();
    let blocked = false;
    this.useRun.setError(null);
    if (this.useRun.control.checked && this.measured) {
      if ('roofs' in this.measured) {
        Object.assign(raw, this.measured.roofs);
      } else {
        // One message for both boxes: the run lacks its roofs, not one of them.
        this.useRun.setError(this.measured.error);
        blocked = true;
      }
    } else {
      for (const f of [this.peakTflops, this.bandwidthGBs]) {
        const v = readNumber(f.control);
        if (v === 'bad') issues.set(f.name as 'peakTflops' | 'bandwidthGBs', 'Enter a number');
        else if (v !== 'empty') raw[f.name as 'peakTflops' | 'bandwidthGBs'] = v;
      }
      if (raw.peakTflops !== undefined || raw.bandwidthGBs !== undefined) raw.roofsSource = 'typed in';
    }
    this.source.textContent = raw.roofsSource
      ? `Roofs used: ${raw.roofsSource}.`
      : blocked
        ? ''
        : 'No roofs: memory and concurrency only; times and the bottleneck need both roofs.';
    return { raw, issues, blocked };
  }

  private describeRun(result: BenchResult | null): void {
    if (!result || !this.measured) {
      this.useRun.setHint('No finished run in this tab yet: press Run, or open a run from the history.');
      return;
    }
    const where = `Run of ${formatDate(result.createdAt)} on ${adapterLabel(result.env.adapter)}`;
    this.useRun.setHint(
      'roofs' in this.measured
        ? `${where}: ${formatNumber(this.measured.roofs.peakTflops)} TFLOP/s (f32 FMA), ${formatNumber(this.measured.roofs.bandwidthGBs)} GB/s (copy).`
        : `${where}: it has no measured roofs.`,
    );
  }

  private switchSource(): void {
    if (this.useRun.control.checked) {
      this.typed = {
        peakTflops: this.peakTflops.control.value,
        bandwidthGBs: this.bandwidthGBs.control.value,
      };
      this.fillFromRun();
    } else {
      this.peakTflops.control.value = this.typed.peakTflops;
      this.bandwidthGBs.control.value = this.typed.bandwidthGBs;
      for (const f of [this.peakTflops, this.bandwidthGBs]) f.control.readOnly = false;
    }
    this.onChange();
  }

  /** Shows the run's roofs in the boxes, read-only while they come from the run. */
  private fillFromRun(): void {
    const roofs = this.measured && 'roofs' in this.measured ? this.measured.roofs : null;
    this.peakTflops.control.value = roofs ? String(roofs.peakTflops) : '';
    this.bandwidthGBs.control.value = roofs ? String(roofs.bandwidthGBs) : '';
    for (const f of [this.peakTflops, this.bandwidthGBs]) f.control.readOnly = true;
  }
}
