import { describe, expect, it } from 'vitest';
import { SpecError } from '../errors.ts';
import {
  defaultMix,
  fitsContext,
  generateTrace,
  promptTokenIds,
  type RequestClass,
  requestTypeMatrix,
  type TraceRequest,
  type TrafficOptions,
  traceFromJsonl,
  traceToJsonl,
} from './traffic.ts';

const oneClass: RequestClass[] = [
  { name: 'only', share: 1, prompt: { kind: 'fixed', tokens: 16 }, output: { kind: 'fixed', tokens: 8 } },
];

function options(over: Partial<TrafficOptions> = {}): TrafficOptions {
  return {
    seed: 7,
    requests: 100,
    arrival: { kind: 'poisson', rateRps: 10 },
    classes: defaultMix(2048),
    ...over,
  };
}

/** Mean and coefficient of variation (sample sd / mean) of the gaps between arrivals. */
function gapStats(trace: readonly TraceRequest[]) {
  const gaps = trace.slice(1).map((r, i) => r.arrivalMs - trace[i].arrivalMs);
  let total = 0;
  for (const g of gaps) total += g;
  const m = total / gaps.length;
  let ss = 0;
  for (const g of gaps) ss += (g - m) ** 2;
  return { gaps, mean: m, cv: Math.sqrt(ss / (gaps.length - 1)) / m };
}

describe('arrivals', () => {
  // One fixed seed each, so these are deterministic; the tolerances are about 2 standard errors.
  it('are a Poisson process at burstiness 1: mean gap 1/rate, CV 1, exponential shape', () => {
    const trace = generateTrace(
      options({ requests: 2000, seed: 1, arrival: { kind: 'poisson', rateRps: 10 } }),
    );
    expect(trace).toHaveLength(2000);
    expect(trace[0].arrivalMs).toBe(0);
    const s = gapStats(trace);
    expect(Math.abs(s.mean - 100) / 100).toBeLessThan(0.05);
    expect(Math.abs(s.cv - 1)).toBeLessThan(0.1);
    // Exponential: P(gap < mean) = 1 − 1/e ≈ 0.632, which a gamma of another shape with CV 1 would not give.
    const below = s.gaps.filter((g) => g < 100).length / s.gaps.length;
    expect(Math.abs(below - (1 - Math.exp(-1)))).toBeLessThan(0.03);
  });

  it('are gamma with CV 1/√shape: burstiness 0.25 gives CV 2, 4 gives 0.5, at the same mean', () => {
    // 20 000 gaps: CV's standard error at shape 0.25 is about 0.03 (0.1 at 2000).
    const bursty = gapStats(
      generateTrace(
        options({ requests: 20000, seed: 3, arrival: { kind: 'poisson', rateRps: 4, burstiness: 0.25 } }),
      ),
    );
    expect(Math.abs(bursty.mean - 250) / 250).toBeLessThan(0.05);
    expect(Math.abs(bursty.cv - 2)).toBeLessThan(0.1);
    const regular = gapStats(
      generateTrace(
        options({ requests: 2000, seed: 3, arrival: { kind: 'poisson', rateRps: 4, burstiness: 4 } }),
      ),
    );
    expect(Math.abs(regular.mean - 250) / 250).toBeLessThan(0.05);
    expect(Math.abs(regular.cv - 0.5)).toBeLessThan(0.05);
  });

  it('put every request at t = 0 for all-at-once and closed-loop concurrency', () => {
    for (const arrival of [{ kind: 'all-at-once' }, { kind: 'concurrency', concurrency: 4 }] as const) {
      const trace = generateTrace(options({ requests: 50, arrival }));
      expect(trace).toHaveLength(50);
      expect(trace.every((r) => r.arrivalMs === 0)).toBe(true);
      expect(trace.map((r) => r.id)).toEqual([...Array(50).keys()]);
    }
  });

  it('stop after durationS', () => {
    // 10 rps for 2 s: about 20 of the 1000 asked for, none after 2000 ms.
    const trace = generateTrace(options({ requests: 1000, durationS: 2 }));
    expect(trace.length).toBeGreaterThan(8);
    expect(trace.length).toBeLessThan(40);
    expect(trace.every((r) => r.arrivalMs <= 2000)).toBe(true);
  });

  it('are sorted, with ids in arrival order', () => {
    const trace = generateTrace(options({ requests: 300 }));
    trace.forEach((r, i) => {
      expect(r.id).toBe(i);
      if (i > 0) expect(r.arrivalMs).toBeGreaterThanOrEqual(trace[i - 1].arrivalMs);
    });
  });
});

