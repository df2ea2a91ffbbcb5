import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { llamaPath } from '../../../test-support/llama-bundle.ts';
import { TokenizerError } from '../../errors.ts';
import { parseGgufHeader } from '../gguf.ts';
import { TOKENIZER_GGUF_OPTIONS, type Tokenizer, tokenizerFromGguf } from './index.ts';

/**
 * llama.cpp's own tokenizer conformance suite, run against this tokenizer: every
 * `models/ggml-vocab-*.gguf` of the llama.cpp release inside node-llama-cpp, with the `.inp`/`.out`
 * vectors beside it, read as tests/test-tokenizer-0.cpp reads them (cases separated by
 * "\n__ggml_vocab_test__\n", one line of ids per case, a map from input to ids so a repeated input
 * counts once) and tokenized as it tokenizes them (add_special = false, parse_special = false).
 * A vocabulary this engine does not implement must be refused by name; one it does must match
 * every case. The table printed at the end is the one in docs/tokenizer.md.
 */

const SEPARATOR = '\n__ggml_vocab_test__\n';

/** The vocabularies refused, and the tokenizer.ggml.model their refusal must name. */
const REFUSED: Record<string, string> = {
  'bert-bge': 'bert',
  'gemma-4': 'gemma4',
  'nomic-bert-moe': 't5',
};

/**
 * The vocabularies llama.cpp ships without vectors: a few cases each, tokenized by llama.cpp's
 * `llama_tokenize` from this same release (raw: add_special and parse_special false; special:
 * both true).
 */
const NO_VECTORS: Record<string, [text: string, raw: number[], special: number[]][]> = {
  aquila: [
    ['Hello world', [22299, 3117], [22299, 3117]],
    [' Hello World!', [51980, 7067, 1], [51980, 7067, 1]],
    [
      '🦙.cpp 3333 33333',
      [28089, 100, 248, 14, 25316, 221, 27504, 19, 221, 27504, 2552],
      [28089, 100, 248, 14, 25316, 221, 27504, 19, 221, 27504, 2552],
    ],
    [
      'нещо на Български',
      [61237, 22105, 2239, 18471, 73075, 30861, 4674, 16619, 20993, 21273, 2862],
      [61237, 22105, 2239, 18471, 73075, 30861, 4674, 16619, 20993, 21273, 2862],
    ],
    ['  \n\t x  ', [257, 2123, 2599, 257], [257, 2123, 2599, 257]],
    ['ied 4 ½ months', [1447, 221, 20, 221, 21696, 5123], [1447, 221, 20, 221, 21696, 5123]],
  ],
  baichuan: [
    ['Hello world', [24568, 1275], [1, 24568, 1275]],
    [' Hello World!', [31106, 24568, 2025, 80], [1, 31106, 24568, 2025, 80]],
    [
      '🦙.cpp 3333 33333',
      [31106, 56940, 79, 31118, 783, 31106, 55, 55, 55, 55, 31106, 55, 55, 55, 55, 55],
      [1, 31106, 56940, 79, 31118, 783, 31106, 55, 55, 55, 55, 31106, 55, 55, 55, 55, 55],
    ],
    [
      'нещо на Български',
      [16388, 33025, 31272, 5788, 14423, 33538, 31531, 31861, 14631, 12800],
      [1, 16388, 33025, 31272, 5788, 14423, 33538, 31531, 31861, 14631, 12800],
    ],
    [
      '  \n\t x  ',
      [31106, 31106, 31106, 5, 6, 2759, 31106, 31106],
      [1, 31106, 31106, 31106, 5, 6, 2759, 31106, 31106],
    ],
    [
      'ied 4 ½ months',
      [31106, 1308, 31106, 56, 31106, 587, 582, 2413],
      [1, 31106, 1308, 31106, 56, 31106, 587, 582, 2413],
    ],
  ],
  'gpt-neox': [
    ['Hello world', [12092, 1533], [12092, 1533]],
    [' Hello World!', [24387, 3645, 2], [24387, 3645, 2]],
    [
      '🦙.cpp 3333 33333',
      [14931, 101, 236, 15, 14161, 209, 20084, 20, 209, 20084, 1610],
      [14931, 101, 236, 15, 14161, 209, 20084, 20, 209, 20084, 1610],
    ],
    [
      'нещо на Български',
      [32520, 11514, 1068, 8713, 38177, 13396, 3415, 9925, 12559, 10453, 1389],
      [32520, 11514, 1068, 8713, 38177, 13396, 3415, 9925, 12559, 10453, 1389],
    ],
    ['  \n\t x  ', [50276, 996, 1269, 50276], [50276, 996, 1269, 50276]],
    ['ied 4 ½ months', [728, 209, 21, 209, 8313, 2607], [728, 209, 21, 209, 8313, 2607]],
  ],
};

