/**
 * The pre-tokenizers of byte-level BPE that this engine runs, by the name a GGUF file gives in
 * `tokenizer.ggml.pre`: llama.cpp's mapping of names to its LLAMA_VOCAB_PRE_TYPE_* (in
 * llama_vocab::impl::load) and the regexes of each type (in llm_tokenizer_bpe's constructor), copied
 * from its src/llama-vocab.cpp. pre.test.ts reads that file in llama.cpp's release bundle and
 * checks every entry here against it, and that every name llama.cpp maps to one of these regex sets
 * is here. Other pre-tokenizers are refused by name.
 */

/** The regex sets, verbatim (the C++ string literals unescaped). */
const REGEXES = {
  default: [
    '[\\p{P}\\$\\+<=>\\^~\\|]+',
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
    '\\p{N}+',
    '[0-9][0-9][0-9]',
  ],
  llama3: [
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  ],
  qwen2: [
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  ],
  qwen35: [
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  ],
  starcoder: ['\\p{N}', "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"],
  gpt2: ["'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"],
  deepseekLlm: [
    '[\r\n]',
    '\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-ώᾀ-ᾴᾶ-ᾼιῂ-ῄῆ-ῌῐ-ΐῖ-Ίῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤΩℨK-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+',
    '\\s?[!-/:-~！-／：-～‘-‟　-。]+',
    '\\s+$',
    '[一-龥ࠀ-一가-퟿]+',
    '\\p{N}+',
  ],
  deepseekCoder: ['[\r\n]', '\\s?\\p{L}+', '\\s?\\p{P}+', '[一-龥ࠀ-一가-퟿]+', '\\p{N}'],
  falcon: [
    '[\\p{P}\\$\\+<=>\\^~\\|`]+',
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
    '[0-9][0-9][0-9]',
  ],
} as const;

/** How llama.cpp tokenizes and detokenizes with one pre-tokenizer. */
export interface PreTokenizer {
  /** llama.cpp's LLAMA_VOCAB_PRE_TYPE_*, without the prefix. */
  readonly type: string;
  readonly regexes: readonly string[];
  /** Detokenizing drops a space before `?!.,` and a few contractions (llama.cpp's clean_spaces). */
  readonly cleanSpaces: boolean;
  /** A word that is a token as a whole is that token, merges or not (llama.cpp's ignore_merges). */
  readonly ignoreMerges: boolean;
  /** Add BOS unless `tokenizer.ggml.add_bos_token` says otherwise. */
  readonly addBos: boolean;
  /** No BOS id unless `tokenizer.ggml.bos_token_id` gives one (ChatGLM). */
  readonly noDefaultBos: boolean;
}

type PreFlags = Partial<Omit<PreTokenizer, 'type' | 'regexes'>>;

