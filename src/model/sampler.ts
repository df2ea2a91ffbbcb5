/**
 * Sampling a next token from a row of logits, as the engine's generation does when a temperature
 * is set: temperature, then top-k, then top-p (nucleus), then one draw from what is left,
 * renormalized. The draw comes from a seeded generator, so a seed gives the same text on every
 * run and in both runtimes. Temperature 0 is greedy (the argmax, the first on a tie, as the GPU's
 * argmax picks). Pure arithmetic in float64: the unit tests check the distribution it draws from
 * against a hand-computed one with a chi-square test.
 */

export interface SamplingSettings {
  /** Divides the logits; 0: greedy. */
  temperature: number;
  /** Keep the k most likely tokens; 0: all. */
  topK: number;
  /** Keep the smallest set of most likely tokens whose probability reaches p; 1: all. */
  topP: number;
  seed: number;
}

/** What a draw reads of the settings: the seed lives with the caller's generator. */
export type DrawSettings = Pick<SamplingSettings, 'temperature' | 'topK' | 'topP'>;

/** Draws under some settings, with the caller's seeded generator (one uniform number per draw). */
export interface SeededDraws {
  settings: DrawSettings;
  random: () => number;
}

/**
 * The distribution a draw is made from: the kept token ids, most likely first, and their
 * probabilities (summing to 1). Greedy (temperature 0) keeps the argmax alone.
 */
export function samplingDistribution(
  logits: ArrayLike<number>,
  s: DrawSettings,
): { ids: number[]; probs: number[] } {
  const n = logits.length;
  if (s.temperature <= 0) {
    let best = 0;
    for (let i = 1; i < n; i++) if (logits[i] > logits[best]) best = i;
    return { ids: [best], probs: [1] };
  }
  // Ties keep id order, so the kept set does not depend on the sort's stability.
  const ids = Array.from({ length: n }, (_, i) => i).sort((a, b) => logits[b] - logits[a] || a - b);
  const k = s.topK > 0 ? Math.min(s.topK, n) : n;
  const kept = ids.slice(0, k);
  const max = logits[kept[0]];
  const weights = kept.map((i) => Math.exp((logits[i] - max) / s.temperature));
  const total = weights.reduce((a, b) => a + b, 0);
  let probs = weights.map((w) => w / total);
  let cut = probs.length;
  if (s.topP < 1) {
    let sum = 0;
    for (let i = 0; i < probs.length; i++) {
      sum += probs[i];
      if (sum >= s.topP) {
        cut = i + 1;
        break;
      }
    }
  }
  const keptIds = kept.slice(0, cut);
  probs = probs.slice(0, cut);
  const mass = probs.reduce((a, b) => a + b, 0);
  return { ids: keptIds, probs: probs.map((p) => p / mass) };
}

/** A kept-token distribution spread over the whole vocabulary: 0 for every token it cut. */
export function denseOf(d: { ids: number[]; probs: number[] }, vocab: number): Float64Array {
  const out = new Float64Array(vocab);
  for (const [i, id] of d.ids.entries()) out[id] = d.probs[i];
  return out;
}

/** One token drawn from the distribution with `u`, a uniform number in [0, 1). */
export function drawToken(d: { ids: number[]; probs: number[] }, u: number): number {
  let sum = 0;
  for (let i = 0; i < d.ids.length; i++) {
    sum += d.probs[i];
    if (u < sum) return d.ids[i];
  }
  return d.ids[d.ids.length - 1];
}

/** One token drawn from a row of logits under the settings, with `u`, a uniform number in [0, 1). */
export function sampleToken(logits: ArrayLike<number>, s: DrawSettings, u: number): number {
  return drawToken(samplingDistribution(logits, s), u);
}

/** The settings' own check: a message naming the bad one, or null. */
export function samplingProblem(s: SamplingSettings): string | null {
  if (!(s.temperature >= 0 && s.temperature <= 10)) return `temperature ${s.temperature} is not in 0…10`;
  if (!Number.isInteger(s.topK) || s.topK < 0) return `top-k ${s.topK} is not a whole number ≥ 0 (0: all)`;
  if (!(s.topP > 0 && s.topP <= 1)) return `top-p ${s.topP} is not in (0, 1]`;
  if (!Number.isInteger(s.seed) || s.seed < 0 || s.seed > 0xffffffff)
    return `seed ${s.seed} is not a whole number in 0…2^32−1`;
  return null;
}
