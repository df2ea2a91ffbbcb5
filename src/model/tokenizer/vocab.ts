import { TokenizerError } from '../../errors.ts';
import type { GgufHeader, GgufScalar } from '../gguf.ts';
import { PRE_TOKENIZERS, type PreTokenizer } from './pre.ts';
import { utf8Length } from './unicode.ts';

/**
 * A GGUF file's vocabulary as llama.cpp loads it (llama_vocab::impl::load in its
 * src/llama-vocab.cpp): the tokens, their scores and attributes, the merges, the special ids with
 * llama.cpp's defaults and overrides, the end-of-generation set, and the special tokens that
 * tokenizing splits out first. Every key is checked before the tokenizer exists (the token map is
 * built first, as checking the merges needs it), and every problem is a TokenizerError that names
 * the key (and the element) at fault.
 */

/** The most tokens a vocabulary may have; the GGUF reader refuses a longer claim before reading it. */
export const MAX_VOCAB = 1 << 24;

/** llama.cpp's token attributes (llama_token_attr), the ones tokenizing and detokenizing read. */
export const ATTR = {
  unknown: 1 << 0,
  unused: 1 << 1,
  normal: 1 << 2,
  control: 1 << 3,
  userDefined: 1 << 4,
  byte: 1 << 5,
  lstrip: 1 << 7,
  rstrip: 1 << 8,
} as const;

/** `tokenizer.ggml.token_type` values → attributes; anything else is "undefined" (0). */
const ATTR_OF_TYPE: Readonly<Record<number, number>> = {
  1: ATTR.normal,
  2: ATTR.unknown,
  3: ATTR.control,
  4: ATTR.userDefined,
  5: ATTR.unused,
  6: ATTR.byte,
};

export type TokenizerModel = 'llama' | 'gpt2';

/** The key of the merge of tokens `left` and `right` in Vocab.mergeRanks: a number, cheaper than "left right". */
export const mergeKey = (left: number, right: number) => left * MAX_VOCAB + right;

export interface Vocab {
  /** `llama`: SentencePiece (SPM); `gpt2`: byte-level BPE. */
  readonly model: TokenizerModel;
  /** `tokenizer.ggml.pre`, or 'default'. */
  readonly pre: string;
  /** The BPE pre-tokenizer (undefined for SPM). */
  readonly preTokenizer: PreTokenizer | undefined;
  readonly tokens: readonly string[];
  readonly scores: Float64Array;
  readonly attrs: Uint16Array;
  /** Token text → id. */
  readonly ids: ReadonlyMap<string, number>;
  /**
   * BPE merges: mergeKey(left id, right id) → rank (the merge's index; of two equal merges the
   * first counts). Every merge names two tokens (checked on load), so a pair of symbols that are
   * not both tokens has no rank, by id as by text.
   */
  readonly mergeRanks: ReadonlyMap<number, number>;
  readonly bos: number | undefined;
  readonly eos: number | undefined;
  readonly addBos: boolean;
  readonly addEos: boolean;
  /** SPM: a space before the text and after each special token; detokenizing drops it again. */
  readonly addSpacePrefix: boolean;
  readonly cleanSpaces: boolean;
  readonly eog: ReadonlySet<number>;
  /** Control, user-defined and unknown tokens, longest text (in UTF-8 bytes) first. */
  readonly specials: readonly number[];
}

/** What a GGUF reader needs to keep of a header for tokenizerFromGguf: the tokenizer's arrays, bounded. */
export const TOKENIZER_GGUF_OPTIONS = {
  keepArray: (key: string) => key.startsWith('tokenizer.'),
  keptArrayMax: MAX_VOCAB,
} as const;

const KEY = 'tokenizer.ggml';

/** Typed reads of the header's tokenizer keys; each mistake is a TokenizerError naming the key. */
class Metadata {
  constructor(
    private readonly header: GgufHeader,
    private readonly source: string,
  ) {}

