/**
 * The estimator's answer as the page shows it: headline figures, the memory table (every byte
 * count exact, then in GB and GiB, each labelled), the concurrency and time table, and the
 * estimator's notes. Rows carry `data-testid="cap-out-<key>"` so tests read them by meaning.
 */
import type { CapacityEstimate, CapacityInput, TrafficClass } from '../../capacity/estimate.ts';
import { KV_DTYPE_BYTES, KV_SCALE_BYTES } from '../../capacity/kv.ts';
import type { CapacityModel } from '../../capacity/model.ts';
import { type Child, h } from '../dom.ts';
import { fixed, formatBytes, formatCount, formatExact, formatMs, formatNumber, MISSING } from '../format.ts';

/** The estimator's bottleneck names, in words. */
const BOTTLENECKS: Record<NonNullable<CapacityEstimate['bottleneck']>, string> = {
  'kv-memory': 'KV cache memory',
  'prefill-compute': 'prefill compute',
  'prefill-bandwidth': 'prefill bandwidth',
  'decode-bandwidth': 'decode bandwidth',
  'decode-compute': 'decode compute',
};

const tokens = (n: number) => `${formatExact(n)} token${n === 1 ? '' : 's'}`;
const sessions = (n: number) => `${formatExact(n)} session${n === 1 ? '' : 's'}`;
const percent = (x: number | null) =>
  x === null ? MISSING : Number.isFinite(x) ? `${fixed(x * 100, 1)}%` : '∞ (nothing fits)';

function bytesRow(key: string, label: string, bytes: number, detail = ''): HTMLElement {
  return h('tr', { testId: `cap-out-${key}` }, [
    h('th', { attrs: { scope: 'row' } }, [
      label,
      detail ? h('span', { className: 'row-detail', text: detail }) : null,
    ]),
    h('td', { className: 'num', text: formatExact(bytes) }),
    h('td', { className: 'num', text: formatBytes(bytes, 'decimal') }),
    h('td', { className: 'num', text: formatBytes(bytes, 'binary') }),
  ]);
}

function valueRow(key: string, label: string, value: string, detail = '', alarm = false): HTMLElement {
  return h('tr', { testId: `cap-out-${key}` }, [
    h('th', { attrs: { scope: 'row' } }, [
      label,
      detail ? h('span', { className: 'row-detail', text: detail }) : null,
    ]),
    h('td', { className: alarm ? 'num cap-over' : 'num', text: value }),
  ]);
}

/** A utilisation past 100%: the traffic needs more of that resource than the GPUs have. */
const over = (x: number | null) => x !== null && x > 1;

function table(
  testId: string,
  caption: string,
  head: readonly string[],
  rows: readonly HTMLElement[],
): HTMLElement {
  return h(
    'div',
    { className: 'table-scroll', attrs: { tabindex: 0, role: 'region', 'aria-label': caption } },
    [
      h('table', { className: 'data-table compact cap-table', testId }, [
        h('caption', { text: caption }),
        h('thead', {}, [
          h(
            'tr',
            {},
            head.map((text, i) =>
              h('th', { className: i > 0 ? 'num' : undefined, text, attrs: { scope: 'col' } }),
            ),
          ),
        ]),
        h('tbody', {}, rows),
      ]),
    ],
  );
}

/**
 * The per-token formula with this model's numbers. A scaled type shows its scale inside the
 * bracket, and how many of the bytes are scales, so the int8 figure can be checked by hand.
 */
function perTokenDetail(e: CapacityEstimate, input: CapacityInput, model: CapacityModel): string {
  const dtype = input.kvDtype;
  const vector =
    KV_SCALE_BYTES[dtype] > 0
      ? `(${model.headDim} × ${KV_DTYPE_BYTES[dtype]} B + ${KV_SCALE_BYTES[dtype]} B f32 scale)`
      : `${model.headDim} × ${KV_DTYPE_BYTES[dtype]} B`;
  const scales =
    e.kvScaleBytesPerToken > 0 ? `; ${formatExact(e.kvScaleBytesPerToken)} B of it are scales` : '';
  return `2 (K, V) × ${model.layers} layers × ${model.kvHeads} KV heads × ${vector}, ${dtype}${scales}; ${fixed(e.kvRatioToF32, 3)}× f32`;
}

