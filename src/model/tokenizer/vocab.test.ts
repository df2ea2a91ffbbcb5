import { describe, expect, it } from 'vitest';
import { gguf, TINY_LLAMA_META } from '../../../test-support/gguf-fixture.ts';
import { InputError, TokenizerError } from '../../errors.ts';
import { type GgufHeader, type GgufValue, parseGgufHeader, readGgufHeader } from '../gguf.ts';
import { type MetaEntry, tokenizerMeta, VOCAB_IDS } from '../gguf-writer.ts';
import { TOKENIZER_GGUF_OPTIONS, tokenizerFromGguf } from './index.ts';

/** A header-only GGUF of these metadata, read as the tokenizer reads it. */
const header = (meta: MetaEntry[]): GgufHeader =>
  parseGgufHeader(gguf(meta, []), 'x.gguf', TOKENIZER_GGUF_OPTIONS);

const load = (meta: MetaEntry[]) => tokenizerFromGguf(header(meta), 'x.gguf');

/** A byte-level BPE vocabulary: the 256 GPT-2 byte characters would be real; a few tokens do here. */
const bpe = (tokens: string[], merges: string[], extra: MetaEntry[] = [], pre = 'gpt-2'): MetaEntry[] => [
  ['tokenizer.ggml.model', { str: 'gpt2' }],
  ['tokenizer.ggml.pre', { str: pre }],
  ['tokenizer.ggml.tokens', { strs: tokens }],
  ['tokenizer.ggml.merges', { strs: merges }],
  ...extra,
];

/** The bytes of a GGUF whose one array claims `length` strings and holds none. */
function claimingArray(key: string, length: bigint): Uint8Array {
  const parts: number[] = [];
  const u32 = (v: number) => {
    parts.push(v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, v >>> 24);
  };
  const u64 = (v: bigint) => {
    u32(Number(v & 0xffffffffn));
    u32(Number(v >> 32n));
  };
  const str = (s: string) => {
    u64(BigInt(s.length));
    for (const c of s) parts.push(c.charCodeAt(0));
  };
  for (const c of 'GGUF') parts.push(c.charCodeAt(0));
  u32(3);
  u64(0n); // tensors
  u64(2n); // metadata
  str('tokenizer.ggml.model');
  u32(8);
  str('llama');
  str(key);
  u32(9); // array
  u32(8); // of strings
  u64(length);
  str('a'); // one element, for a reader that would go on
  return new Uint8Array(parts);
}

/** The message of what `f` throws, checked to be of class `cls`. */
function thrown(f: () => unknown, cls: new (...args: never[]) => Error): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(cls);
    return (e as Error).message;
  }
  throw new Error('nothing was thrown');
}

