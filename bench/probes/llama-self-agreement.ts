/**
 * llama.cpp against itself: its next-token distributions on a quantized file (Q8_0, Q4_0, Q4_K) set
 * against its own on the same file's exact values in F32 (train/dequantize_gguf.py), at the
 * positions `bench --peer llama.cpp --prompt-file TEXT --agreement-tokens 256` compares, by the
 * same rule (src/peers/agreement.ts). The two files hold the same weights; what differs is that
 * llama.cpp's CPU path rounds the activations to 8 bits before a quantized weight and not before
 * an F32 one. The top-1 share here is therefore the agreement that exact arithmetic on the file's
 * weights, which this engine computes, can have with llama.cpp: docs/trained-model.md, "Agreement
 * with llama.cpp".
 *
 *   npx tsx train/agreement-files.ts --out DIR
 *   for t in Q8_0 Q4_0 Q4_K; do /usr/bin/python3 train/dequantize_gguf.py DIR/trained-4m-$t.gguf DIR/trained-4m-$t-deq.gguf; done
 *   npx tsx bench/probes/llama-self-agreement.ts DIR [TYPES, default Q8_0,Q4_0,Q4_K]
 *
 * llama.cpp runs in the bench's peer process (dist-node/peer.mjs: `npm run build` first).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadGgufModel } from '../../src/model/gguf-load.ts';
import { AGREEMENT_TOLERANCES, type AgreementFormat, agreement } from '../../src/peers/agreement.ts';
import { agreementPrompt, promptsOf } from '../../src/peers/record.ts';
import { runPeerJob } from '../peers.ts';

const [dir, types] = process.argv.slice(2);
if (!dir) throw new Error('usage: npx tsx bench/probes/llama-self-agreement.ts DIR [TYPES]');
const POSITIONS = 256;

/** llama.cpp's log-probability rows at every position of `ids`, from the bench's own peer process (no timed points). */
async function rows(file: string, ids: number[], vocab: number): Promise<Float64Array[]> {
  const plan = { prefill: [], depths: [], gen: 0, reps: 0, warmup: 0, vocabSize: vocab };
  const job = {
    file,
    backend: 'cpu' as const,
    contextSize: Math.max(64, ids.length + 16),
    plan,
    prompt: ids,
  };
  return (await runPeerJob(job, 300_000)).logprobs;
}

for (const type of (types ?? 'Q8_0,Q4_0,Q4_K').split(',')) {
  const file = join(dir, `trained-4m-${type}.gguf`);
  const exact = join(dir, `trained-4m-${type}-deq.gguf`);
  const bytes = new Uint8Array(readFileSync(file));
  const source = promptsOf(bytes, file);
  if (!('speller' in source)) throw new Error(`${file}: ${source.noText}`);
  // The file's own vocabulary and context, as the bench reads them (preparePeerModel).
  const { vocabSize: vocab, maxSeqLen } = loadGgufModel(bytes, file).weights.config;
  let same = 0;
  let all = 0;
  for (const text of ['prose', 'code', 'json']) {
    const prompt = agreementPrompt(maxSeqLen, vocab, source, {
      text: readFileSync(join(dir, `${text}.txt`), 'utf8'),
      positions: POSITIONS,
    });
    const quantized = (await rows(file, prompt.ids, vocab)).slice(prompt.from);
    const f32 = (await rows(exact, prompt.ids, vocab)).slice(prompt.from);
    // "ours" is llama.cpp on the exact values, in the place this engine takes in the bench's check.
    const a = agreement(f32, quantized, AGREEMENT_TOLERANCES[type.toLowerCase() as AgreementFormat]);
    const flips = a.top1Mismatches.length;
    same += a.tokens - flips;
    all += a.tokens;
    console.log(
      `${type} ${text}: top-1 ${(a.top1 * 100).toFixed(2)}% (${a.tokens - flips}/${a.tokens}); ` +
        `near-ties ${a.nearTies}; flips at ${JSON.stringify(a.top1Mismatches)} gaps ${a.top1Gaps.map((g) => g.toExponential(1)).join(', ')}; ` +
        `max |Δ log p| ${a.maxAbsLogprobDiff.toExponential(2)}`,
    );
  }
  console.log(`${type} pooled: ${same}/${all} = ${((same / all) * 100).toFixed(2)}%`);
}
