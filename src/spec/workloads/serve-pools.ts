import { SpecError } from '../../errors.ts';

/**
 * `--pools short:SHARE,long:SHARE --route prompt>T`: the KV pool, the batch slots and the per-step
 * token budget split into named pools, each with its own queue and scheduler, on one engine; a
 * rule sends each request to one of them. The single-device form of "long requests on their own
 * cluster". Parsed here, before any model; src/serve/pools.ts runs them.
 */

export interface PoolShare {
  name: string;
  share: number;
}

/** A request goes to the second pool when the rule holds, else to the first. */
export type RouteRule =
  | { field: 'prompt' | 'output'; op: '>' | '<'; value: number }
  | { field: 'class'; op: '='; value: string };

export interface PoolsSetting {
  pools: PoolShare[];
  route: RouteRule;
}

/** How far the shares may sum from 1. */
const SHARE_TOLERANCE = 1e-6;

const NAME = /^[A-Za-z][\w-]{0,30}$/;

/** `name:share,name:share` (two pools, shares summing to 1); a message naming --pools otherwise. */
export function parsePools(text: string): PoolShare[] | string {
  const bad = (why: string) => `--pools ${text}: ${why}`;
  const pools: PoolShare[] = [];
  for (const part of text.split(',')) {
    const [name, share, ...rest] = part.trim().split(':');
    const v = Number(share);
    if (rest.length > 0 || !name || !NAME.test(name) || share === undefined || share.trim() === '')
      return bad(`"${part.trim()}" is not NAME:SHARE`);
    if (!Number.isFinite(v) || v <= 0 || v >= 1)
      return bad(`the share of "${name}" must be in (0, 1), got ${share}`);
    if (pools.some((p) => p.name === name)) return bad(`"${name}" is named twice`);
    pools.push({ name, share: v });
  }
  if (pools.length !== 2)
    return bad(`give two pools (the rule's requests go to the second), got ${pools.length}`);
  const sum = pools.reduce((a, p) => a + p.share, 0);
  if (Math.abs(sum - 1) > SHARE_TOLERANCE) return bad(`the shares sum to ${Number(sum.toFixed(6))}, not 1`);
  return pools;
}

/** `prompt>T`, `prompt<T`, `output>T`, `output<T` or `class=NAME`; a message naming --route otherwise. */
export function parseRoute(text: string): RouteRule | string {
  const m = /^\s*([A-Za-z_]+)\s*([<>=])\s*(\S+)\s*$/.exec(text);
  if (!m) return `--route ${text}: give FIELD>N, FIELD<N or class=NAME (fields: prompt, output, class)`;
  const [, field, op, value] = m;
  if (field === 'class') {
    if (op !== '=') return `--route ${text}: class takes =, as class=rag`;
    return { field, op, value };
  }
  if (field !== 'prompt' && field !== 'output')
    return `--route ${text}: unknown field "${field}" (fields: prompt, output, class)`;
  if (op === '=') return `--route ${text}: ${field} takes > or <, as ${field}>512`;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) return `--route ${text}: ${value} is not a whole number of tokens`;
  return { field, op: op as '>' | '<', value: n };
}

export function describeRoute(r: RouteRule): string {
  return `${r.field} ${r.op} ${r.value}`;
}

export interface PoolCapacity {
  name: string;
  share: number;
  pages: number;
  slots: number;
  tokenBudget: number;
}

/**
 * Each pool's pages, slots and token budget: the first pool its share (rounded, at least 1), the
 * second the rest, so they add up to the whole. Throws where a pool would get nothing.
 */
export function splitCapacity(
  setting: PoolsSetting,
  total: { pages: number; slots: number; tokenBudget: number },
): PoolCapacity[] {
  const [a, b] = setting.pools;
  const part = (n: number, what: string) => {
    const first = Math.round(a.share * n);
    if (first < 1 || n - first < 1)
      throw new SpecError(
        `--pools ${a.name}:${a.share},${b.name}:${b.share}: ${n} ${what} cannot be split so each pool gets one`,
      );
    return [first, n - first];
  };
  const pages = part(total.pages, 'KV pages');
  const slots = part(total.slots, 'batch slots (--max-batch)');
  const budget = part(total.tokenBudget, 'tokens of step budget (--token-budget)');
  return setting.pools.map((p, i) => ({
    name: p.name,
    share: p.share,
    pages: pages[i],
    slots: slots[i],
    tokenBudget: budget[i],
  }));
}