const PRE_ENTRIES: [name: string, pre: { type: string; regexes: readonly string[] } & PreFlags][] = [
  ['default', { type: 'DEFAULT', regexes: REGEXES.default }],
  ['llama3', { type: 'LLAMA3', regexes: REGEXES.llama3, ignoreMerges: true, addBos: true }],
  ['llama-v3', { type: 'LLAMA3', regexes: REGEXES.llama3, ignoreMerges: true, addBos: true }],
  ['llama-bpe', { type: 'LLAMA3', regexes: REGEXES.llama3, ignoreMerges: true, addBos: true }],
  ['falcon3', { type: 'LLAMA3', regexes: REGEXES.llama3, ignoreMerges: true, addBos: true }],
  ['falcon-h1', { type: 'LLAMA3', regexes: REGEXES.llama3, ignoreMerges: true, addBos: true }],
  ['pixtral', { type: 'LLAMA3', regexes: REGEXES.llama3, ignoreMerges: true, addBos: true }],
  ['midm-2.0', { type: 'LLAMA3', regexes: REGEXES.llama3, ignoreMerges: true, addBos: true }],
  ['lfm2', { type: 'LLAMA3', regexes: REGEXES.llama3, ignoreMerges: true, addBos: true }],
  ['jina-v5-nano', { type: 'LLAMA3', regexes: REGEXES.llama3, ignoreMerges: true, addBos: true }],
  ['deepseek-llm', { type: 'DEEPSEEK_LLM', regexes: REGEXES.deepseekLlm, cleanSpaces: false }],
  ['deepseek-coder', { type: 'DEEPSEEK_CODER', regexes: REGEXES.deepseekCoder, cleanSpaces: false }],
  ['falcon', { type: 'FALCON', regexes: REGEXES.falcon }],
  ['mpt', { type: 'MPT', regexes: REGEXES.gpt2 }],
  ['starcoder', { type: 'STARCODER', regexes: REGEXES.starcoder }],
  ['gpt-2', { type: 'GPT2', regexes: REGEXES.gpt2 }],
  ['phi-2', { type: 'GPT2', regexes: REGEXES.gpt2 }],
  ['jina-es', { type: 'GPT2', regexes: REGEXES.gpt2 }],
  ['jina-de', { type: 'GPT2', regexes: REGEXES.gpt2 }],
  ['gigachat', { type: 'GPT2', regexes: REGEXES.gpt2 }],
  ['jina-v2-es', { type: 'GPT2', regexes: REGEXES.gpt2 }],
  ['jina-v2-de', { type: 'GPT2', regexes: REGEXES.gpt2 }],
  ['a.x-4.0', { type: 'GPT2', regexes: REGEXES.gpt2 }],
  ['mellum', { type: 'GPT2', regexes: REGEXES.gpt2 }],
  ['modern-bert', { type: 'GPT2', regexes: REGEXES.gpt2 }],
  ['jina-v1-en', { type: 'GPT2', regexes: REGEXES.gpt2 }],
  ['jina-v2-code', { type: 'GPT2', regexes: REGEXES.gpt2 }],
  ['roberta-bpe', { type: 'GPT2', regexes: REGEXES.gpt2 }],
  ['refact', { type: 'REFACT', regexes: REGEXES.starcoder }],
  ['command-r', { type: 'COMMAND_R', regexes: REGEXES.starcoder, cleanSpaces: false }],
  ['qwen2', { type: 'QWEN2', regexes: REGEXES.qwen2, cleanSpaces: false }],
  ['deepseek-r1-qwen', { type: 'QWEN2', regexes: REGEXES.qwen2, cleanSpaces: false }],
  ['kormo', { type: 'QWEN2', regexes: REGEXES.qwen2, cleanSpaces: false }],
  ['f2llmv2', { type: 'QWEN2', regexes: REGEXES.qwen2, cleanSpaces: false }],
  ['qwen35', { type: 'QWEN35', regexes: REGEXES.qwen35, cleanSpaces: false }],
  ['stablelm2', { type: 'STABLELM2', regexes: REGEXES.qwen2 }],
  ['olmo', { type: 'OLMO', regexes: REGEXES.gpt2 }],
  ['dbrx', { type: 'DBRX', regexes: REGEXES.llama3 }],
  ['smaug-bpe', { type: 'SMAUG', regexes: REGEXES.llama3 }],
  ['glm4', { type: 'CHATGLM4', regexes: REGEXES.llama3, noDefaultBos: true }],
  ['chatglm-bpe', { type: 'CHATGLM4', regexes: REGEXES.llama3, noDefaultBos: true }],
  ['jais', { type: 'JAIS', regexes: REGEXES.gpt2 }],
  ['smollm', { type: 'SMOLLM', regexes: REGEXES.starcoder, cleanSpaces: false }],
  ['codeshell', { type: 'CODESHELL', regexes: REGEXES.starcoder }],
  ['exaone', { type: 'EXAONE', regexes: REGEXES.starcoder }],
  ['exaone4', { type: 'GPT2', regexes: REGEXES.gpt2 }],
  ['minerva-7b', { type: 'MINERVA', regexes: REGEXES.starcoder }],
  ['megrez', { type: 'QWEN2', regexes: REGEXES.qwen2 }],
  ['trillion', { type: 'TRILLION', regexes: REGEXES.gpt2, cleanSpaces: false }],
  ['granite-docling', { type: 'GRANITE_DOCLING', regexes: REGEXES.gpt2, cleanSpaces: false }],
  ['hunyuan', { type: 'HUNYUAN', regexes: REGEXES.qwen2, cleanSpaces: false }],
  ['grok-2', { type: 'GROK_2', regexes: REGEXES.qwen2, cleanSpaces: false }],
  ['solar-open', { type: 'SOLAR_OPEN', regexes: REGEXES.qwen2, cleanSpaces: false }],
  ['mellum2', { type: 'MELLUM2', regexes: REGEXES.starcoder }],
];

/** Each supported `tokenizer.ggml.pre` name; a file without one gets `default`, as in llama.cpp. */
export const PRE_TOKENIZERS: ReadonlyMap<string, PreTokenizer> = new Map(
  PRE_ENTRIES.map(([name, pre]) => [
    name,
    { cleanSpaces: true, ignoreMerges: false, addBos: false, noDefaultBos: false, ...pre },
  ]),
);
