import { describe, expect, it } from 'vitest';
import { parseKvBudget, resolveKvBudget } from '../spec/workloads/serve-kv-budget.ts';
import { applyKvBudget, KV_BUDGET_ERROR } from './kv-budget.ts';

const prompt = Array.from({ length: 100 }, (_, i) => i + 1);

describe('per-request KV budget', () => {
  it('lets a request through when its peak (prompt + output − 1) fits, and counts nothing', () => {
    expect(applyKvBudget(prompt, 21, 10, { tokens: 120, policy: 'reject' })).toEqual({
      ok: true,
      prompt,
      truncatedTokens: 0,
    });
  });

  it('rejects one over the budget with its own error code', () => {
    const r = applyKvBudget(prompt, 22, 10, { tokens: 120, policy: 'reject' });
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.error).toMatch(
        new RegExp(`^${KV_BUDGET_ERROR}: the request would hold 121 KV tokens .* budget of 120`),
      );
  });

  it('truncates the oldest tokens after the head, keeping the newest, to exactly the budget', () => {
    // Room for 80 − 30 + 1 = 51 prompt tokens: the 10-token head and the newest 41.
    const r = applyKvBudget(prompt, 30, 10, { tokens: 80, policy: 'truncate' });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.truncatedTokens).toBe(49);
    expect(r.prompt).toEqual([...prompt.slice(0, 10), ...prompt.slice(59)]);
    expect(r.prompt.length + 30 - 1).toBe(80);
  });

  it('refuses a truncation that would leave nothing after the head', () => {
    // Room for 80 − 71 + 1 = 10 prompt tokens: the head alone.
    const r = applyKvBudget(prompt, 71, 10, { tokens: 80, policy: 'truncate' });
    expect(r.ok).toBe(false);
  });

  it('parses tokens or a share of the pool, and refuses a budget below one page', () => {
    expect(parseKvBudget('256')).toEqual({ tokens: 256, sharePct: null });
    expect(parseKvBudget('25%')).toEqual({ tokens: null, sharePct: 25 });
    expect(parseKvBudget('abc')).toMatch(/^--kv-budget abc: give TOKENS/);
    expect(parseKvBudget('0')).toMatch(/^--kv-budget 0: give TOKENS/);
    expect(parseKvBudget('150%')).toMatch(/in \(0, 100\]%/);
    const r = 'reject' as const;
    expect(resolveKvBudget({ tokens: 256, sharePct: null, policy: r }, 4096, 16)).toBe(256);
    expect(resolveKvBudget({ tokens: null, sharePct: 25, policy: r }, 4096, 16)).toBe(1024);
    expect(resolveKvBudget({ tokens: 8, sharePct: null, policy: r }, 4096, 16)).toMatch(
      /^--kv-budget 8: below one KV page \(16 tokens\)/,
    );
    expect(resolveKvBudget({ tokens: null, sharePct: 0.1, policy: r }, 4096, 16)).toMatch(
      /^--kv-budget 0\.1% \(4 tokens of a 4096-token pool\): below one KV page/,
    );
  });
});