  fail(message: string): never {
    throw new TokenizerError(`${this.source}: ${message}`);
  }

  private scalar(key: string): GgufScalar | undefined {
    const v = this.header.metadata.get(key);
    if (v !== undefined && typeof v === 'object') this.fail(`${key} is an array, not a single value`);
    return v;
  }

  string(key: string): string | undefined {
    const v = this.scalar(key);
    if (v !== undefined && typeof v !== 'string') this.fail(`${key} is ${String(v)}, not a string`);
    return v;
  }

  bool(key: string): boolean | undefined {
    const v = this.scalar(key);
    if (v !== undefined && typeof v !== 'boolean') this.fail(`${key} is ${String(v)}, not a boolean`);
    return v;
  }

  /** An id, or undefined when absent; llama.cpp keeps its default for a negative or too-large one. */
  id(key: string): number | undefined {
    const v = this.scalar(key);
    if (v === undefined) return undefined;
    const n = typeof v === 'bigint' ? Number(v) : v;
    if (typeof n !== 'number' || !Number.isInteger(n)) this.fail(`${key} is ${String(v)}, not a token id`);
    return n;
  }

  /** A kept array whose elements pass `ok`, or undefined when the key is absent. */
  array<T extends GgufScalar>(key: string, what: string, ok: (x: GgufScalar) => x is T): T[] | undefined {
    const v = this.header.metadata.get(key);
    if (v === undefined) return undefined;
    if (typeof v !== 'object') this.fail(`${key} is ${String(v)}, not an array`);
    if (v.array === null) {
      this.fail(
        `${key} (${v.length} elements) was not kept by the GGUF reader: read the header with TOKENIZER_GGUF_OPTIONS`,
      );
    }
    if (v.length > MAX_VOCAB)
      this.fail(`${key} has ${v.length} elements, more than the ${MAX_VOCAB} allowed`);
    for (let i = 0; i < v.array.length; i++) {
      if (!ok(v.array[i])) this.fail(`element ${i} of ${key} is ${String(v.array[i])}, not ${what}`);
    }
    return v.array as T[];
  }
}

const isString = (x: GgufScalar): x is string => typeof x === 'string';
const isNumber = (x: GgufScalar): x is number => typeof x === 'number';
const isInteger = (x: GgufScalar): x is number => Number.isInteger(x);

/** Token texts llama.cpp marks as control and end-of-generation whatever their type (its EOG list). */
const EOG_TEXTS = new Set([
  '<|eot_id|>',
  '<|im_end|>',
  '<|end|>',
  '<|return|>',
  '<|call|>',
  '<|flush|>',
  '<|calls|>',
  '<end_of_turn>',
  '<|endoftext|>',
  '</s>',
  '<|eom_id|>',
  '<EOT>',
  '_<EOT>',
  '[EOT]',
  '[EOS]',
  '<|end_of_text|>',
  '<end_of_utterance>',
  '<eos>',
  '<turn|>',
  '<|tool_response>',
  '<｜end▁of▁sentence｜>',
  '[e~[',
]);

/**
 * Fill-in-the-middle tokens llama.cpp finds by text when the file gives no id; a found one becomes
 * a control token, and pad, repo and separator also end generation.
 */
const FIM_TEXTS = {
  pre: [
    '<|fim_prefix|>',
    '<fim-prefix>',
    '<fim_prefix>',
    '<｜fim▁begin｜>',
    '<PRE>',
    '▁<PRE>',
    '<|code_prefix|>',
    '<|prefix|>',
  ],
  suf: [
    '<|fim_suffix|>',
    '<fim-suffix>',
    '<fim_suffix>',
    '<｜fim▁hole｜>',
    '<SUF>',
    '▁<SUF>',
    '<|code_suffix|>',
    '<|suffix|>',
  ],
  mid: [
    '<|fim_middle|>',
    '<fim-middle>',
    '<fim_middle>',
    '<｜fim▁end｜>',
    '<MID>',
    '▁<MID>',
    '<|code_middle|>',
    '<|middle|>',
  ],
  pad: ['<|fim_pad|>', '<fim-pad>', '<fim_pad>', '<PAD>', '[PAD]'],
  rep: ['<|fim_repo|>', '<|repo_name|>', '<fim-repo>', '<REPO>', '<reponame>'],
  sep: ['<|file_sep|>'],
} as const;