/** The vocabulary files in the bundle, by the name between "ggml-vocab-" and ".gguf". */
function vocabNames(): string[] {
  return readdirSync(llamaPath('models'))
    .map((f) => /^ggml-vocab-(.+)\.gguf$/.exec(f)?.[1])
    .filter((n): n is string => n !== undefined)
    .sort();
}

function load(name: string): Tokenizer | undefined {
  const file = llamaPath(`models/ggml-vocab-${name}.gguf`);
  const buf = readFileSync(file);
  const header = parseGgufHeader(
    new Uint8Array(buf.buffer, buf.byteOffset, buf.length),
    file,
    TOKENIZER_GGUF_OPTIONS,
  );
  return tokenizerFromGguf(header, `ggml-vocab-${name}.gguf`);
}

/** test-tokenizer-0's read_tests: input → ids, in a map, so the last of repeated inputs counts. */
function readVectors(name: string): Map<string, number[]> {
  const base = llamaPath(`models/ggml-vocab-${name}.gguf`);
  const raw = readFileSync(`${base}.inp`, 'utf8');
  const lines = readFileSync(`${base}.out`, 'utf8').split('\n');
  if (lines.at(-1) === '') lines.pop();
  const inputs: string[] = [];
  for (let pos = 0; pos < raw.length; ) {
    const next = raw.indexOf(SEPARATOR, pos);
    inputs.push(raw.slice(pos, next < 0 ? raw.length : next));
    pos = next < 0 ? raw.length : next + SEPARATOR.length;
  }
  expect(inputs.length, `${name}: .inp and .out hold as many cases`).toBe(lines.length);
  const cases = new Map<string, number[]>();
  inputs.forEach((text, i) => {
    const ids = lines[i].trim();
    cases.set(text, ids === '' ? [] : ids.split(' ').map(Number));
  });
  return cases;
}

const counts: { name: string; model: string; pre: string; passed: number; total: number; note: string }[] =
  [];

afterAll(() => {
  const rows = counts
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((c) => `| ${c.name} | ${c.model} | ${c.pre} | ${c.passed}/${c.total} | ${c.note} |`);
  console.log(
    ['| vocabulary | model | pre | cases | vectors |', '|---|---|---|---|---|', ...rows].join('\n'),
  );
});

describe("llama.cpp's tokenizer conformance vectors", () => {
  const names = vocabNames();

  it('are in the bundle, with every vocabulary this suite knows', () => {
    for (const name of [
      ...Object.keys(REFUSED),
      ...Object.keys(NO_VECTORS),
      'llama-spm',
      'llama-bpe',
      'qwen2',
      'gpt-2',
      'phi-3',
    ]) {
      expect(names).toContain(name);
    }
  });

  for (const name of names) {
    if (name in REFUSED) {
      it(`refuses ${name} by name`, { timeout: 60_000 }, () => {
        let error: unknown;
        try {
          load(name);
        } catch (e) {
          error = e;
        }
        expect(error).toBeInstanceOf(TokenizerError);
        expect((error as Error).message).toContain(
          `tokenizer.ggml.model "${REFUSED[name]}" is not a tokenizer`,
        );
        counts.push({
          name,
          model: REFUSED[name],
          pre: '',
          passed: 0,
          total: 0,
          note: 'refused: not implemented',
        });
      });
      continue;
    }
    it(`matches llama.cpp on ${name}`, { timeout: 60_000 }, () => {
      const tok = load(name);
      if (!tok) throw new Error(`${name} has no tokenizer`);
      const hasVectors = existsSync(`${llamaPath(`models/ggml-vocab-${name}.gguf`)}.inp`);
      expect(hasVectors, `${name} has vectors, or cases of its own here`).toBe(!(name in NO_VECTORS));
      const failures: string[] = [];
      let total = 0;
      const check = (text: string, want: number[], addSpecial: boolean, parseSpecial: boolean) => {
        total++;
        const got = tok.encode(text, { addSpecial, parseSpecial });
        if (got.join(' ') !== want.join(' ')) {
          failures.push(`${JSON.stringify(text)}: got [${got.join(' ')}], llama.cpp [${want.join(' ')}]`);
        }
      };
      if (hasVectors) for (const [text, ids] of readVectors(name)) check(text, ids, false, false);
      for (const [text, raw, special] of NO_VECTORS[name] ?? []) {
        check(text, raw, false, false);
        check(text, special, true, true);
      }
      counts.push({
        name,
        model: tok.model,
        pre: tok.pre,
        passed: total - failures.length,
        total,
        note: hasVectors ? 'llama.cpp .inp/.out' : 'cases from llama_tokenize, here',
      });
      expect(failures).toEqual([]);
      expect(total).toBeGreaterThan(0);
    });
  }
});
