// npm run tokenize -- --model F.gguf (--text "…" | --file F) [--no-bos] [--no-parse-special] [--no-escape]
// The ids of a text under a GGUF file's own tokenizer, printed as llama.cpp's
// `llama-tokenize -m F.gguf --ids -p "…"` prints them, with its defaults: BOS where the vocabulary
// asks for one, special tokens parsed, escapes (\n, \t, \x41, …) processed. Only the file's header
// is read, so a model of many gigabytes or a vocab-only GGUF does equally well.
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { readGgufHeader } from '../src/model/gguf.ts';
import { TOKENIZER_GGUF_OPTIONS, tokenizerFromGguf } from '../src/model/tokenizer/index.ts';

const EXIT = { ok: 0, usage: 2 } as const;

/** The first read of the header: a vocabulary of 150k tokens and its merges take a few megabytes. */
const FIRST_READ = 8 << 20;

const HELP = `Usage: npm run tokenize -- --model F.gguf (--text "…" | --file F) [options]

Prints the token ids of a text under the GGUF file's own tokenizer, as a JSON array, the way
llama.cpp's llama-tokenize --ids prints them (and with its defaults).

  --model F.gguf       a GGUF model or vocab-only file (only its header is read)
  --text "…"           the text
  --file F             the text, read from a file byte for byte
  --no-bos             do not add BOS (nor EOS), even where the vocabulary asks for it
  --no-parse-special   spell out the text of control tokens such as <|im_start|> instead of
                       reading them as those tokens
  --no-escape          take \\n, \\t, \\xNN … literally instead of as escapes
  -h, --help

Exit codes: 0 done; 2 bad input (the message names the flag or the file).`;

function usage(message: string): never {
  console.error(`tokenize: ${message}\n(see npm run tokenize -- --help)`);
  process.exit(EXIT.usage);
}

function parse() {
  try {
    return parseArgs({
      options: {
        model: { type: 'string' },
        text: { type: 'string' },
        file: { type: 'string' },
        'no-bos': { type: 'boolean', default: false },
        'no-parse-special': { type: 'boolean', default: false },
        'no-escape': { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (e) {
    usage((e as Error).message);
  }
}

/** C's isspace in the "C" locale. */
const isSpace = (b: number) => b === 0x20 || (b >= 0x09 && b <= 0x0d);
/** A hex digit's value, or -1. */
function hexValue(b: number): number {
  const v = Number.parseInt(String.fromCharCode(b), 16);
  return Number.isNaN(v) ? -1 : v;
}

/**
 * `\xNN`'s two characters as strtol(…, 16) reads them when it must use both: two hex digits, or
 * a space or a sign then one. Undefined when it would not use both.
 */
function strtolHex2(a: number, b: number): number | undefined {
  const hb = hexValue(b);
  if (hb < 0) return undefined;
  if (hexValue(a) >= 0) return hexValue(a) * 16 + hb;
  if (isSpace(a) || a === 0x2b) return hb;
  if (a === 0x2d) return -hb & 0xff;
  return undefined;
}

/** The escapes that stand for one byte. */
const SIMPLE_ESCAPES: Readonly<Record<string, number>> = {
  n: 0x0a,
  r: 0x0d,
  t: 0x09,
  "'": 0x27,
  '"': 0x22,
  '\\': 0x5c,
};

/**
 * llama.cpp's string_process_escapes (common.cpp), on bytes: \n \r \t \' \" \\ and \xNN; any other
 * backslash stays as it is.
 */
function processEscapes(input: Uint8Array): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < input.length; i++) {
    if (input[i] !== 0x5c || i + 1 >= input.length) {
      out.push(input[i]);
      continue;
    }
    const c = input[++i];
    const byte = c === 0x78 && i + 2 < input.length ? strtolHex2(input[i + 1], input[i + 2]) : undefined;
    const plain = SIMPLE_ESCAPES[String.fromCharCode(c)];
    if (plain !== undefined) out.push(plain);
    else if (byte !== undefined) {
      out.push(byte);
      i += 2;
    } else out.push(0x5c, c);
  }
  return new Uint8Array(out);
}

const args = parse();
if (args.help) {
  console.log(HELP);
  process.exit(EXIT.ok);
}
if (!args.model) usage('--model is required');
if ((args.text === undefined) === (args.file === undefined)) usage('give --text or --file (exactly one)');

try {
  let bytes: Uint8Array;
  try {
    bytes = args.file === undefined ? new TextEncoder().encode(args.text) : readFileSync(args.file);
  } catch (e) {
    throw new Error(`--file: ${(e as Error).message}`);
  }
  if (!args['no-escape']) bytes = processEscapes(bytes);
  // Bytes that are not UTF-8 (a stray \x80) become U+FFFD: the tokenizer takes a string.
  const text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);

  let fd: number;
  try {
    fd = openSync(args.model, 'r');
  } catch (e) {
    throw new Error(`--model: ${(e as Error).message}`);
  }
  let tokenizer: ReturnType<typeof tokenizerFromGguf>;
  try {
    const header = await readGgufHeader(
      async (length) => {
        const buf = Buffer.alloc(length);
        const n = readSync(fd, buf, 0, length, 0);
        return new Uint8Array(buf.buffer, buf.byteOffset, n);
      },
      args.model,
      FIRST_READ,
      undefined,
      TOKENIZER_GGUF_OPTIONS,
    );
    tokenizer = tokenizerFromGguf(header, args.model);
  } finally {
    closeSync(fd);
  }
  if (!tokenizer) throw new Error(`${args.model} has no tokenizer (no tokenizer.ggml.model)`);
  const ids = tokenizer.encode(text, {
    addSpecial: tokenizer.addBos && !args['no-bos'],
    parseSpecial: !args['no-parse-special'],
  });
  console.log(`[${ids.join(', ')}]`);
} catch (e) {
  usage((e as Error).message);
}
