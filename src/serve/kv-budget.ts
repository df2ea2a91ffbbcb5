/**
 * A per-request KV budget: the most KV a single request may hold, in tokens (its prompt and every
 * generated token but the last, as the scheduler counts its peak). One long request then cannot
 * take the pool from the short ones queued behind it. At the cap the server either refuses the
 * request at admission (`reject`; this project's server answers HTTP 400 with the code
 * `kv_budget_exceeded`) or drops the prompt's oldest tokens until it fits (`truncate`), counting
 * what it dropped: the newest tokens are kept, as vLLM's `truncate_prompt_tokens` keeps them (the
 * load test and this project's server both cut from the very start, so a request cut in-process and
 * over HTTP runs the same tokens; a caller may keep a head, `keepHead`). A cut moves every later
 * token, so the prefix cache no longer matches what the request shared with others.
 */

export type KvBudgetPolicy = 'reject' | 'truncate';

export interface KvBudget {
  tokens: number;
  policy: KvBudgetPolicy;
}

/** The error code of a request refused by the budget, first word of its error text. */
export const KV_BUDGET_ERROR = 'kv_budget_exceeded';

export type Budgeted =
  | { ok: true; prompt: readonly number[]; truncatedTokens: number }
  | { ok: false; error: string };

/** The KV a request holds at its largest: its prompt and all but its last generated token. */
export function peakKvTokens(promptTokens: number, outputTokens: number): number {
  return promptTokens + outputTokens - 1;
}

/**
 * The prompt a request runs with under `budget`: as given when it fits; else refused, or cut to its
 * first `keepHead` tokens and its newest ones. A cut that would leave no token of its own after the
 * head is refused as well.
 */
export function applyKvBudget(
  prompt: readonly number[],
  outputTokens: number,
  keepHead: number,
  budget: KvBudget,
): Budgeted {
  const peak = peakKvTokens(prompt.length, outputTokens);
  if (peak <= budget.tokens) return { ok: true, prompt, truncatedTokens: 0 };
  const over = `${KV_BUDGET_ERROR}: the request would hold ${peak} KV tokens (${prompt.length} prompt + ${outputTokens} to generate, less the last), over the per-request budget of ${budget.tokens}`;
  if (budget.policy === 'reject') return { ok: false, error: over };
  const room = budget.tokens - outputTokens + 1;
  const head = Math.min(keepHead, prompt.length - 1);
  if (room < head + 1)
    return { ok: false, error: `${over}, and no cut of the prompt after its ${head}-token head makes room` };
  const tail = room - head;
  return {
    ok: true,
    prompt: [...prompt.slice(0, head), ...prompt.slice(prompt.length - tail)],
    truncatedTokens: prompt.length - room,
  };
}
