import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { llamaPath } from '../../test-support/llama-bundle.ts';
import { installAssetReader } from './assets.ts';
import { presetConfig } from './config.ts';
import { parseGgufHeader } from './gguf.ts';
import { PRESET_VOCABS, presetTokenizer } from './preset-vocab.ts';
import { TOKENIZER_GGUF_OPTIONS, tokenizerFromGguf } from './tokenizer/index.ts';

installAssetReader(
  async (path) => new Uint8Array(readFileSync(llamaPath(path.replace(/^vocab\//, 'models/')))),
);

describe("presets' vocabularies", () => {
  it('each laptop preset takes a vocabulary exactly its size (SmolLM2 cut from GPT-2); ci-tiny none', async () => {
    for (const [preset, file] of Object.entries(PRESET_VOCABS)) {
      const { vocabSize } = presetConfig(preset);
      const { tokenizer } = await presetTokenizer(preset, vocabSize);
      expect(tokenizer?.vocabSize, `${preset} (${file})`).toBe(vocabSize);
    }
    expect(await presetTokenizer('ci-tiny', 509)).toEqual({});
    // Reads every laptop preset's vocabulary file: 7.8 s once on a loaded machine, past the 5 s default.
  }, 30_000);

  it("SmolLM2's cut of GPT-2: 49,152 tokens, end-of-text the last, the same ids as GPT-2's on text it can spell", async () => {
    const { tokenizer } = await presetTokenizer('smollm2-135m', 49152);
    if (!tokenizer) throw new Error('no tokenizer');
    expect(tokenizer.eos).toBe(49151);
    const full = tokenizerFromGguf(
      parseGgufHeader(
        new Uint8Array(readFileSync(llamaPath('models/ggml-vocab-gpt-2.gguf'))),
        'gpt-2',
        TOKENIZER_GGUF_OPTIONS,
      ),
      'gpt-2',
    );
    const text = 'The quick brown fox jumps over the lazy dog. Hello, world!';
    const ids = tokenizer.encode(text, { addSpecial: false });
    // GPT-2's own spelling of this text uses none of the 1,105 tokens cut, so the ids are its.
    expect(ids).toEqual(full?.encode(text, { addSpecial: false }));
    expect(Math.max(...ids)).toBeLessThan(49151);
    expect(tokenizer.decode(ids)).toBe(text);
    // Every id of a text full of rare words stays inside the cut vocabulary and spells the text back.
    const rare = 'Zwölf Boxkämpfer jagen Viktor quer über den großen Sylter Deich — 漢字 ✓';
    const rareIds = tokenizer.encode(rare, { addSpecial: false });
    expect(Math.max(...rareIds)).toBeLessThan(49152);
    expect(tokenizer.decode(rareIds)).toBe(rare);
    expect(tokenizer.isEog(49151)).toBe(true);
  });
});
