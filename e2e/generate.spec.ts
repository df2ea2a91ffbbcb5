import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { request } from 'undici';
import { type ApiServerProcess, startApiServer } from '../bench/api-process.ts';
import { presetConfig } from '../src/model/config.ts';
import { writeGguf } from '../src/model/gguf-writer.ts';
import { randomWeights } from '../src/model/weights.ts';
import { BenchResultSchema } from '../src/results/schema.ts';
import { parseSseEvents } from '../src/serve/openai.ts';
import { llamaPath } from '../test-support/llama-bundle.ts';
import { makeGenerateFixture } from '../test-support/llama-generate/fixture.ts';
import { type LlamaGreedy, llamaGreedy } from '../test-support/llama-generate/generate.ts';
import { runCli } from './cli.ts';

/**
 * Text in, text out, against llama.cpp: a Qwen3-shaped model with Qwen's own vocabulary, quantized
 * to Q4_K_M by llama.cpp's quantizer (test-support/llama-generate/fixture.ts), made once for the
 * file; llama.cpp's greedy generation on it (node-llama-cpp's prebuilt CPU libllama, in a process
 * of its own); then the same 16 tokens through `npm run generate` and through `npm run serve-api` (16: each
 * token of this vocabulary takes about 0.5 s here, and the seed was chosen on 32, of which these are the first).
 * The page's door is e2e/generate-ui.spec.ts. Every engine start compiles the Q4_K and Q6_K kernels
 * on SwiftShader (about 20 s), and each of this vocabulary's tokens takes about 0.5 s there (its
 * LM head is 151,936 × 256), so each door runs once.
 */

test.describe.configure({ mode: 'serial' });

let dir: string;
let model: string;
/** llama.cpp's 16 greedy tokens after "Hello", end-of-generation tokens ignored. */
let llama: LlamaGreedy;

test.beforeAll(async () => {
  test.setTimeout(120_000);
  dir = mkdtempSync(join(tmpdir(), 'generate-'));
  model = makeGenerateFixture(dir, 'qwen2');
  llama = await llamaGreedy(model, 'Hello', 16, true);
});

test.afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** What the generate CLI prints on stderr after the text: its summary lines. */
function summary(stderr: string) {
  const line = (re: RegExp) => stderr.match(re)?.[1];
  return {
    prompt: line(/^prompt: \d+ tokens? \[([\d,]*)\]$/m)
      ?.split(',')
      .map(Number),
    ids: line(/^token ids: ([\d,]+)$/m)
      ?.split(',')
      .map(Number),
  };
}