/** A class's tokens: what it keeps, and of how many when the window cut it. */
function heldText(c: Pick<TrafficClass, 'tokens' | 'heldTokens'>): string {
  return c.heldTokens < c.tokens
    ? `the last ${tokens(c.heldTokens)} of ${formatExact(c.tokens)} (window)`
    : tokens(c.tokens);
}

function memoryTable(e: CapacityEstimate, input: CapacityInput, model: CapacityModel): HTMLElement {
  const rows = [
    bytesRow('kvBytesPerToken', 'KV cache per token', e.kvBytesPerToken, perTokenDetail(e, input, model)),
    bytesRow(
      'kvBytesPerRequest',
      'KV per mean session',
      e.kvBytesPerRequest,
      `${heldText(e.classes[0])}, no page rounding`,
    ),
    bytesRow(
      'kvBytesPerRequestMha',
      'KV per mean session, if MHA',
      e.kvBytesPerRequestMha,
      `all ${model.heads} heads cached; GQA keeps ${model.kvHeads}/${model.heads} = ${Number(e.gqaRatio.toPrecision(4))} of it`,
    ),
    bytesRow(
      'weightsBytes',
      'Weights',
      e.weightsBytes,
      e.model.weightsExact
        ? 'exact, from the file’s tensor table'
        : `${formatCount(e.model.params)} parameters × ${input.weights}`,
    ),
    ...e.classes.map((c) =>
      bytesRow(
        `kv-${c.name}`,
        `KV, ${c.name} sessions`,
        c.kvBytes,
        `${sessions(c.sessions)} × ${heldText(c)}`,
      ),
    ),
    bytesRow('kvBytesTotal', 'KV, all sessions', e.kvBytesTotal),
    bytesRow('totalBytes', 'Total: weights + KV', e.totalBytes),
    bytesRow(
      'usableBytesPerGpu',
      'Usable per GPU',
      e.usableBytesPerGpu,
      `GPU memory × headroom ${input.headroom}`,
    ),
    bytesRow(
      'kvBudgetBytes',
      `KV budget on ${input.gpus} GPU${input.gpus === 1 ? '' : 's'}`,
      e.kvBudgetBytes,
      'usable memory − weights',
    ),
  ];
  return table(
    'cap-memory-table',
    'Memory: exact bytes, then in decimal GB (10⁹ B) and binary GiB (2³⁰ B).',
    ['', 'bytes', 'GB', 'GiB'],
    rows,
  );
}

/**
 * The window's effect: which classes it caps, and the pages each of those holds at its most in
 * the paged cache (about W ÷ page size + 1, however long the session). A contiguous cache reserves
 * its slot up front, so the window frees nothing there.
 */
function windowDetail(e: CapacityEstimate, pageSize: number): string {
  const capped = e.classes.filter((c) => c.heldTokens < c.tokens);
  if (capped.length === 0) return 'no session is longer: every token is kept';
  const each = capped.map(
    (c) =>
      `${c.name} sessions keep ${formatExact(c.heldTokens)} of ${formatExact(c.tokens)}, at most ${formatExact(c.pagesPerSession)} pages`,
  );
  return `${each.join('; ')} (${pageSize}-token pages); contiguous reserve unchanged`;
}

function windowRow(e: CapacityEstimate, input: CapacityInput): HTMLElement {
  return input.window === undefined
    ? valueRow('window', 'Sliding window', 'none', 'full attention: every token is kept')
    : valueRow('window', 'Sliding window', tokens(input.window), windowDetail(e, input.pageSize));
}