/** gpt-oss's tokens that llama.cpp always renders (user-defined whatever the file says). */
const ALWAYS_RENDERED = ['<|channel|>', '<|message|>', '<|start|>', '<|constrain|>'];

/**
 * The vocabulary of a header, or undefined when it has none (`tokenizer.ggml.model` absent, or
 * llama.cpp's "none" / "no_vocab").
 */
export function readVocab(header: GgufHeader, source: string): Vocab | undefined {
  const meta: Metadata = new Metadata(header, source);
  const model = meta.string(`${KEY}.model`);
  if (model === undefined || model === 'none' || model === 'no_vocab') return undefined;
  if (model !== 'llama' && model !== 'gpt2') {
    meta.fail(`${KEY}.model "${model}" is not a tokenizer this engine implements (llama and gpt2 are)`);
  }
  const pre = meta.string(`${KEY}.pre`) || 'default';
  let preTokenizer: PreTokenizer | undefined;
  if (model === 'gpt2') {
    preTokenizer = PRE_TOKENIZERS.get(pre);
    if (!preTokenizer) {
      meta.fail(
        `${KEY}.pre "${pre}" is not a pre-tokenizer this engine implements (it knows ${[...PRE_TOKENIZERS.keys()].join(', ')})`,
      );
    }
  }

  const spm = model === 'llama';
  const addBos = meta.bool(`${KEY}.add_bos_token`) ?? (spm || (preTokenizer?.addBos ?? false));
  const addEos = meta.bool(`${KEY}.add_eos_token`) ?? false;
  const addSpacePrefix = meta.bool(`${KEY}.add_space_prefix`) ?? spm;
  const names = {
    pre,
    model: (meta.string('general.name') ?? '').toLowerCase(),
    arch: meta.string('general.architecture') ?? '',
  };

  const tokens = meta.array(`${KEY}.tokens`, 'a string', isString);
  if (tokens === undefined) meta.fail(`it has ${KEY}.model "${model}" but no ${KEY}.tokens`);
  const n = tokens.length;
  if (n === 0) meta.fail(`${KEY}.tokens is empty`);
  const specials = specialIds(meta, model, preTokenizer, n);
  const scoreArray = meta.array(`${KEY}.scores`, 'a number', isNumber);
  const types = meta.array(`${KEY}.token_type`, 'an integer', isInteger);
  for (const [key, arr] of [
    ['scores', scoreArray],
    ['token_type', types],
  ] as const) {
    if (arr && arr.length < n) meta.fail(`${KEY}.${key} has ${arr.length} elements for ${n} tokens`);
  }

  // Token texts: llama.cpp renames an empty one and aborts on a repeated one.
  const texts = tokens.map((t, i) => (t === '' ? `[EMPTY_${i}]` : t));
  const ids = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    const earlier = ids.get(texts[i]);
    if (earlier !== undefined) {
      meta.fail(`element ${i} of ${KEY}.tokens repeats token ${earlier} (${JSON.stringify(texts[i])})`);
    }
    ids.set(texts[i], i);
  }

  const mergeRanks = new Map<number, number>();
  if (model === 'gpt2') {
    const merges = meta.array(`${KEY}.merges`, 'a string', isString);
    if (merges === undefined) meta.fail(`it has a gpt2 tokenizer but no ${KEY}.merges`);
    const token = (i: number, line: string, part: string) => {
      const id = ids.get(part);
      if (id === undefined) {
        meta.fail(
          `element ${i} of ${KEY}.merges (${JSON.stringify(line)}) names ${JSON.stringify(part)}, which is not a token`,
        );
      }
      return id;
    };
    for (let i = 0; i < merges.length; i++) {
      const line = merges[i];
      // llama.cpp splits at the first space after the first character.
      const space = line.indexOf(' ', 1);
      if (space < 0) meta.fail(`element ${i} of ${KEY}.merges (${JSON.stringify(line)}) is not two tokens`);
      const left = token(i, line, line.slice(0, space));
      const right = token(i, line, line.slice(space + 1));
      const key = mergeKey(left, right);
      if (!mergeRanks.has(key)) mergeRanks.set(key, i);
    }
  }

  const scores = new Float64Array(n);
  if (scoreArray) scores.set(scoreArray.slice(0, n));
  const attrs = new Uint16Array(n).fill(ATTR.normal);
  if (types) for (let i = 0; i < n; i++) attrs[i] = ATTR_OF_TYPE[types[i]] ?? 0;

  const eog = markSpecials(texts, ids, attrs, specials);
  markStrips(names, texts, ids, attrs);

  const cache: number[] = [];
  for (let i = 0; i < n; i++) if (attrs[i] & (ATTR.control | ATTR.userDefined | ATTR.unknown)) cache.push(i);
  const bytes = new Map(cache.map((id) => [id, utf8Length(texts[id])]));
  cache.sort((a, b) => (bytes.get(b) ?? 0) - (bytes.get(a) ?? 0) || a - b);

  return {
    model,
    pre,
    preTokenizer,
    tokens: texts,
    scores,
    attrs,
    ids,
    mergeRanks,
    bos: specials.bos,
    eos: specials.eos,
    addBos,
    addEos,
    addSpacePrefix,
    cleanSpaces: !spm && (preTokenizer?.cleanSpaces ?? true),
    eog,
    specials: cache,
  };
}

