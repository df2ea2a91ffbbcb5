import { describe, expect, it } from 'vitest';
import { makeResult } from '../../test-support/fixtures/base.ts';
import { toMarkdown } from '../results/export.ts';
import { BenchResultSchema } from '../results/schema.ts';
import { buildSpec, specFromOptions } from './options.ts';
import { fitToPrompt, GENERATION_CLOCK, type Generation, promptUnfit } from './prompt.ts';
import { BenchSpecSchema } from './schema.ts';

const model = { kind: 'url', baseUrl: '/__model/', weightsFile: 'm.gguf' } as const;
const text = { text: 'Once upon a time', source: '--prompt' };

describe('a prompt text in the spec', () => {
  it('rides in the spec of the sweeps’ suites, and a spec without one parses as before', () => {
    const spec = specFromOptions(model, { suite: 'quick', prompt: text });
    expect(spec.prompt).toEqual(text);
    expect(BenchSpecSchema.parse({ ...spec, prompt: undefined }).prompt).toBeUndefined();
    expect(specFromOptions(model, { prefill: [4], depths: [], prompt: text }).suite).toBe('custom');
  });

  it('is refused with a suite whose workloads make their own prompts, and when empty', () => {
    const serve = buildSpec(model, { suite: 'serve', prompt: text });
    expect(serve.ok).toBe(false);
    if (!serve.ok) {
      expect(serve.issues[0]).toMatchObject({ option: 'prompt' });
      expect(serve.issues[0].message).toMatch(
        /feeds the prefill and decode sweeps: suites quick, full, custom, fusion/,
      );
    }
    const empty = buildSpec(model, { prompt: { text: '', source: '--prompt' } });
    expect(empty.ok).toBe(false);
  });

  it('takes a generation request, bounded', () => {
    const g = { prompt: 'Hello', maxTokens: 32, ignoreEos: false };
    expect(specFromOptions(model, { generate: g }).generate).toEqual(g);
    expect(buildSpec(model, { generate: { ...g, maxTokens: 0 } }).ok).toBe(false);
    expect(buildSpec(model, { generate: { ...g, maxTokens: 4097 } }).ok).toBe(false);
  });
});

describe('fitting the sweeps to a prompt text', () => {
  const spec = specFromOptions(model, { suite: 'quick' });

  it('names every L and depth whose prompt the text cannot hold (a depth d takes max(d, 1) tokens)', () => {
    const unfit = promptUnfit(spec.workloads, 40);
    // quick: prefill 16…256, decode 16, 128, 512; fusion at L 256, depth 16.
    expect(unfit.map((u) => `${u.kind} ${u.option} ${u.value}`)).toEqual([
      'prefill prefill 64',
      'prefill prefill 128',
      'prefill prefill 256',
      'decode depths 128',
      'decode depths 512',
      'fusion prefill 256',
    ]);
    expect(unfit[0].message).toBe(
      "prompt length 64: it takes the prompt text's first 64 tokens, and the text has 40",
    );
    expect(unfit[3].message).toBe(
      "decode depth 128: it takes the prompt text's first 128 tokens, and the text has 40",
    );
    expect(unfit[5].message).toMatch(/^the fused-against-unfused prompt length 256: /);
    expect(promptUnfit(spec.workloads, 512)).toEqual([]);
  });

  it('keeps what fits, drops a workload left with nothing, and leaves other workloads alone', () => {
    const fitted = fitToPrompt(spec.workloads, 40);
    expect(fitted.map((w) => w.kind)).toEqual(['prefill', 'decode']);
    expect(fitted[0]).toMatchObject({ lengths: [16, 32] });
    expect(fitted[1]).toMatchObject({ depths: [16] });
    const depth0 = specFromOptions(model, { prefill: [], depths: [0] }).workloads;
    expect(fitToPrompt(depth0, 1)).toEqual(depth0);
    const kernels = specFromOptions(model, { suite: 'kernels' }).workloads;
    expect(fitToPrompt(kernels, 1)).toEqual(kernels);
  });
});

describe('a result with a prompt text and a generation', () => {
  const generation: Generation = {
    prompt: 'Say <b>hi</b>',
    promptTokens: [1, 15043],
    tokens: [29871, 2],
    text: ' *hi* | <script>',
    stop: 'eog',
    ttftMs: 12.5,
    tpotMs: 4,
    tokenTimesMs: [12.5, 16.5],
    clock: GENERATION_CLOCK,
  };
  const r = makeResult({ generation });
  r.spec.prompt = { text: 'Once | upon a *time*', source: '--prompt-file story.txt', tokens: 321 };

  it('validates, and a file without them still does', () => {
    expect(BenchResultSchema.safeParse(r).success).toBe(true);
    expect(BenchResultSchema.safeParse(makeResult()).success).toBe(true);
  });

  it('says in the report where the prompt tokens came from, and quotes the generated text escaped', () => {
    const md = toMarkdown(r);
    expect(md).toContain(
      '- **Prompt tokens:** cut from the text of --prompt-file story.txt ("Once \\| upon a \\*time\\*"), 321 tokens',
    );
    expect(md).toContain(
      '**Generated text** (greedy, 2 tokens after a 2-token prompt, stopped at an end-of-generation token; TTFT 12.50 ms, TPOT 4.000 ms, 250.0 tokens/s;',
    );
    expect(md).toContain('> **Say \\<b\\>hi\\</b\\>**  \\*hi\\* \\| \\<script\\>');
  });
});
