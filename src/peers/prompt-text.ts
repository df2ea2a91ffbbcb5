import type { Tokenizer } from '../model/tokenizer/index.ts';

/**
 * Prompts as text for a peer that takes no token ids. wllama 3.8.1 hands its prompt to llama.cpp's
 * server code as a string (wllama-context.h stores it in server_task::cli_prompt, a std::string: an
 * array of ids there throws), which tokenizes it as common_tokenize(text, add_special = true,
 * parse_special = true). So each prompt is built here as text whose tokenization by the file's own
 * tokenizer (src/model/tokenizer, llama.cpp's to the token) is a known id sequence, checked by
 * encoding it; this engine and the native peer are then fed those very ids.
 *
 * The text is words taken from the vocabulary itself: tokens whose piece is ASCII letters (after a
 * space where the vocabulary has such tokens: "Ġword" in a BPE one, "▁word" in a SentencePiece
 * one), each of which the tokenizer reads back as that one token after the first word. The first
 * word may read as more than one token, and a BOS comes before it where the vocabulary adds one:
 * the shortest prompt a text can give is those tokens (`shortest`). The GGUF writer's stand-in
 * vocabulary has no reachable word tokens, only "▁" and a byte token per ASCII letter, so its
 * prompts are letters: "▁" then one byte token each.
 */

/** Text and the token ids the file's tokenizer reads it as (with BOS where it adds one). */
export interface SpelledPrompt {
  text: string;
  ids: number[];
}

/** The settings llama.cpp's server tokenizes a completion's prompt with (common_tokenize in tokenize_cli_input). */
const SERVER_TOKENIZE = { addSpecial: true, parseSpecial: true } as const;

/** At most this many distinct words are collected; longer prompts cycle through them. */
const MAX_WORDS = 512;

/** Why a prompt cannot be spelled with this file's tokenizer: the peer that needs text fails with it. */
export class PromptSpellingError extends Error {
  override readonly name = 'PromptSpellingError';
}

const sameIds = (a: readonly number[], b: readonly number[]) =>
  a.length === b.length && a.every((x, i) => x === b[i]);

/** Spells prompts of any length from one file's tokenizer. */
export class PromptSpeller {
  /** The first word's text (its leading space dropped) and the ids it reads as, BOS included. */
  private readonly head: SpelledPrompt;
  /** Each later word: its piece and its one token. */
  private readonly words: { piece: string; id: number }[];

  constructor(private readonly tok: Tokenizer) {
    const pieces = wordPieces(tok);
    const spaced = pieces.filter((w) => w.piece.startsWith(' '));
    // Words after a space keep each word its own pre-token in a BPE vocabulary; the writer's
    // stand-in vocabulary has none that read back, so its letters follow one another.
    const pool = spaced.length > 0 ? spaced : pieces;
    // The first word, its leading space dropped: one that reads as one token where there is one,
    // so that the shortest prompt is as short as the vocabulary allows.
    const bareOf = (piece: string) =>
      tok.encode(piece.trimStart(), { addSpecial: false, parseSpecial: true });
    const first =
      pool.find((w) => sameIds(bareOf(w.piece), [w.id])) ??
      pieces.find((w) => sameIds(bareOf(w.piece), [w.id])) ??
      pool[0];
    if (!first)
      throw new PromptSpellingError(
        'the file’s vocabulary has no token of ASCII letters that its tokenizer reads back as itself, so no text spells a prompt of known tokens',
      );
    const headText = first.piece.trimStart();
    const head = { text: headText, ids: tok.encode(headText, SERVER_TOKENIZE) };
    const bare = bareOf(headText);
    // A word joins when the head then that word reads as the head's tokens and that word's one
    // token; the head's own word is left for the head.
    this.words = pool.filter(
      ({ piece, id }) =>
        id !== first.id &&
        sameIds(tok.encode(headText + piece, { addSpecial: false, parseSpecial: true }), [...bare, id]),
    );
    if (this.words.length === 0)
      throw new PromptSpellingError(
        'no word of the file’s vocabulary reads back as its own token after another word, so no text spells a prompt of known tokens',
      );
    this.head = head;
  }

  /**
   * The tokens whose text alone is not whole UTF-8 (a byte, or bytes, of a longer character; a
   * control token renders as nothing, so it is not one of them), in id order.
   */
  unsampledIds(): number[] {
    const out: number[] = [];
    for (let id = 0; id < this.tok.vocabSize; id++) {
      const d = this.tok.decoder();
      // The decoder keeps an unfinished character back and flushes it as U+FFFD; a stray byte is U+FFFD at once.
      if ((d.push(id) + d.flush()).includes('\uFFFD')) out.push(id);
    }
    return out;
  }

  /** The fewest tokens a spelled prompt has: BOS where the vocabulary adds one, and the first word's. */
  get shortest(): number {
    return this.head.ids.length;
  }