test('generate CLI: --prompt "Hello", 16 tokens, --ignore-eos: llama.cpp’s greedy text and ids', async () => {
  test.setTimeout(180_000);
  expect(llama.prompt).toEqual([9707]);
  expect(llama.tokens).toHaveLength(16);
  const run = await runCli(
    'bench/generate.ts',
    ['--model', model, '--prompt', 'Hello', '--ignore-eos', '--max-tokens', '16'],
    170_000,
  );
  expect(run.code, run.stderr).toBe(0);
  // stdout is the text alone, byte for byte: llama.cpp's pieces joined.
  expect(run.stdout).toBe(llama.text);
  expect(summary(run.stderr)).toEqual({ prompt: llama.prompt, ids: llama.tokens });
  expect(run.stderr).toContain('(browser runtime');
  expect(run.stderr).toMatch(/^generated: 16 tokens, stopped at --max-tokens 16 \(--ignore-eos\)$/m);
  // Each figure names its clock.
  expect(run.stderr).toMatch(
    /^TTFT [\d.]+ ms: prefill of 1 token submitted → first token read back; wall clock in the engine \(performance\.now\(\) in the browser's worker\)$/m,
  );
  expect(run.stderr).toMatch(/^TPOT [\d.]+ ms: \(last token − first token\) ÷ 15; wall clock in the engine/m);
  expect(run.stderr).toMatch(/^tokens\/s [\d.]+: decode, 1000 ÷ TPOT; wall clock in the engine/m);
  expect(run.stderr).toMatch(/checked against the CPU reference \(max rel err \d\.\d\de-\d+\)/);
});

test('generate CLI in the native runtime: a small F32 file with the writer’s SentencePiece vocabulary, llama.cpp’s ids', async () => {
  test.setTimeout(120_000);
  // ci-tiny (vocabulary 509) with the minimal SPM tokenizer the project's writer adds: BOS, byte
  // fallback. F32, so llama.cpp's logits differ from the exact ones only by its f16 KV cache.
  const small = join(dir, 'ci-tiny.gguf');
  writeFileSync(small, writeGguf(randomWeights(presetConfig('ci-tiny'), 2), { type: 'F32' }));
  const [want, run] = await Promise.all([
    llamaGreedy(small, 'Hello', 8, true),
    runCli('bench/generate.ts', [
      '--model',
      small,
      '--prompt',
      'Hello',
      '--max-tokens',
      '8',
      '--ignore-eos',
      '--runtime',
      'node',
    ]),
  ]);
  expect(run.code, run.stderr).toBe(0);
  expect(run.stderr).toContain('(node runtime');
  expect(summary(run.stderr)).toEqual({ prompt: want.prompt, ids: want.tokens });
  expect(run.stdout).toBe(want.text);
  expect(run.stderr).toMatch(/wall clock in the engine \(performance\.now\(\) in the Node host\)$/m);
});

test('generate CLI --preset: the page’s worker fetches the family’s vocabulary; the prompt is llama.cpp’s ids', async () => {
  test.setTimeout(120_000);
  // llama.cpp's own tokenizer vectors for GPT-2's vocabulary (models/ggml-vocab-gpt-2.gguf.inp/.out),
  // whose cut SmolLM2 takes: its first text that needs no token past the 49,151 kept.
  const texts = readFileSync(llamaPath('models/ggml-vocab-gpt-2.gguf.inp'), 'utf8').split(
    '\n__ggml_vocab_test__\n',
  );
  const ids = readFileSync(llamaPath('models/ggml-vocab-gpt-2.gguf.out'), 'utf8').split('\n');
  const i = texts.indexOf('Hello, world!');
  const want = ids[i].trim().split(' ').map(Number);
  expect(want).toEqual([15496, 11, 995, 0]);
  const run = await runCli('bench/generate.ts', [
    '--preset',
    'smollm2-135m',
    '--prompt',
    texts[i],
    '--max-tokens',
    '1',
  ]);
  expect(run.code, run.stderr).toBe(0);
  expect(run.stderr).toContain('(browser runtime');
  expect(summary(run.stderr).prompt).toEqual(want);
  expect(run.stderr).toMatch(/note: smollm2-135m has seeded random weights with its family's vocabulary/);
});

test('generate CLI: bad flags, a file without a tokenizer and a prompt past the context exit 2 with the reason', async () => {
  test.setTimeout(120_000);
  const noTokenizer = join(dir, 'no-tokenizer.gguf');
  writeFileSync(
    noTokenizer,
    writeGguf(randomWeights(presetConfig('ci-tiny'), 1), { type: 'F32', tokenizer: false }),
  );
  const long = join(dir, 'long.txt');
  writeFileSync(long, 'Hello '.repeat(600));
  const node = ['--runtime', 'node'];
  const [noPrompt, badTokens, noFile, noTok, tooLong] = await Promise.all([
    runCli('bench/generate.ts', ['--model', model]),
    runCli('bench/generate.ts', ['--model', model, '--prompt', 'Hi', '--max-tokens', '0']),
    runCli('bench/generate.ts', ['--model', join(dir, 'missing.gguf'), '--prompt', 'Hi']),
    runCli('bench/generate.ts', ['--model', noTokenizer, '--prompt', 'Hi', ...node]),
    runCli('bench/generate.ts', ['--model', model, '--prompt-file', long, ...node]),
  ]);
  expect(noPrompt.code).toBe(2);
  expect(noPrompt.stderr).toMatch(/generate: give one of --prompt "…" or --prompt-file F/);
  expect(badTokens.code).toBe(2);
  expect(badTokens.stderr).toMatch(/--max-tokens takes a whole number in 1…4096, got "0"/);
  expect(noFile.code).toBe(2);
  expect(noFile.stderr).toMatch(/--model .*missing\.gguf: no such file/);
  expect(noTok.code, noTok.stderr).toBe(2);
  expect(noTok.stderr).toMatch(/InputError: no-tokenizer\.gguf has no tokenizer: a text prompt needs one/);
  expect(tooLong.code, tooLong.stderr).toBe(2);
  expect(tooLong.stderr).toMatch(
    /InputError: The prompt is \d{3} tokens and 32 more are asked for: \d{3} tokens, past the model's context of 512/,
  );
  for (const run of [noTok, tooLong]) expect(run.stdout).toBe('');
});

test('serve-api --model: a text prompt streams llama.cpp’s greedy text and token ids', async () => {
  test.setTimeout(200_000);
  let server: ApiServerProcess | undefined;
  try {
    server = await startApiServer({ model, port: 0, maxBatch: 1, tokenBudget: 64 });
    expect(server.info).toMatchObject({
      model: 'qwen3-qwen2.Q4_K_M.gguf',
      tokenizer: 'gpt2 (151936 tokens)',
    });
    const post = (body: Record<string, unknown>) =>
      request(`${server?.info.url}/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: server?.info.model, ...body }),
      });
    const res = await post({
      prompt: 'Hello',
      max_tokens: 16,
      ignore_eos: true,
      stream: true,
      temperature: 0,
    });
    expect(res.statusCode).toBe(200);
    const chunks = parseSseEvents(await res.body.text())
      .events.filter((e) => e !== '[DONE]')
      .map(
        (e) =>
          JSON.parse(e) as {
            choices: { text: string; token_ids?: number[]; finish_reason: string | null }[];
          },
      );
    const pieces = chunks.flatMap((c) => c.choices);
    expect(pieces.map((c) => c.text).join('')).toBe(llama.text);
    expect(pieces.flatMap((c) => c.token_ids ?? [])).toEqual(llama.tokens);
    // Streamed as it is read back: one chunk per engine step, one token each with one request running.
    expect(pieces.filter((c) => c.token_ids).map((c) => c.token_ids?.length)).toEqual(Array(16).fill(1));
    expect(pieces.at(-1)?.finish_reason).toBe('length');

    const tooLong = await post({ prompt: 'Hello '.repeat(600), max_tokens: 8 });
    expect(tooLong.statusCode).toBe(400);
    expect(((await tooLong.body.json()) as { error: { code: string } }).error.code).toBe(
      'context_length_exceeded',
    );
  } finally {
    await server?.close();
  }
});

test('bench --prompt-file: the sweeps’ prompts are cut from the text, tokenized as llama.cpp does; too short a text is refused', async () => {
  test.setTimeout(120_000);
  const small = join(dir, 'ci-tiny-bench.gguf');
  writeFileSync(small, writeGguf(randomWeights(presetConfig('ci-tiny'), 2), { type: 'F32' }));
  const story = join(dir, 'story.txt');
  writeFileSync(story, 'Once upon a time, a small model read its prompt from a file. '.repeat(2));
  const out = join(dir, 'prompt.json');
  const common = ['--model', small, '--prompt-file', story, '--depth', '4', '--gen', '2', '--reps', '3'];
  const [want, run, short, preset] = await Promise.all([
    llamaGreedy(small, readFileSync(story, 'utf8'), 1),
    runCli('bench/bench.ts', [
      ...common,
      '--prefill',
      '8',
      '--no-autotune',
      '--runtime',
      'node',
      '--out',
      out,
    ]),
    runCli('bench/bench.ts', [...common, '--prefill', '400', '--runtime', 'node']),
    runCli('bench/bench.ts', ['--prompt', 'Hello']),
  ]);
  expect(run.code, run.stderr).toBe(0);
  const result = BenchResultSchema.parse(JSON.parse(readFileSync(out, 'utf8')));
  // The text's token count is llama.cpp's own for the same file and text.
  expect(result.spec.prompt).toEqual({
    text: readFileSync(story, 'utf8'),
    source: `--prompt-file ${story}`,
    tokens: want.prompt.length,
  });
  expect(result.points.map((p) => `${p.pass} ${p.tokens} ${p.depth}`)).toEqual(['prefill 8 0', 'decode 1 4']);
  expect(run.stdout).toContain(`- **Prompt tokens:** cut from the text of --prompt-file ${story}`);
  expect(short.code).toBe(2);
  expect(short.stderr).toContain(
    `SpecError: prompt length 400: it takes the prompt text's first 400 tokens, and the text has ${want.prompt.length}`,
  );
  expect(preset.code).toBe(2);
  expect(preset.stderr).toMatch(/--prompt and --prompt-file need a model with a tokenizer: --model F\.gguf/);
});