describe('trace content', () => {
  it('is the same for a seed, different for another', () => {
    const a = generateTrace(
      options({ requests: 200, prefix: { tokens: 32, share: 0.5 }, priorityShare: 0.2 }),
    );
    const b = generateTrace(
      options({ requests: 200, prefix: { tokens: 32, share: 0.5 }, priorityShare: 0.2 }),
    );
    expect(b).toEqual(a);
    const c = generateTrace(
      options({ requests: 200, seed: 8, prefix: { tokens: 32, share: 0.5 }, priorityShare: 0.2 }),
    );
    expect(c.map((r) => r.arrivalMs)).not.toEqual(a.map((r) => r.arrivalMs));
    expect(c.map((r) => r.promptTokens)).not.toEqual(a.map((r) => r.promptTokens));
  });

  it('keeps the same requests when only the arrival process changes', () => {
    const slow = generateTrace(options({ requests: 200, arrival: { kind: 'poisson', rateRps: 1 } }));
    const fast = generateTrace(
      options({ requests: 200, arrival: { kind: 'poisson', rateRps: 50, burstiness: 0.5 } }),
    );
    const inf = generateTrace(options({ requests: 200, arrival: { kind: 'all-at-once' } }));
    const strip = (t: TraceRequest[]) => t.map(({ arrivalMs: _, ...rest }) => rest);
    expect(strip(fast)).toEqual(strip(slow));
    expect(strip(inf)).toEqual(strip(slow));
    expect(fast.map((r) => r.arrivalMs)).not.toEqual(slow.map((r) => r.arrivalMs));
  });

  it('draws classes by share and lengths within each class, both ends included', () => {
    const classes: RequestClass[] = [
      {
        name: 'a',
        share: 0.5,
        prompt: { kind: 'uniform', min: 1, max: 3 },
        output: { kind: 'fixed', tokens: 5 },
      },
      {
        name: 'b',
        share: 0.3,
        prompt: { kind: 'fixed', tokens: 100 },
        output: { kind: 'uniform', min: 10, max: 12 },
      },
      { name: 'c', share: 0.2, prompt: { kind: 'fixed', tokens: 7 }, output: { kind: 'fixed', tokens: 7 } },
      { name: 'never', share: 0, prompt: { kind: 'fixed', tokens: 1 }, output: { kind: 'fixed', tokens: 1 } },
    ];
    const trace = generateTrace(options({ requests: 6000, classes }));
    const n = (name: string) => trace.filter((r) => r.class === name).length / trace.length;
    // Binomial sd at 6000 draws is under 0.007.
    expect(Math.abs(n('a') - 0.5)).toBeLessThan(0.02);
    expect(Math.abs(n('b') - 0.3)).toBeLessThan(0.02);
    expect(Math.abs(n('c') - 0.2)).toBeLessThan(0.02);
    expect(n('never')).toBe(0);
    const a = trace.filter((r) => r.class === 'a');
    expect(new Set(a.map((r) => r.promptTokens))).toEqual(new Set([1, 2, 3]));
    expect(a.every((r) => r.outputTokens === 5)).toBe(true);
    const b = trace.filter((r) => r.class === 'b');
    expect(new Set(b.map((r) => r.outputTokens))).toEqual(new Set([10, 11, 12]));
    expect(b.every((r) => r.promptTokens === 100)).toBe(true);
  });

  it('gives a share of requests priority 1 and the rest 0', () => {
    const trace = generateTrace(options({ requests: 4000, priorityShare: 0.3 }));
    const high = trace.filter((r) => r.priority === 1).length;
    expect(trace.every((r) => r.priority === 0 || r.priority === 1)).toBe(true);
    expect(Math.abs(high / 4000 - 0.3)).toBeLessThan(0.025);
    expect(generateTrace(options({ requests: 200 })).every((r) => r.priority === 0)).toBe(true);
  });

  it('puts a shared prefix on its share, cut to leave each prompt one token of its own', () => {
    const classes: RequestClass[] = [
      {
        name: 'x',
        share: 1,
        prompt: { kind: 'uniform', min: 1, max: 80 },
        output: { kind: 'fixed', tokens: 4 },
      },
    ];
    const trace = generateTrace(options({ requests: 4000, classes, prefix: { tokens: 40, share: 0.5 } }));
    const withPrefix = trace.filter((r) => r.prefixId !== null);
    // Half are drawn for the prefix; the 1-token prompts among them (1 in 80) cannot hold any.
    expect(Math.abs(withPrefix.length / 4000 - 0.5 * (79 / 80))).toBeLessThan(0.025);
    for (const r of trace) {
      if (r.prefixId === null) {
        expect(r.prefixTokens).toBe(0);
      } else {
        expect(r.prefixId).toBe(0);
        expect(r.prefixTokens).toBe(Math.min(40, r.promptTokens - 1));
        expect(r.prefixTokens).toBeGreaterThan(0);
      }
    }
    // Both a full and a cut prefix occur.
    expect(withPrefix.some((r) => r.prefixTokens === 40)).toBe(true);
    expect(withPrefix.some((r) => r.prefixTokens < 40)).toBe(true);
  });
});

