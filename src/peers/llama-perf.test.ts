import { describe, expect, it } from 'vitest';
import { decodeStepMsFromPerf, parseLlamaPerf, prefillMsFromPerf } from './llama-perf.ts';

// Lines as node-llama-cpp 3.21.1's logger handed them over (llama.cpp from its v0.4.0 binaries,
// ci-tiny F32, 1 thread, this machine, 2026-12-05): one printTimings() each, messages verbatim.
const fresh = [
  'llama_perf_context_print:        load time =       1.15 ms',
  'llama_perf_context_print: prompt eval time =       0.00 ms /     1 tokens (    0.00 ms per token,      inf tokens per second)',
  'llama_perf_context_print:        eval time =       0.00 ms /     1 runs   (    0.00 ms per token,      inf tokens per second)',
  'llama_perf_context_print:       total time =      16.15 ms /     2 tokens',
  'llama_perf_context_print:    graphs reused =          0',
];
const afterPp16 = [
  'llama_perf_context_print:        load time =      12.83 ms',
  'llama_perf_context_print: prompt eval time =       0.90 ms /    16 tokens (    0.06 ms per token, 17699.12 tokens per second)',
  'llama_perf_context_print:        eval time =       0.00 ms /     1 runs   (    0.00 ms per token,      inf tokens per second)',
  'llama_perf_context_print:       total time =       2.50 ms /    17 tokens',
  'llama_perf_context_print:    graphs reused =          1',
];
const afterTg15 = [
  'llama_perf_context_print:        load time =      12.83 ms',
  'llama_perf_context_print: prompt eval time =       0.00 ms /     1 tokens (    0.00 ms per token,      inf tokens per second)',
  'llama_perf_context_print:        eval time =       3.12 ms /    15 runs   (    0.21 ms per token,  4803.07 tokens per second)',
  'llama_perf_context_print:       total time =      18.85 ms /    16 tokens',
  'llama_perf_context_print:    graphs reused =         14',
];

describe('llama.cpp’s counters, as llama_perf_context_print prints them', () => {
  it('reads the prompt eval and eval lines, and skips the others', () => {
    expect(parseLlamaPerf(afterPp16)).toEqual({
      promptEvalMs: 0.9,
      promptTokens: 16,
      evalMs: 0,
      evalRuns: 1,
    });
    expect(parseLlamaPerf(afterTg15)).toEqual({
      promptEvalMs: 0,
      promptTokens: 1,
      evalMs: 3.12,
      evalRuns: 15,
    });
  });

  it('reads lines that came joined in one message, or with the logger’s prefix before them', () => {
    expect(parseLlamaPerf([afterTg15.join('\n')])).toMatchObject({ evalMs: 3.12, evalRuns: 15 });
    expect(parseLlamaPerf(afterPp16.map((l) => `[node-llama-cpp] ${l}`))).toMatchObject({
      promptEvalMs: 0.9,
      promptTokens: 16,
    });
  });

  it('gives nothing when a line is missing (a logger that never saw them)', () => {
    expect(parseLlamaPerf([])).toBeNull();
    expect(parseLlamaPerf(afterTg15.filter((l) => !l.includes(' eval time')))).toBeNull();
    expect(parseLlamaPerf(['llama_context: n_ctx = 128', 'load_tensors: CPU model buffer size'])).toBeNull();
  });

  it('takes a prefill’s prompt eval time, and a one-token prefill’s eval time', () => {
    const pp16 = parseLlamaPerf(afterPp16);
    if (!pp16) throw new Error('unparsed');
    expect(prefillMsFromPerf(pp16, 16)).toBe(0.9);
    // One token is an eval run to llama.cpp.
    expect(prefillMsFromPerf({ promptEvalMs: 0, promptTokens: 1, evalMs: 0.07, evalRuns: 1 }, 1)).toBe(0.07);
  });

  it('refuses a prefill reading that saw other work', () => {
    const pp16 = parseLlamaPerf(afterPp16);
    if (!pp16) throw new Error('unparsed');
    expect(() => prefillMsFromPerf(pp16, 64)).toThrow(/saw 16 prompt tokens .* for a prefill of 64 tokens/);
    // A one-token prefill is one eval run and nothing on the prompt side.
    expect(() =>
      prefillMsFromPerf({ promptEvalMs: 0.2, promptTokens: 2, evalMs: 0.05, evalRuns: 1 }, 1),
    ).toThrow(/for a prefill of 1 tokens/);
  });

  it('takes a decode sample as eval time per step, and refuses another count of steps', () => {
    const tg = parseLlamaPerf(afterTg15);
    const none = parseLlamaPerf(fresh);
    if (!tg || !none) throw new Error('unparsed');
    expect(decodeStepMsFromPerf(tg, 15)).toBeCloseTo(0.208, 12);
    expect(() => decodeStepMsFromPerf(tg, 16)).toThrow(/saw 15 single-token runs .* for 16 decode steps/);
    // A prompt decode inside the span would land in prompt eval: not a decode sample.
    const pp16 = parseLlamaPerf(afterPp16);
    if (!pp16) throw new Error('unparsed');
    expect(() => decodeStepMsFromPerf(pp16, 1)).toThrow(/16 prompt tokens/);
    expect(() => decodeStepMsFromPerf(none, 0)).toThrow(/for 0 decode steps/);
  });
});