describe('a hostile tokenizer is refused by name, before anything is built', () => {
  it('refuses a vocabulary of 2^31 tokens from its length alone, reading no element', async () => {
    const bytes = claimingArray('tokenizer.ggml.tokens', 2n ** 31n);
    expect(thrown(() => parseGgufHeader(bytes, 'huge.gguf', TOKENIZER_GGUF_OPTIONS), InputError)).toBe(
      'huge.gguf: metadata tokenizer.ggml.tokens claims 2147483648 elements, more than the 16777216 this reader accepts',
    );
    const reads: number[] = [];
    const read = readGgufHeader(
      async (n) => {
        reads.push(n);
        return bytes.subarray(0, n);
      },
      'huge.gguf',
      1 << 20,
      1 << 30,
      TOKENIZER_GGUF_OPTIONS,
    );
    await expect(read).rejects.toThrow(/claims 2147483648 elements/);
    expect(reads).toEqual([1 << 20]);
    // A header read some other way still may not hand the tokenizer more than 2^24 tokens.
    const h: GgufHeader = {
      version: 3,
      metadata: new Map<string, GgufValue>([
        ['tokenizer.ggml.model', 'llama'],
        ['tokenizer.ggml.tokens', { array: ['a'], length: 2 ** 31 }],
      ]),
      tensors: [],
      dataOffset: 0,
    };
    expect(thrown(() => tokenizerFromGguf(h, 'x.gguf'), TokenizerError)).toMatch(
      /tokenizer\.ggml\.tokens has 2147483648 elements, more than the 16777216 allowed/,
    );
  });

  it('refuses merges that name an unknown token, or are not two tokens', () => {
    const tokens = ['a', 'b', 'ab'];
    expect(() => load(bpe(tokens, ['a b']))).not.toThrow();
    expect(thrown(() => load(bpe(tokens, ['a b', 'a c'])), TokenizerError)).toBe(
      'x.gguf: element 1 of tokenizer.ggml.merges ("a c") names "c", which is not a token',
    );
    expect(thrown(() => load(bpe(tokens, ['ab'])), TokenizerError)).toMatch(
      /element 0 of tokenizer.ggml.merges \("ab"\) is not two tokens/,
    );
  });

  it('names the array and the element of a token that is not UTF-8', () => {
    const bytes = gguf(
      [
        ['tokenizer.ggml.model', { str: 'llama' }],
        ['tokenizer.ggml.tokens', { strs: ['ok', 'zq'] }],
      ],
      [],
    );
    const at = bytes.lastIndexOf(0x7a); // the "z" of "zq", the last string of the file
    bytes.set([0xff, 0xfe], at);
    expect(thrown(() => parseGgufHeader(bytes, 'bad.gguf', TOKENIZER_GGUF_OPTIONS), InputError)).toBe(
      'bad.gguf: element 1 of tokenizer.ggml.tokens is not valid UTF-8',
    );
  });

  it('refuses a pre-tokenizer or a tokenizer nobody implements, and a file without tokens', () => {
    expect(thrown(() => load(bpe(['a'], [], [], 'no-such-pre')), TokenizerError)).toMatch(
      /tokenizer\.ggml\.pre "no-such-pre" is not a pre-tokenizer this engine implements \(it knows default, llama3/,
    );
    expect(thrown(() => load([['tokenizer.ggml.model', { str: 'rwkv' }]]), TokenizerError)).toMatch(
      /tokenizer\.ggml\.model "rwkv" is not a tokenizer this engine implements/,
    );
    expect(thrown(() => load([['tokenizer.ggml.model', { str: 'llama' }]]), TokenizerError)).toBe(
      'x.gguf: it has tokenizer.ggml.model "llama" but no tokenizer.ggml.tokens',
    );
    expect(load(TINY_LLAMA_META)).toBeUndefined();
  });

  it('refuses what llama.cpp refuses or aborts on: repeated tokens, short scores, no merges, arrays left behind', () => {
    const spm = (tokens: string[], extra: MetaEntry[] = []): MetaEntry[] => [
      ['tokenizer.ggml.model', { str: 'llama' }],
      ['tokenizer.ggml.tokens', { strs: tokens }],
      ...extra,
    ];
    expect(thrown(() => load(spm(['a', 'b', 'a'])), TokenizerError)).toMatch(
      /element 2 of tokenizer.ggml.tokens repeats token 0 \("a"\)/,
    );
    expect(
      thrown(() => load(spm(['a', 'b'], [['tokenizer.ggml.scores', { f32s: [0] }]])), TokenizerError),
    ).toMatch(/tokenizer.ggml.scores has 1 elements for 2 tokens/);
    expect(
      thrown(() => load(bpe(['a'], []).filter(([k]) => k !== 'tokenizer.ggml.merges')), TokenizerError),
    ).toMatch(/no tokenizer.ggml.merges/);
    const many = spm(Array.from({ length: 2000 }, (_, i) => `t${i}`));
    const plain = parseGgufHeader(gguf(many, []), 'x.gguf'); // no TOKENIZER_GGUF_OPTIONS
    expect(thrown(() => tokenizerFromGguf(plain, 'x.gguf'), TokenizerError)).toMatch(
      /tokenizer.ggml.tokens \(2000 elements\) was not kept by the GGUF reader: read the header with TOKENIZER_GGUF_OPTIONS/,
    );
  });
});

describe("this project's own SPM vocabulary (gguf-writer's tokenizerMeta)", () => {
  it('loads, spells ASCII with its byte tokens, and refuses what it cannot spell, as llama.cpp does', () => {
    const tok = tokenizerFromGguf(header([...TINY_LLAMA_META, ...tokenizerMeta(300)]), 'tiny.gguf');
    if (!tok) throw new Error('no tokenizer');
    expect([tok.model, tok.pre, tok.vocabSize, tok.bos, tok.eos, tok.addBos]).toEqual([
      'llama',
      'default',
      300,
      VOCAB_IDS.bos,
      VOCAB_IDS.eos,
      false,
    ]);
    const byte = (c: string) => VOCAB_IDS.firstByte + c.charCodeAt(0);
    // "▁" is a token; "▁H" and the like are not, so every other character is its byte token.
    expect(tok.encode('Hi yo')).toEqual([
      VOCAB_IDS.space,
      byte('H'),
      byte('i'),
      VOCAB_IDS.space,
      byte('y'),
      byte('o'),
    ]);
    expect(tok.decode(tok.encode('Hi yo'))).toBe('Hi yo');
    expect(tok.isEog(VOCAB_IDS.eos)).toBe(true);
    expect(tok.isEog(VOCAB_IDS.bos)).toBe(false);
    // No byte token above 0x7F: llama.cpp throws here too.
    expect(thrown(() => tok.encode('é'), TokenizerError)).toMatch(/no byte token <0xC3>/);
  });
});

describe('special ids and attributes, as llama.cpp sets them from the file and from token texts', () => {
  const letters = 'abcdefghijkl'.split('');

  it("give BPE llama.cpp's default BOS and EOS (11) when the file names none, and none past the vocabulary", () => {
    expect(load(bpe(letters, []))).toMatchObject({ bos: 11, eos: 11, addBos: false, addEos: false });
    expect(load(bpe(letters.slice(0, 5), []))).toMatchObject({ bos: undefined, eos: undefined });
    const withIds = load(
      bpe(
        letters,
        [],
        [
          ['tokenizer.ggml.bos_token_id', { u32: 2 }],
          ['tokenizer.ggml.eos_token_id', { u32: 99 }], // outside: the default stays
          ['tokenizer.ggml.add_eos_token', { bool: true }],
        ],
      ),
    );
    expect(withIds).toMatchObject({ bos: 2, eos: 11, addEos: true });
    expect(withIds?.encode('a')).toEqual([0, 11]);
  });

  it('make end-of-turn texts control tokens that end generation, and split out user-defined tokens always', () => {
    const tok = load(
      bpe(
        ['a', 'b', '<|im_end|>', '<x>', 'Ġ'],
        [],
        [['tokenizer.ggml.token_type', { i32s: [1, 1, 1, 4, 1] }]],
      ),
    );
    if (!tok) throw new Error('no tokenizer');
    expect(tok.isEog(2)).toBe(true);
    // <|im_end|> is control now: found only with parseSpecial, rendered only with special.
    expect(tok.encode('a<|im_end|>', { parseSpecial: true })).toEqual([0, 2]);
    expect(tok.decode([0, 2])).toBe('a');
    expect(tok.decode([0, 2], { special: true })).toBe('a<|im_end|>');
    // <x> is user-defined: split out and rendered whatever the switches.
    expect(tok.encode('a<x>b', { parseSpecial: false })).toEqual([0, 3, 1]);
    expect(tok.decode([3, 4])).toBe('<x> ');
  });

  it("keep gpt-oss's <|end|> as text where <|return|> and <|call|> end turns", () => {
    const tok = load(bpe(['<|end|>', '<|return|>', '<|call|>', 'a'], []));
    expect([0, 1, 2].map((id) => tok?.isEog(id))).toEqual([false, true, true]);
    expect(tok?.decode([0])).toBe('<|end|>');
    expect(load(bpe(['<|end|>', 'a'], []))?.isEog(0)).toBe(true);
  });
});