type SpecialName = 'bos' | 'eos' | 'eot' | 'eom' | keyof typeof FIM_TEXTS;

/**
 * The special ids: llama.cpp's defaults for the model (SPM: BOS 1, EOS 2; BPE: both 11), dropped
 * when outside the vocabulary, then the file's ids where they are inside it.
 */
function specialIds(
  meta: Metadata,
  model: TokenizerModel,
  pre: PreTokenizer | undefined,
  n: number,
): Partial<Record<SpecialName, number>> {
  const defaults: Partial<Record<SpecialName, number>> =
    model === 'llama' ? { bos: 1, eos: 2 } : { bos: pre?.noDefaultBos ? undefined : 11, eos: 11 };
  const out: Partial<Record<SpecialName, number>> = {};
  const keys: [SpecialName, string][] = [
    ['bos', 'bos_token_id'],
    ['eos', 'eos_token_id'],
    ['eot', 'eot_token_id'],
    ['eom', 'eom_token_id'],
    ['pre', 'fim_pre_token_id'],
    ['suf', 'fim_suf_token_id'],
    ['mid', 'fim_mid_token_id'],
    ['pad', 'fim_pad_token_id'],
    ['rep', 'fim_rep_token_id'],
    ['sep', 'fim_sep_token_id'],
    // Deprecated spellings, read after the new ones as llama.cpp reads them.
    ['pre', 'prefix_token_id'],
    ['suf', 'suffix_token_id'],
    ['mid', 'middle_token_id'],
  ];
  for (const [name, key] of keys) {
    const current = out[name] ?? defaults[name];
    const fallback = current !== undefined && current < n ? current : undefined;
    const id = meta.id(`${KEY}.${key}`);
    out[name] = id !== undefined && id >= 0 && id < n ? id : fallback;
  }
  return out;
}

/**
 * llama.cpp's text-based fixes to the attributes, and the end-of-generation set: tokens found by
 * text become control tokens; some are then turned back (gpt-oss's `<|end|>`, Gemma 4's `</s>`).
 * llama.cpp walks an unordered map to find the first FIM token of each kind; where a vocabulary has
 * two spellings of one kind, this takes the lower id.
 */