describe('prompt token ids', () => {
  const req = (id: number, promptTokens: number, prefixTokens: number): TraceRequest => ({
    id,
    arrivalMs: 0,
    promptTokens,
    outputTokens: 1,
    prefixId: prefixTokens > 0 ? 0 : null,
    prefixTokens,
    class: 'x',
    priority: 0,
  });

  it('share the prefix ids between requests and differ after it', () => {
    const a = promptTokenIds(req(0, 50, 20), 1000, 5);
    const b = promptTokenIds(req(1, 30, 20), 1000, 5);
    const short = promptTokenIds(req(2, 10, 9), 1000, 5);
    expect(a).toHaveLength(50);
    expect(b).toHaveLength(30);
    expect(b.slice(0, 20)).toEqual(a.slice(0, 20));
    // A cut prefix is the head of the same prefix.
    expect(short.slice(0, 9)).toEqual(a.slice(0, 9));
    expect(b.slice(20)).not.toEqual(a.slice(20, 30));
    // Without a prefix nothing is shared.
    const c = promptTokenIds(req(3, 50, 0), 1000, 5);
    expect(c.slice(0, 20)).not.toEqual(a.slice(0, 20));
  });

  it('are deterministic, in 1…vocab−1, and change with the seed', () => {
    const r = req(4, 2000, 100);
    const ids = promptTokenIds(r, 7, 1);
    expect(promptTokenIds(r, 7, 1)).toEqual(ids);
    expect(ids.every((t) => Number.isInteger(t) && t >= 1 && t <= 6)).toBe(true);
    expect(new Set(ids)).toEqual(new Set([1, 2, 3, 4, 5, 6]));
    expect(promptTokenIds(r, 7, 2)).not.toEqual(ids);
    expect(() => promptTokenIds(r, 1, 1)).toThrow(/vocab/);
  });
});

describe('mixes', () => {
  it('fit every class in maxSeqLen, from tiny to large contexts', () => {
    const lengths = [...Array(255).keys()].map((i) => i + 2).concat([1000, 1023, 2048, 4095, 32768, 131072]);
    for (const L of lengths) {
      for (const mix of [defaultMix(L), requestTypeMatrix(L)]) {
        expect(fitsContext(mix, L)).toBeNull();
        // Valid as options: every length ≥ 1, min ≤ max, shares sum to 1.
        expect(() => generateTrace(options({ requests: 1, classes: mix }))).not.toThrow();
      }
    }
  });

  it('have the documented shares and lengths at 2048', () => {
    expect(defaultMix(2048)).toEqual([
      {
        name: 'short',
        share: 0.6,
        prompt: { kind: 'uniform', min: 8, max: 128 },
        output: { kind: 'uniform', min: 8, max: 128 },
      },
      {
        name: 'rag',
        share: 0.25,
        prompt: { kind: 'uniform', min: 512, max: 1024 },
        output: { kind: 'uniform', min: 8, max: 64 },
      },
      {
        name: 'long-gen',
        share: 0.15,
        prompt: { kind: 'uniform', min: 8, max: 128 },
        output: { kind: 'uniform', min: 256, max: 512 },
      },
    ]);
    const m = requestTypeMatrix(2048);
    expect(m.map((c) => [c.name, c.share, c.prompt, c.output])).toEqual([
      ['short-in/short-out', 0.25, { kind: 'fixed', tokens: 128 }, { kind: 'fixed', tokens: 128 }],
      ['short-in/long-out', 0.25, { kind: 'fixed', tokens: 128 }, { kind: 'fixed', tokens: 512 }],
      ['long-in/short-out', 0.25, { kind: 'fixed', tokens: 1024 }, { kind: 'fixed', tokens: 128 }],
      ['long-in/long-out', 0.25, { kind: 'fixed', tokens: 1024 }, { kind: 'fixed', tokens: 512 }],
    ]);
    expect(() => defaultMix(1)).toThrow(SpecError);
  });

  it('name the first class or request that does not fit', () => {
    const classes: RequestClass[] = [
      { name: 'ok', share: 0.5, prompt: { kind: 'fixed', tokens: 10 }, output: { kind: 'fixed', tokens: 6 } },
      {
        name: 'big',
        share: 0.5,
        prompt: { kind: 'uniform', min: 1, max: 12 },
        output: { kind: 'fixed', tokens: 5 },
      },
    ];
    // ok: 16 fits; big: 12 + 5 = 17 does not.
    const miss = fitsContext(classes, 16);
    expect(miss).toMatchObject({ kind: 'class', class: 'big', id: null, tokens: 17 });
    expect(miss?.message).toMatch(/"big".*17.*16/);
    expect(fitsContext(classes, 17)).toBeNull();
    const trace = generateTrace(options({ requests: 5, classes: oneClass }));
    trace[3].promptTokens = 20;
    expect(fitsContext(trace, 24)).toMatchObject({ kind: 'request', id: 3, class: 'only', tokens: 28 });
    expect(fitsContext(trace, 28)).toBeNull();
  });
});

