import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { llamaPath } from '../../../test-support/llama-bundle.ts';
import { PRE_TOKENIZERS } from './pre.ts';
import { HAND_WRITTEN } from './pretokenize.ts';

/**
 * The pre-tokenizer table against llama.cpp's src/llama-vocab.cpp in the release bundle: the
 * regexes of each pre type (llm_tokenizer_bpe's constructor) and the name → type mapping with its
 * flags (llama_vocab::impl::load), read from the C++ source.
 */

const source = () => readFileSync(llamaPath('src/llama-vocab.cpp'), 'utf8');

/** A C++ string literal's text: its escapes undone. */
const cppString = (s: string) =>
  s.replace(/\\(.)/g, (_, c: string) => ({ n: '\n', r: '\r', t: '\t' })[c as 'n' | 'r' | 't'] ?? c);

/** Each pre type's regexes, and whether it spells bytes as GPT-2 characters. */
function regexSets(src: string): Map<string, { regexes: string[]; byteEncode: boolean }> {
  const start = src.indexOf('llm_tokenizer_bpe(const llama_vocab & vocab) {');
  const ctor = src.slice(start, src.indexOf('std::vector<std::string> regex_exprs;', start));
  const sets = new Map<string, { regexes: string[]; byteEncode: boolean }>();
  for (const block of ctor.split(/\bbreak;/)) {
    const types = [...block.matchAll(/case LLAMA_VOCAB_PRE_TYPE_(\w+):/g)].map((m) => m[1]);
    if (/\bdefault:/.test(block)) types.push('DEFAULT');
    const at = block.indexOf('regex_exprs = {');
    if (at < 0) continue;
    const regexes = block
      .slice(at, block.indexOf('};', at))
      .split('\n')
      .map((line) => /^\s*"((?:[^"\\]|\\.)*)"/.exec(line)?.[1])
      .filter((r): r is string => r !== undefined)
      .map(cppString);
    for (const type of types) sets.set(type, { regexes, byteEncode: !block.includes('byte_encode = false') });
  }
  return sets;
}

interface NamedPre {
  type: string;
  cleanSpaces: boolean;
  ignoreMerges: boolean;
  addBos: boolean;
  noDefaultBos: boolean;
  /** Statements of the branch this suite does not model (they must not matter for BPE). */
  other: string[];
}

/** Each `tokenizer_pre == "…"` name: its type and the flags its branch sets. */
function preNames(src: string): Map<string, NamedPre> {
  const start = src.indexOf('if (tokenizer_pre.empty())');
  const load = src.slice(start, src.indexOf('unknown pre-tokenizer type', start));
  const names = new Map<string, NamedPre>();
  for (const branch of load.split(/\} else if \(/)) {
    const type = /pre_type = LLAMA_VOCAB_PRE_TYPE_(\w+);/.exec(branch)?.[1];
    if (!type) continue;
    const statements = [...branch.matchAll(/^\s*([\w.]+) = (\w+);/gm)]
      .map((m) => `${m[1]} = ${m[2]}`)
      .filter((s) => !s.startsWith('pre_type'));
    const pre: NamedPre = {
      type,
      cleanSpaces: !statements.includes('clean_spaces = false'),
      ignoreMerges: statements.includes('ignore_merges = true'),
      addBos: statements.includes('add_bos = true'),
      noDefaultBos: statements.includes('special_bos_id = LLAMA_TOKEN_NULL'),
      other: statements.filter(
        (s) =>
          ![
            'clean_spaces = false',
            'ignore_merges = true',
            'add_bos = true',
            'special_bos_id = LLAMA_TOKEN_NULL',
          ].includes(s),
      ),
    };
    for (const m of branch.matchAll(/tokenizer_pre == "([^"]+)"/g)) names.set(m[1], pre);
  }
  return names;
}

/** The regexes llama.cpp's unicode.cpp splits by hand (unicode_regex_split_custom). */
function handWritten(): Set<string> {
  const src = readFileSync(llamaPath('src/unicode.cpp'), 'utf8');
  const start = src.indexOf('static std::vector<size_t> unicode_regex_split_custom(');
  const body = src.slice(start, src.indexOf('return bpe_offsets;', start));
  return new Set([...body.matchAll(/regex_expr == "((?:[^"\\]|\\.)*)"/g)].map((m) => cppString(m[1])));
}

describe("the pre-tokenizers, against llama.cpp's llama-vocab.cpp", () => {
  const src = source();
  const sets = regexSets(src);
  const names = preNames(src);

  it('read the C++ source at all (the parse finds the types and names it must)', () => {
    expect(sets.get('LLAMA3')?.regexes).toHaveLength(1);
    expect(sets.get('DEFAULT')?.regexes).toHaveLength(4);
    expect(names.get('llama-bpe')).toMatchObject({ type: 'LLAMA3', ignoreMerges: true, addBos: true });
    expect(names.size).toBeGreaterThan(80);
  });

  it('has each name with its type, regexes and flags as llama.cpp has them', () => {
    for (const [name, pre] of PRE_TOKENIZERS) {
      const theirs = names.get(name);
      expect(theirs, name).toBeDefined();
      expect({ name, ...pre, regexes: undefined }).toEqual({
        name,
        type: theirs?.type,
        regexes: undefined,
        cleanSpaces: theirs?.cleanSpaces,
        ignoreMerges: theirs?.ignoreMerges,
        addBos: theirs?.addBos,
        noDefaultBos: theirs?.noDefaultBos,
      });
      // The other flags a branch sets (add_sep, …) play no part in BPE tokenizing or detokenizing.
      expect(
        theirs?.other.filter((s) => s !== 'add_sep = true'),
        name,
      ).toEqual([]);
      expect(sets.get(pre.type), name).toEqual({ regexes: [...pre.regexes], byteEncode: true });
    }
  });

  it('split by hand exactly the regexes llama.cpp splits by hand', () => {
    const theirs = handWritten();
    expect(theirs.size).toBeGreaterThan(4);
    const used = new Set([...PRE_TOKENIZERS.values()].flatMap((p) => p.regexes));
    expect([...used].filter((r) => theirs.has(r)).sort()).toEqual([...HAND_WRITTEN].sort());
  });

  it('has every name whose regexes llama.cpp shares with a type here', () => {
    const supported = new Set([...PRE_TOKENIZERS.values()].map((p) => JSON.stringify(p.regexes)));
    const missing = [...names]
      .filter(([, pre]) => {
        const set = sets.get(pre.type);
        return set?.byteEncode && supported.has(JSON.stringify(set.regexes));
      })
      .map(([name]) => name)
      .filter((name) => !PRE_TOKENIZERS.has(name));
    expect(missing).toEqual([]);
    // The ones the brief names, and the files of the bundle.
    for (const name of [
      'default',
      'llama-bpe',
      'llama3',
      'qwen2',
      'smollm',
      'gpt-2',
      'starcoder',
      'refact',
    ]) {
      expect(PRE_TOKENIZERS.has(name), name).toBe(true);
    }
  });
});