function markSpecials(
  texts: readonly string[],
  ids: ReadonlyMap<string, number>,
  attrs: Uint16Array,
  specials: Partial<Record<SpecialName, number>>,
): Set<number> {
  const byText = (list: readonly string[]) => {
    const found = list.map((t) => ids.get(t)).filter((id): id is number => id !== undefined);
    return found.length ? Math.min(...found) : undefined;
  };
  for (const kind of Object.keys(FIM_TEXTS) as (keyof typeof FIM_TEXTS)[]) {
    if (specials[kind] !== undefined) continue;
    const id = byText(FIM_TEXTS[kind]);
    if (id !== undefined) {
      specials[kind] = id;
      attrs[id] |= ATTR.control;
    }
  }
  const eog = new Set<number>();
  for (const kind of ['pad', 'rep', 'sep'] as const) {
    const id = specials[kind];
    if (id !== undefined) eog.add(id);
  }
  for (const text of EOG_TEXTS) {
    const id = ids.get(text);
    if (id === undefined) continue;
    eog.add(id);
    attrs[id] |= ATTR.control;
  }
  for (const kind of ['eos', 'eot', 'eom'] as const) {
    const id = specials[kind];
    if (id !== undefined) eog.add(id);
  }
  for (const text of ALWAYS_RENDERED) {
    const id = ids.get(text);
    if (id !== undefined) attrs[id] = ATTR.userDefined;
  }
  const eogText = new Set([...eog].map((id) => texts[id]));
  // gpt-oss and Solar Open end a turn with <|return|> or <|call|>/<|calls|>: their <|end|> only
  // separates messages.
  const end = ids.get('<|end|>');
  const call = eogText.has('<|call|>') || eogText.has('<|calls|>');
  if (end !== undefined && eog.has(end) && call && (eogText.has('<|return|>') || eogText.has('<|flush|>'))) {
    eog.delete(end);
    attrs[end] = ATTR.userDefined;
  }
  // Gemma 4 and PaddleOCR: </s> is text when <|tool_response> is a token.
  const s = ids.get('</s>');
  if (s !== undefined && eog.has(s) && eogText.has('<|tool_response>')) {
    eog.delete(s);
    attrs[s] = ATTR.normal;
  }
  return eog;
}

/**
 * llama.cpp's per-model strip attributes, by `tokenizer.ggml.pre`, `general.name` (lower-cased)
 * and `general.architecture`: a special token that swallows the whitespace beside it when it is
 * split out of a text (Phi-3's special tokens eat the spaces after them).
 */
function markStrips(
  names: { pre: string; model: string; arch: string },
  texts: readonly string[],
  ids: ReadonlyMap<string, number>,
  attrs: Uint16Array,
) {
  const { pre, model: name, arch } = names;
  const set = (text: string, attr: number, on: boolean) => {
    const id = ids.get(text);
    if (id !== undefined) attrs[id] = on ? attrs[id] | attr : attrs[id] & ~attr;
  };
  const has = (s: string, parts: string[]) => parts.some((p) => s.includes(p));
  if (
    has(pre, ['jina-v2-de', 'jina-v2-es', 'jina-v2-code']) ||
    has(arch, ['nomic-bert-moe', 'jina-bert-v3'])
  ) {
    set('<mask>', ATTR.lstrip, true);
  } else if (has(name, ['phi-3', 'phi3'])) {
    for (let i = 0; i < texts.length; i++) {
      if (attrs[i] & (ATTR.control | ATTR.userDefined | ATTR.unknown)) attrs[i] |= ATTR.rstrip;
    }
    set('</s>', ATTR.rstrip, true);
    for (const text of ['<unk>', '<s>', '<|endoftext|>']) set(text, ATTR.rstrip, false);
  } else if (has(name, ['modern-bert'])) {
    set('[MASK]', ATTR.lstrip, true);
  }
}
