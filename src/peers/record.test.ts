import { describe, expect, it } from 'vitest';
import { VOCAB_IDS } from '../model/gguf-writer.ts';
import { agreementPrompt, agreementText, comparedRows, peerContextSize } from './record.ts';

describe('the agreement prompt', () => {
  it('is "▁" and 32 letters, 33 ids, or shorter to fit a short model', () => {
    expect(agreementText(1024)).toMatch(/^[a-z]{32}$/);
    const ids = agreementPrompt(1024);
    expect(ids).toHaveLength(33);
    expect(ids[0]).toBe(VOCAB_IDS.space);
    // 'a' is byte 0x61: the byte tokens start at VOCAB_IDS.firstByte.
    expect(
      ids.slice(1).every((id) => id >= VOCAB_IDS.firstByte + 0x61 && id <= VOCAB_IDS.firstByte + 0x7a),
    ).toBe(true);
    // A 16-token model: 15 letters after "▁", 16 ids, all inside its length.
    expect(agreementPrompt(16)).toHaveLength(16);
  });

  it('compares every position after a letter, not the one after "▁" alone', () => {
    expect(comparedRows(['▁', 'a', 'b'])).toEqual(['a', 'b']);
  });
});

describe('the peer’s context', () => {
  const plan = { prefill: [16, 64], depths: [0, 32], gen: 5, reps: 3, warmup: 1, vocabSize: 509 };
  it('holds the longest prefill, the deepest decode with its tokens and the prompt, plus 16', () => {
    // max(16, 64, max(2, 0) + 5, 32 + 5, 33) = 64, + 16 = 80.
    expect(peerContextSize(plan, 1024, 33)).toBe(80);
    // At least 64, at most the model's length.
    expect(peerContextSize({ ...plan, prefill: [8], depths: [] }, 1024, 9)).toBe(64);
    expect(peerContextSize(plan, 72, 33)).toBe(72);
  });
});