describe('validation', () => {
  const bad: [string, Partial<TrafficOptions>, RegExp][] = [
    ['a zero rate', { arrival: { kind: 'poisson', rateRps: 0 } }, /arrival\.rateRps/],
    ['a zero burstiness', { arrival: { kind: 'poisson', rateRps: 1, burstiness: 0 } }, /arrival\.burstiness/],
    ['zero concurrency', { arrival: { kind: 'concurrency', concurrency: 0 } }, /arrival\.concurrency/],
    ['no requests', { requests: 0 }, /requests/],
    ['a fractional request count', { requests: 2.5 }, /requests/],
    ['a fractional seed', { seed: 0.5 }, /seed/],
    ['a zero duration', { durationS: 0 }, /durationS/],
    ['no classes', { classes: [] }, /classes/],
    ['shares summing to 0.9', { classes: [{ ...oneClass[0], share: 0.9 }] }, /classes: shares sum to 0\.9/],
    [
      'a zero-token prompt',
      { classes: [{ ...oneClass[0], prompt: { kind: 'fixed', tokens: 0 } }] },
      /classes\[0\]\.prompt\.tokens/,
    ],
    [
      'a uniform with max < min',
      { classes: [{ ...oneClass[0], output: { kind: 'uniform', min: 5, max: 4 } }] },
      /classes\[0\]\.output\.max/,
    ],
    [
      'a class name used twice',
      {
        classes: [
          { ...oneClass[0], share: 0.5 },
          { ...oneClass[0], share: 0.5 },
        ],
      },
      /classes\[1\]\.name/,
    ],
    ['a priority share over 1', { priorityShare: 1.5 }, /priorityShare/],
    ['a negative prefix share', { prefix: { tokens: 8, share: -0.1 } }, /prefix\.share/],
    ['a zero-token prefix', { prefix: { tokens: 0, share: 0.5 } }, /prefix\.tokens/],
  ];
  for (const [what, over, field] of bad) {
    it(`rejects ${what}, naming the field`, () => {
      expect(() => generateTrace(options(over))).toThrow(SpecError);
      expect(() => generateTrace(options(over))).toThrow(field);
    });
  }

  it('accepts shares summing to 1 within 1e-6', () => {
    const classes = [0.1, 0.2, 0.3, 0.4 + 5e-7].map((share, i) => ({ ...oneClass[0], name: `c${i}`, share }));
    expect(generateTrace(options({ requests: 3, classes }))).toHaveLength(3);
  });
});

