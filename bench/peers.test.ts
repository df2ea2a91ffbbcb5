import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseGgufHeader } from '../src/model/gguf.ts';
import { peerPlan } from '../src/peers/record.ts';
import { specFromOptions } from '../src/spec/options.ts';
import { makeVocabFixtures, vocabFixturePath } from '../test-support/vocab-fixture.ts';
import { parsePeers, preparePeerModel } from './peers.ts';

const tinySpec = (weights: 'f32' | 'int4') =>
  specFromOptions(
    { kind: 'preset', preset: 'ci-tiny', seed: 0 },
    { prefill: [16, 64], depths: [0, 32], gen: 5, reps: 4, weights: [weights] },
  );

describe('--peer', () => {
  it('reads engines and backends, each engine’s default first, and names what it does not know', () => {
    expect(parsePeers('llama.cpp')).toEqual([{ engine: 'llama.cpp', backend: 'cpu' }]);
    expect(parsePeers('llama.cpp:gpu, llama.cpp:auto,llama.cpp:gpu')).toEqual([
      { engine: 'llama.cpp', backend: 'gpu' },
      { engine: 'llama.cpp', backend: 'auto' },
    ]);
    expect(() => parsePeers('vllm')).toThrow(/unknown peer "vllm"/);
    expect(() => parsePeers('llama.cpp:tpu')).toThrow(/backend must be cpu, gpu, auto, got "tpu"/);
    expect(parsePeers('llama.cpp,wllama,wllama:cpu')).toEqual([
      { engine: 'llama.cpp', backend: 'cpu' },
      { engine: 'wllama', backend: 'webgpu' },
      { engine: 'wllama', backend: 'cpu' },
    ]);
    expect(() => parsePeers('wllama:gpu')).toThrow(/--peer wllama: backend must be webgpu, cpu, got "gpu"/);
    expect(() => parsePeers('vllm')).toThrow(/known: llama\.cpp\[:cpu\|gpu\|auto\], wllama\[:webgpu\|cpu\]/);
    expect(() => parsePeers(',')).toThrow(/at least one peer/);
  });

  it('gives the peer the run’s own lengths, depths, generation length and repetitions', () => {
    const plan = peerPlan(tinySpec('f32'), 509);
    expect(plan).toMatchObject({ prefill: [16, 64], depths: [0, 32], gen: 5, reps: 4, vocabSize: 509 });
  });
});

describe('the peer’s model file', () => {
  it('is a GGUF file with the tokenizer block llama.cpp needs', () => {
    const dir = mkdtempSync(join(tmpdir(), 'peer-model-'));
    const model = preparePeerModel(tinySpec('f32'), undefined, dir);
    if (!('file' in model)) throw new Error(model.error);
    expect(model.fileType).toBe('F32');
    const h = parseGgufHeader(new Uint8Array(readFileSync(model.file)));
    expect(h.metadata.get('tokenizer.ggml.model')).toBe('llama');
    expect(h.metadata.get('tokenizer.ggml.bos_token_id')).toBe(1);
    expect(h.metadata.get('tokenizer.ggml.eos_token_id')).toBe(2);
    // 509 tokens: <unk>, <s>, </s>, ▁, the 128 ASCII byte tokens, and 377 text tokens.
    expect(h.metadata.get('tokenizer.ggml.tokens')).toMatchObject({ length: 509 });
    expect(h.metadata.get('tokenizer.ggml.scores')).toMatchObject({ length: 509 });
    expect(h.metadata.get('tokenizer.ggml.token_type')).toMatchObject({ length: 509 });
    expect(h.tensors.filter((t) => t.name.startsWith('blk.0.')).length).toBe(9);
  });

  it('carries its tokenizer, which spells the prompts wllama is given as text', { timeout: 60_000 }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'peer-model-'));
    // A preset's file: the writer's vocabulary, "▁" before the first letter.
    const written = preparePeerModel(tinySpec('f32'), undefined, dir);
    if (!('file' in written)) throw new Error(written.error);
    if (!('speller' in written.prompts)) throw new Error(written.prompts.noText);
    expect(written.prompts.speller.shortest).toBe(2);
    // A --model GGUF file with GPT-2's vocabulary, used as it is: one word is one token.
    makeVocabFixtures(dir, 'gpt-2', []);
    const f32 = vocabFixturePath(dir, 'gpt-2', 'F32');
    const given = preparePeerModel(tinySpec('f32'), f32, dir);
    if (!('file' in given)) throw new Error(given.error);
    expect(given.file).toBe(f32);
    if (!('speller' in given.prompts)) throw new Error(given.prompts.noText);
    expect(given.prompts.speller.shortest).toBe(1);
    expect(given.prompts.speller.unsampledIds()).toHaveLength(352);
  });

  it('is refused, with the reason, where llama.cpp cannot hold the format (Q4_0 needs K in blocks of 32)', () => {
    // ci-tiny's FFN is 344 wide: the down projection's rows are not whole Q4_0 blocks.
    const model = preparePeerModel(tinySpec('int4'), undefined, mkdtempSync(join(tmpdir(), 'peer-model-')));
    expect('error' in model && model.error).toMatch(/llama\.cpp cannot take this model in int4: .*32/);
  });
});
