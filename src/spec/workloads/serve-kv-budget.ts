/**
 * `--kv-budget TOKENS|P%` and `--kv-budget-policy reject|truncate` (src/serve/kv-budget.ts does the
 * capping): parsed here, before any model, and resolved against the KV pool once its size is known.
 */

export interface KvBudgetSetting {
  /** A budget in tokens, or (null) a share of the pool. */
  tokens: number | null;
  /** Percent of the KV pool, when `tokens` is null. */
  sharePct: number | null;
  policy: 'reject' | 'truncate';
}

/** `--kv-budget` as written: TOKENS or P%; a message naming the flag when it is neither. */
export function parseKvBudget(text: string): { tokens: number | null; sharePct: number | null } | string {
  const share = /^(\d+(?:\.\d+)?)%$/.exec(text.trim());
  if (share) {
    const pct = Number(share[1]);
    if (!(pct > 0 && pct <= 100)) return `--kv-budget ${text}: a share of the pool is in (0, 100]%`;
    return { tokens: null, sharePct: pct };
  }
  const tokens = Number(text);
  if (!Number.isInteger(tokens) || tokens < 1)
    return `--kv-budget ${text}: give TOKENS (a whole number) or a share of the KV pool as P%`;
  return { tokens, sharePct: null };
}

/** The budget in tokens for a pool of `poolTokens`, or a message naming the flag when it is below one page. */
export function resolveKvBudget(b: KvBudgetSetting, poolTokens: number, pageSize: number): number | string {
  const tokens = b.tokens ?? Math.floor(((b.sharePct ?? 100) / 100) * poolTokens);
  if (tokens < pageSize) {
    const given =
      b.tokens !== null ? `${b.tokens}` : `${b.sharePct}% (${tokens} tokens of a ${poolTokens}-token pool)`;
    return `--kv-budget ${given}: below one KV page (${pageSize} tokens), so no request could run`;
  }
  return tokens;
}