describe('JSONL', () => {
  it('round-trips a trace, arrivals to the nanosecond', () => {
    const trace = generateTrace(
      options({ requests: 500, seed: 11, prefix: { tokens: 64, share: 0.4 }, priorityShare: 0.25 }),
    );
    const back = traceFromJsonl(traceToJsonl(trace));
    expect(back).toHaveLength(500);
    back.forEach((r, i) => {
      expect({ ...r, arrivalMs: 0 }).toEqual({ ...trace[i], arrivalMs: 0 });
      expect(Math.abs(r.arrivalMs - trace[i].arrivalMs)).toBeLessThanOrEqual(1e-6); // 1e-9 s
    });
  });

  it('writes exactly the documented fields, one line per request', () => {
    const r: TraceRequest = {
      id: 0,
      arrivalMs: 1234.5678901234,
      promptTokens: 40,
      outputTokens: 9,
      prefixId: 0,
      prefixTokens: 32,
      class: 'rag',
      priority: 1,
    };
    const text = traceToJsonl([r, { ...r, id: 1, arrivalMs: 2000, prefixId: null, prefixTokens: 0 }]);
    const lines = text.split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe('');
    expect(JSON.parse(lines[0])).toEqual({
      arrival_s: 1.23456789,
      prompt_len: 40,
      output_len: 9,
      prefix_id: 0,
      class: 'rag',
      priority: 1,
      prefix_len: 32,
    });
    expect(JSON.parse(lines[1])).toMatchObject({ arrival_s: 2, prefix_id: null, prefix_len: 0 });
  });

  it('sorts unsorted arrivals, keeps file order as ids, skips blank lines and unknown fields', () => {
    const text = [
      '{"arrival_s":2,"prompt_len":5,"output_len":3,"prefix_id":null,"class":"a","priority":0}',
      '',
      '{"arrival_s":0.5,"prompt_len":6,"output_len":2,"prefix_id":3,"prefix_len":2,"class":"b","priority":1,"note":"x"}\r',
      '{"arrival_s":0.5,"prompt_len":7,"output_len":1,"prefix_id":null,"prefix_len":0,"class":"c","priority":0}',
    ].join('\n');
    expect(traceFromJsonl(text)).toEqual([
      {
        id: 1,
        arrivalMs: 500,
        promptTokens: 6,
        outputTokens: 2,
        prefixId: 3,
        prefixTokens: 2,
        class: 'b',
        priority: 1,
      },
      {
        id: 2,
        arrivalMs: 500,
        promptTokens: 7,
        outputTokens: 1,
        prefixId: null,
        prefixTokens: 0,
        class: 'c',
        priority: 0,
      },
      {
        id: 0,
        arrivalMs: 2000,
        promptTokens: 5,
        outputTokens: 3,
        prefixId: null,
        prefixTokens: 0,
        class: 'a',
        priority: 0,
      },
    ]);
  });

  const good = '{"arrival_s":0,"prompt_len":5,"output_len":3,"prefix_id":null,"class":"a","priority":0}';
  const errors: [string, string, RegExp][] = [
    ['bad JSON', '{"arrival_s":0,', /line 2: not valid JSON/],
    [
      'a missing field',
      '{"arrival_s":0,"prompt_len":5,"prefix_id":null,"class":"a","priority":0}',
      /line 2: output_len/,
    ],
    ['a negative length', good.replace('"prompt_len":5', '"prompt_len":-5'), /line 2: prompt_len/],
    ['a zero output', good.replace('"output_len":3', '"output_len":0'), /line 2: output_len/],
    ['a negative arrival', good.replace('"arrival_s":0', '"arrival_s":-1'), /line 2: arrival_s/],
    ['an infinite arrival', good.replace('"arrival_s":0', '"arrival_s":1e999'), /line 2: arrival_s/],
    ['a string arrival', good.replace('"arrival_s":0', '"arrival_s":"0"'), /line 2: arrival_s/],
    [
      'a prefix_id without prefix_len',
      good.replace('"prefix_id":null', '"prefix_id":1'),
      /line 2: prefix_len/,
    ],
    [
      'a prefix as long as the prompt',
      good.replace('"prefix_id":null', '"prefix_id":1,"prefix_len":5'),
      /line 2: prefix_len/,
    ],
    [
      'a prefix_len without prefix_id',
      good.replace('"prefix_id":null', '"prefix_id":null,"prefix_len":2'),
      /line 2: prefix_len/,
    ],
    ['an array', '[1,2]', /line 2: \(root\)/],
  ];
  for (const [what, line, message] of errors) {
    it(`rejects ${what}, naming the line and field`, () => {
      const text = `${good}\n${line}\n${good}\n`;
      expect(() => traceFromJsonl(text)).toThrow(SpecError);
      expect(() => traceFromJsonl(text)).toThrow(message);
    });
  }

  it('rejects an empty file', () => {
    expect(() => traceFromJsonl('\n\n')).toThrow(SpecError);
  });
});
