import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../random.ts';
import type { Drafter } from './drafters.ts';
import { speculativeDecode, type VerifyTarget } from './loop.ts';

/**
 * Speculative sampling end to end through the decoding loop, on a four-token stand-in whose next
 * distribution depends on the last token only: over many seeds, the pairs of tokens the loop emits
 * after the first must follow the target's own sampling distribution (computed here by hand from
 * the logits: exp(l / T) normalized), whatever the drafter proposes. A chi-square test over the 16
 * pairs tells them apart from the drafter's distribution.
 */

const V = 4;
/** Target logits after each last token. */
const TARGET = [
  [2.0, 1.0, 0.5, -1.0],
  [0.0, 1.5, 0.2, 0.9],
  [-0.5, 0.3, 2.2, 0.1],
  [1.1, -0.4, 0.6, 1.3],
];
/** A draft model that disagrees with it. */
const DRAFT = [
  [0.1, 2.5, 0.0, 0.3],
  [1.9, 0.0, 0.4, -0.2],
  [0.6, 0.6, 0.0, 1.7],
  [-1.0, 1.2, 2.0, 0.0],
];
const T = 0.8;

/** Softmax at temperature T, by hand. */
function softmax(row: readonly number[]): number[] {
  const e = row.map((l) => Math.exp(l / T));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / s);
}

class Target implements VerifyTarget {
  kv: number[] = [];
  async verify(_seq: number, tokens: readonly number[], options: { logits?: boolean } = {}) {
    this.kv.push(...tokens);
    const logits = new Float32Array(tokens.flatMap((t) => TARGET[t]));
    return { nextTokens: tokens.map(() => 0), logits: options.logits ? logits : undefined };
  }
  truncate(_seq: number, length: number) {
    this.kv.length = length;
  }
  sequenceLength() {
    return this.kv.length;
  }
}

/** A draft model over DRAFT: draws each token from its own distribution and hands it back. */
const modelLike: Drafter = {
  name: 'draft',
  synthetic: false,
  propose: () => [],
  async proposeSampled(context, k, sampling) {
    const tokens: number[] = [];
    const dists: Float64Array[] = [];
    let last = context[context.length - 1];
    for (let i = 0; i < k; i++) {
      const q = softmax(DRAFT[last]);
      const u = sampling.random();
      let t = 0;
      for (let acc = q[0]; u >= acc && t < V - 1; acc += q[++t]);
      tokens.push(t);
      dists.push(Float64Array.from(q));
      last = t;
    }
    return { tokens, dists };
  },
};

/** A deterministic drafter (as prompt lookup): always the token after the last, with certainty. */
const lookupLike: Drafter = {
  name: 'lookup',
  synthetic: false,
  propose: (context, k) => Array.from({ length: k }, (_, i) => (context[context.length - 1] + 1 + i) % V),
};

/** The emitted pairs (second and third tokens) over `n` seeds. */
async function pairs(drafter: Drafter, k: number, n: number): Promise<number[]> {
  const counts = new Array(V * V).fill(0);
  for (let seed = 0; seed < n; seed++) {
    const target = new Target();
    target.kv = [0];
    const r = await speculativeDecode(target, drafter, {
      seq: 0,
      prompt: [0],
      first: 2,
      firstAt: 0,
      count: 3,
      k,
      now: () => 0,
      sampling: { settings: { temperature: T, topK: 0, topP: 1 }, random: mulberry32(seed + 1) },
    });
    counts[r.tokens[1] * V + r.tokens[2]]++;
  }
  return counts;
}

/** P(a, b) = p(a | 2) · p(b | a) under `rows`. */
function pairDistribution(rows: number[][]): number[] {
  const out: number[] = [];
  const first = softmax(rows[2]);
  for (let a = 0; a < V; a++) {
    const second = softmax(rows[a]);
    for (let b = 0; b < V; b++) out.push(first[a] * second[b]);
  }
  return out;
}

function chiSquare(counts: number[], p: number[], n: number): number {
  return p.reduce((s, pi, i) => s + (counts[i] - n * pi) ** 2 / (n * pi), 0);
}

const N = 20_000;
// Chi-square critical value at p = 0.001 with 15 degrees of freedom.
const CRITICAL = 37.7;

describe('speculative sampling through the loop keeps the target’s distribution', () => {
  for (const [drafter, k] of [
    [modelLike, 2],
    [modelLike, 1],
    [lookupLike, 2],
  ] as const) {
    it(`${drafter.name} at K = ${k}: the pairs emitted follow the target, not the drafter`, async () => {
      const counts = await pairs(drafter, k, N);
      expect(chiSquare(counts, pairDistribution(TARGET), N)).toBeLessThan(CRITICAL);
      expect(chiSquare(counts, pairDistribution(DRAFT), N)).toBeGreaterThan(CRITICAL * 10);
    });
  }
});
