// The HTTP server's engine process: the native runtime's engine on Dawn, behind the OpenAI-compatible
// endpoint of api-server.ts, serving a preset or a GGUF file (with the file's own tokenizer, when it
// carries one). Started by bench/serve-api.ts (npm run serve-api), which sets the Vulkan
// loader and ICD in its environment and passes the settings as one JSON argument. It prints one JSON
// line per event on stdout ({"event":"listening","url":…}, {"event":"error","message":…}), so the
// CLI and the load test can start it and wait for it.

import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import { acquireGpu, isSoftwareAdapter } from '../../gpu/device.ts';
import { PipelineCache } from '../../gpu/pipelines.ts';
import { defaultVariants } from '../../kernels/variants.ts';
import { Model } from '../../model/forward.ts';
import { loadGgufModel } from '../../model/gguf-load.ts';
import { type LoadedModel, loadModel } from '../../model/source.ts';
import { validateModel } from '../../model/verify.ts';
import { quantizeWeights, weightFormatOf } from '../../model/weights.ts';
import { warmUp } from '../../serve/driver.ts';
import { OnlineEngine } from '../../serve/online.ts';
import { VALIDATION_TOKENS } from '../../spec/workload.ts';
import type { RunWeightFormat } from '../../weight-format.ts';
import { promptTokens } from '../../workloads/prompts.ts';
import { buildApiServer, epochMs } from './api-server.ts';
import { installDiskAssetReader } from './asset-files.ts';
import { dawnInstance } from './dawn-globals.ts';

installDiskAssetReader();

const say = (event: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(event)}\n`);

const { values } = parseArgs({
  options: {
    preset: { type: 'string' },
    model: { type: 'string' },
    seed: { type: 'string', default: '0' },
    weights: { type: 'string', default: 'f32' },
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '8000' },
    'max-batch': { type: 'string', default: '8' },
    'token-budget': { type: 'string', default: '64' },
    'kv-tokens': { type: 'string' },
    'page-size': { type: 'string', default: '16' },
    'max-waiting': { type: 'string', default: '256' },
    'prefix-cache': { type: 'boolean', default: false },
    'kv-budget': { type: 'string' },
    'kv-budget-policy': { type: 'string', default: 'reject' },
    backend: { type: 'string', default: 'vulkan' },
  },
});

/**
 * KV tokens per batch slot when --kv-tokens is not given and a file is served: a real model's
 * context (32k, 128k tokens) times the batch would ask for tens of GB of KV pool; a longer request
 * is refused with the pool's size (OnlineEngine.refusal), and --kv-tokens raises the pool.
 */
const FILE_SLOT_TOKENS = 4096;

/** The served model: a preset's seeded weights, or a GGUF file read from disk with its tokenizer. */
async function load(): Promise<LoadedModel> {
  if (values.model) {
    const name = basename(values.model);
    return { name, ...loadGgufModel(new Uint8Array(readFileSync(values.model)), name) };
  }
  return loadModel({ kind: 'preset', preset: values.preset as string, seed: Number(values.seed) });
}

async function main(): Promise<void> {
  const maxBatch = Number(values['max-batch']);
  const gpu = await acquireGpu({ gpu: dawnInstance(values.backend as string) });
  const loaded = await load();
  const modelName = loaded.name;
  // A file keeps its own tensors' types (the CLI refuses --weights with --model).
  const format = values.weights as RunWeightFormat;
  const weights = format === 'f32' ? loaded.weights : quantizeWeights(loaded.weights, format);
  const config = weights.config;
  const software = isSoftwareAdapter(gpu.adapter);
  const slotTokens = values.model ? Math.min(config.maxSeqLen, FILE_SLOT_TOKENS) : config.maxSeqLen;
  const model = await Model.create(
    gpu,
    weights,
    {
      kv: {
        mode: 'paged',
        pageSize: Number(values['page-size']),
        capacityTokens: values['kv-tokens'] ? Number(values['kv-tokens']) : maxBatch * slotTokens,
        prefixCache: values['prefix-cache'] === true,
      },
      maxBatch,
      pipelines: new PipelineCache(gpu),
      variants: defaultVariants(software),
    },
    'serve',
  );
  // Nothing is served before the engine agrees with the float64 CPU reference.
  const check = await validateModel(model, weights, promptTokens(VALIDATION_TOKENS, config.vocabSize, 99));
  if (!check.passed) {
    throw new Error(
      `the GPU logits differ from the CPU reference (max rel err ${check.maxRelErr}); not serving`,
    );
  }
  await warmUp(model, maxBatch);
  const engine = new OnlineEngine(model, {
    maxBatch,
    tokenBudget: Number(values['token-budget']),
    maxWaiting: Number(values['max-waiting']),
    now: epochMs,
    prefixCache: values['prefix-cache'] === true,
    ...(values['kv-budget']
      ? {
          kvBudget: {
            tokens: Number(values['kv-budget']),
            policy: values['kv-budget-policy'] === 'truncate' ? ('truncate' as const) : ('reject' as const),
          },
        }
      : {}),
  });
  const app = buildApiServer({
    engine,
    modelName,
    vocabSize: config.vocabSize,
    maxSeqLen: config.maxSeqLen,
    tokenizer: loaded.tokenizer,
    now: epochMs,
    prefixCache: values['prefix-cache'] === true,
  });
  const address = await app.listen({ host: values.host as string, port: Number(values.port) });
  say({
    event: 'listening',
    url: `${address}/v1`,
    model: modelName,
    weights: weightFormatOf(weights),
    tokenizer: loaded.tokenizer ? `${loaded.tokenizer.model} (${loaded.tokenizer.vocabSize} tokens)` : null,
    adapter: [gpu.adapter.vendor, gpu.adapter.architecture, gpu.adapter.description]
      .filter(Boolean)
      .join(' '),
    software,
    maxBatch,
    kvPages: engine.stats().kvTotalPages,
    maxSeqLen: config.maxSeqLen,
    vocabSize: config.vocabSize,
    validationMaxRelErr: check.maxRelErr,
  });
  const stop = async () => {
    await app.close();
    await engine.close('the server is shutting down');
    model.destroy();
    gpu.device.destroy();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((e: unknown) => {
  say({ event: 'error', name: (e as Error)?.name ?? 'Error', message: (e as Error)?.message ?? String(e) });
  process.exit(1);
});