function capacityTable(e: CapacityEstimate, input: CapacityInput): HTMLElement {
  const { paged, contiguous } = e.maxConcurrency;
  const time = (ms: number | null) => (ms === null ? MISSING : `${formatMs(ms)} ms`);
  const rate = (x: number | null, unit: string) => (x === null ? MISSING : `${formatNumber(x)} ${unit}`);
  const long = e.classes.find((c) => c.name === 'long');
  const rows = [
    valueRow(
      'gpusNeeded',
      'GPUs needed',
      formatExact(e.gpusNeeded),
      `for ${sessions(input.sessions)}; ${input.gpus} given`,
    ),
    windowRow(e, input),
    valueRow(
      'maxPaged',
      'Max concurrency, paged',
      formatExact(paged),
      `${input.pageSize}-token pages, the traffic mix`,
    ),
    valueRow(
      'maxContiguous',
      'Max concurrency, contiguous',
      formatExact(contiguous),
      `${tokens(e.contiguousReserve)} reserved per session`,
    ),
    valueRow(
      'concurrencyRatio',
      'Paged ÷ contiguous',
      contiguous > 0 ? `${fixed(paged / contiguous, 2)}×` : MISSING,
    ),
    valueRow(
      'expectedBatch',
      'Decode batch',
      formatExact(e.expectedBatch),
      'sessions decoding together: min(sessions, paged)',
    ),
    valueRow('prefillMs', 'Prefill, mean prompt', time(e.prefillMs), tokens(input.input)),
    ...(long
      ? [valueRow('prefillMsLong', 'Prefill, long prompt', time(e.prefillMsLong), tokens(long.input))]
      : []),
    valueRow(
      'tpotMs',
      'Time per output token',
      time(e.tpotMs),
      `one decode step of the batch of ${e.expectedBatch}`,
    ),
    valueRow('throughput', 'Output tokens/s', rate(e.throughputTokensPerSec, 'tok/s'), 'all GPUs'),
    valueRow('requestsPerSec', 'Requests/s', rate(e.requestsPerSec, 'req/s'), 'at full utilisation'),
    valueRow(
      'utilKv',
      'Utilisation: KV memory',
      percent(e.utilization.kvMemory),
      'KV of the sessions ÷ KV budget',
      over(e.utilization.kvMemory),
    ),
    valueRow(
      'utilPrefill',
      'Utilisation: prefill',
      percent(e.utilization.prefill),
      'of the GPUs’ time, at the offered load',
      over(e.utilization.prefill),
    ),
    valueRow(
      'utilDecode',
      'Utilisation: decode',
      percent(e.utilization.decode),
      'of the GPUs’ time, at the offered load',
      over(e.utilization.decode),
    ),
    valueRow(
      'bottleneck',
      'Bottleneck',
      e.bottleneck ? BOTTLENECKS[e.bottleneck] : MISSING,
      'the most used resource',
    ),
  ];
  return table('cap-capacity-table', 'Concurrency and time (times need the roofs).', ['', 'value'], rows);
}

/** Headline figures: what someone sizing a deployment reads first. */
function headline(e: CapacityEstimate, input: CapacityInput): HTMLElement {
  const tile = (key: string, value: string, label: string, warn = false): Child =>
    h('div', { className: `cap-tile${warn ? ' warn' : ''}`, testId: `cap-tile-${key}` }, [
      h('span', { className: 'cap-tile-value', text: value }),
      h('span', { className: 'cap-tile-label', text: label }),
    ]);
  return h('div', { className: 'cap-tiles' }, [
    tile(
      'gpus',
      formatExact(e.gpusNeeded),
      `GPU${e.gpusNeeded === 1 ? '' : 's'} needed`,
      e.gpusNeeded > input.gpus,
    ),
    tile(
      'paged',
      formatExact(e.maxConcurrency.paged),
      'sessions fit, paged',
      e.maxConcurrency.paged < input.sessions,
    ),
    tile(
      'contiguous',
      formatExact(e.maxConcurrency.contiguous),
      'sessions fit, contiguous',
      e.maxConcurrency.contiguous < input.sessions,
    ),
    tile('tpot', e.tpotMs === null ? MISSING : `${formatMs(e.tpotMs)} ms`, 'per output token'),
    tile('bottleneck', e.bottleneck ? BOTTLENECKS[e.bottleneck] : MISSING, 'bottleneck'),
  ]);
}

export function capacityResults(e: CapacityEstimate, input: CapacityInput, model: CapacityModel): Child[] {
  return [
    headline(e, input),
    h('div', { className: 'cap-tables' }, [memoryTable(e, input, model), capacityTable(e, input)]),
    h(
      'ul',
      { className: 'cap-notes', testId: 'cap-notes' },
      e.notes.map((n) => h('li', { text: n })),
    ),
  ];
}
