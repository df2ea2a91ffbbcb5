// npm run serve-api -- (--preset P | --model F.gguf) [--port N]: the engine, continuous batching and
// all, as an OpenAI-compatible endpoint (POST /v1/completions, GET /v1/models, GET /metrics) on this
// machine.
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { PRESETS } from '../src/model/config.ts';
import { WEIGHT_FORMATS } from '../src/weight-format.ts';
import { ApiServerStartError, startApiServer } from './api-process.ts';
import { npmAncestors, stopWhenLauncherGone } from './launcher-watch.ts';
import { ADAPTER_CHOICES, type AdapterChoice } from './vulkan.ts';

const HELP = `npm run serve-api -- (--preset NAME | --model F.gguf) [options]

Serves the engine as an OpenAI-compatible endpoint (docs/serving-http.md):
  POST /v1/completions   prompt as text or token ids, max_tokens, stream, stream_options.include_usage,
                         ignore_eos
  GET  /v1/models        the one model served
  GET  /metrics          Prometheus text: queue, prefill, decode, TTFT, TPOT and E2E histograms,
                         running and waiting requests, KV pages in use

  --preset NAME          a model shape with seeded weights (${Object.keys(PRESETS).join(', ')}): no
                         tokenizer, so text is a stand-in (one token per UTF-8 byte in, " t<id>" out)
  --model F.gguf         a llama.cpp GGUF file, served as the model its file name names; with the
                         tokenizer it carries, text prompts are tokenized and answers are text, and
                         generation stops at its end-of-generation tokens unless ignore_eos
  --seed N               a preset's weights' seed (default 0, as npm run bench)
  --weights FORMAT       a preset's format: ${WEIGHT_FORMATS.join('|')} (default f32; a file keeps its own types)
  --port N               default 8000; 0 picks a free port
  --host ADDR            default 127.0.0.1 (loopback only); another address is served only when named here
  --max-batch N          running batch (default 8)
  --token-budget N       tokens per step, decode rows plus prompt chunks (default 64)
  --kv-tokens N          KV pool in tokens (default max batch × the model's context, at most 4096
                         tokens per slot for a file)
  --page-size N          KV page in tokens (default 16)
  --max-waiting N        requests queued for a slot before the server answers 429 (default 256)
  --kv-budget TOKENS      the most KV one request may hold (prompt + max_tokens − 1); over it, with
                         --kv-budget-policy reject (default) the request is answered 400 with the code
                         kv_budget_exceeded, with truncate its prompt's oldest tokens are dropped
  --prefix-cache         keep computed prompt pages for later prompts that start the same (a shared
                         system prompt, an agent's history); usage then carries
                         prompt_tokens_details.cached_tokens
  --adapter default|swiftshader
`;

function fail(message: string): never {
  console.error(`serve-api: ${message}\n\n${HELP}`);
  process.exit(2);
}

// Read before serving, while the npm above is surely alive (bench/launcher-watch.ts).
const launcher = npmAncestors();
const { values } = (() => {
  try {
    return parseArgs({
      options: {
        preset: { type: 'string' },
        model: { type: 'string' },
        seed: { type: 'string' },
        weights: { type: 'string' },
        port: { type: 'string' },
        host: { type: 'string' },
        'max-batch': { type: 'string' },
        'token-budget': { type: 'string' },
        'kv-tokens': { type: 'string' },
        'page-size': { type: 'string' },
        'max-waiting': { type: 'string' },
        'prefix-cache': { type: 'boolean' },
        'kv-budget': { type: 'string' },
        'kv-budget-policy': { type: 'string' },
        adapter: { type: 'string' },
        help: { type: 'boolean' },
      },
    });
  } catch (e) {
    fail((e as Error).message);
  }
})();
if (values.help) {
  console.log(HELP);
  process.exit(0);
}
const int = (flag: string, min: number): number | undefined => {
  const text = values[flag as keyof typeof values] as string | undefined;
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < min) fail(`--${flag} must be an integer ≥ ${min}, got "${text}"`);
  return n;
};
if (!values.preset === !values.model) fail('give one of --preset NAME or --model F.gguf');
if (values.preset && !(values.preset in PRESETS)) fail(`unknown preset "${values.preset}"`);
if (values.model) {
  if (!/\.gguf$/i.test(values.model)) fail(`--model takes a llama.cpp .gguf file, got "${values.model}"`);
  if (!existsSync(values.model)) fail(`--model ${values.model}: no such file`);
  if (values.weights || values.seed)
    fail('--weights and --seed apply to --preset (a file keeps its own weights)');
}
if (values.weights && !(WEIGHT_FORMATS as readonly string[]).includes(values.weights))
  fail(`--weights must be ${WEIGHT_FORMATS.join(', ')}, got "${values.weights}"`);
if (values.adapter && !(ADAPTER_CHOICES as readonly string[]).includes(values.adapter))
  fail(`--adapter must be ${ADAPTER_CHOICES.join(', ')}, got "${values.adapter}"`);
const budgetTokens = int('kv-budget', 1);
const policy = values['kv-budget-policy'];
if (policy !== undefined && policy !== 'reject' && policy !== 'truncate')
  fail(`--kv-budget-policy must be reject or truncate, got "${policy}"`);
if (policy !== undefined && budgetTokens === undefined) fail('--kv-budget-policy needs --kv-budget TOKENS');
const pageSize = int('page-size', 1) ?? 16;
if (budgetTokens !== undefined && budgetTokens < pageSize)
  fail(`--kv-budget ${budgetTokens}: below one KV page (${pageSize} tokens), so no request could run`);
const kvBudget =
  budgetTokens === undefined
    ? undefined
    : { tokens: budgetTokens, policy: (policy ?? 'reject') as 'reject' | 'truncate' };
const port = int('port', 0);
if (port !== undefined && port > 65535) fail(`--port must be at most 65535, got ${port}`);

try {
  const server = await startApiServer(
    {
      preset: values.preset,
      model: values.model,
      seed: int('seed', 0),
      weights: values.weights,
      host: values.host,
      port: port ?? 8000,
      maxBatch: int('max-batch', 1),
      tokenBudget: int('token-budget', 1),
      kvTokens: int('kv-tokens', 1),
      pageSize: int('page-size', 1),
      maxWaiting: int('max-waiting', 0),
      prefixCache: values['prefix-cache'] === true,
      ...(kvBudget !== undefined ? { kvBudget } : {}),
      adapter: values.adapter as AdapterChoice | undefined,
    },
    (line) => console.error(line),
  );
  const i = server.info;
  console.log(
    `Serving ${i.model} (${i.weights}) at ${i.url} on ${i.adapter}${i.software ? ' (a software adapter)' : ''}: batch ${i.maxBatch}, ${i.kvPages} KV pages, context ${i.maxSeqLen}; logits checked against the CPU reference (max rel err ${i.validationMaxRelErr?.toExponential(2)}).`,
  );
  if (i.tokenizer)
    console.log(`Text prompts and answers go through the model's own tokenizer, ${i.tokenizer}.`);
  console.log(
    `Try: curl -s ${i.url}/completions -H 'Content-Type: application/json' -d '{"model":"${i.model}","prompt":${i.tokenizer ? '"Hello"' : '[1,2,3]'},"max_tokens":8}'`,
  );
  const stop = async () => {
    await server.close();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  // Killing the npm that started this must not leave the engine's process on the port.
  stopWhenLauncherGone(() => void stop(), launcher);
} catch (e) {
  console.error(`serve-api: ${(e as Error).message}`);
  process.exit(e instanceof ApiServerStartError ? 3 : 1);
}