  /**
   * A text of exactly `n` tokens and its ids, checked by encoding it; `salt` picks where in the
   * word list it starts, so two prompts of one run differ. Throws when n is below `shortest`, or
   * when the whole text does not read back as the words' tokens.
   */
  spell(n: number, salt = 0): SpelledPrompt {
    if (n < this.shortest)
      throw new PromptSpellingError(
        `no text is a ${n}-token prompt with this file’s tokenizer: the shortest is ${this.shortest} tokens (${this.shortest > 1 ? 'a BOS or a leading space token, then a word' : 'one word'})`,
      );
    const ids = [...this.head.ids];
    let text = this.head.text;
    for (let i = 0; ids.length < n; i++) {
      const w = this.words[(salt * 7 + i) % this.words.length];
      text += w.piece;
      ids.push(w.id);
    }
    const read = this.tok.encode(text, SERVER_TOKENIZE);
    if (!sameIds(read, ids))
      throw new PromptSpellingError(
        `a ${n}-token prompt’s text reads back as ${read.length} other tokens with this file’s tokenizer`,
      );
    return { text, ids };
  }

  /**
   * A prompt cut from a user's text: its first tokens as the file's tokenizer reads the whole text
   * (BOS where it adds one), at most `n`. Positions are compared from the shortest prefix with a
   * text of its own (after BOS, or after SentencePiece's "▁" and a letter): `texts[k]` spells
   * ids.slice(0, from + k + 1), checked by encoding it. Where a later prefix has no text of its
   * own (a cut inside a merge or a character), there are no texts and `noText` says where.
   */
  cut(text: string, n: number): { ids: number[]; from: number; texts?: string[]; noText?: string } {
    const ids = this.tok.encode(text, SERVER_TOKENIZE).slice(0, n);
    const spell = (end: number): string | undefined => {
      const d = this.tok.decoder();
      let piece = '';
      for (const id of ids.slice(0, end)) piece += d.push(id);
      piece += d.flush();
      // A SentencePiece vocabulary puts a space before the text it reads: its pieces give it back.
      // An empty text (BOS alone) is no prompt for a server.
      return [piece, piece.replace(/^ /, '')].find(
        (t) => t !== '' && sameIds(this.tok.encode(t, SERVER_TOKENIZE), ids.slice(0, end)),
      );
    };
    let first = 1;
    while (first <= Math.min(ids.length, 4) && spell(first) === undefined) first++;
    if (first > Math.min(ids.length, 4))
      throw new PromptSpellingError('no prefix of the text’s first 4 tokens reads back as itself');
    const from = first - 1;
    const texts: string[] = [];
    for (let end = first; end <= ids.length; end++) {
      const spelled = spell(end);
      if (spelled === undefined)
        return {
          ids,
          from,
          noText: `the text's first ${end} tokens have no text of their own (the cut falls inside a merge or a character)`,
        };
      texts.push(spelled);
    }
    return { ids, from, texts };
  }

  /**
   * The text of each prefix of a spelled prompt that a text can give, from `shortest` tokens up:
   * entry k spells ids.slice(0, shortest + k). Each is checked by encoding it.
   */
  prefixes(prompt: SpelledPrompt): string[] {
    const out: string[] = [];
    let text = this.head.text;
    for (let n = this.shortest; n <= prompt.ids.length; n++) {
      if (n > this.shortest) {
        const id = prompt.ids[n - 1];
        const word = this.words.find((w) => w.id === id);
        if (!word) throw new PromptSpellingError(`token ${id} of the prompt is not one of its words`);
        text += word.piece;
      }
      if (!sameIds(this.tok.encode(text, SERVER_TOKENIZE), prompt.ids.slice(0, n)))
        throw new PromptSpellingError(`the prompt’s first ${n} tokens have no text of their own`);
      out.push(text);
    }
    return out;
  }
}

/**
 * Tokens whose piece (llama.cpp's token_to_piece, the leading space kept) is ASCII letters, at
 * most one space before them, and that read back as themselves: in a deterministic stride through
 * the vocabulary, so the words are spread over it rather than its first ids.
 */
function wordPieces(tok: Tokenizer): { piece: string; id: number }[] {
  const out: { piece: string; id: number }[] = [];
  const V = tok.vocabSize;
  // A stride coprime with every vocabulary size that is not a multiple of 7919 (a prime) visits each id once.
  const stride = V % 7919 === 0 ? 1 : 7919;
  for (let i = 0; i < V && out.length < MAX_WORDS; i++) {
    const id = (i * stride) % V;
    const d = tok.decoder();
    const piece = d.push(id) + d.flush();
    if (!/^ ?[A-Za-z]+$/.test(piece)) continue;
    // Alone, it must end in this token: after at most one token a SentencePiece vocabulary puts
    // before a text ("▁", which the stand-in's letters follow).
    const alone = tok.encode(piece, { addSpecial: false, parseSpecial: true });
    if (alone[alone.length - 1] !== id || alone.length > 2) continue;
    out.push({ piece, id });
  }
  return out;
}
