// npx tsx bench/gpu-summary.ts [verify.txt] [quick.json] [kernels.json]: the short summary that
// bench/gpu-check.sh writes next to its results (adapter, roofs, bound of each pass, kernel shares).
import { readFileSync } from 'node:fs';
import { fixed } from '../src/markdown.ts';
import { parseResultFile } from '../src/results/compare.ts';
import { adapterLabel } from '../src/results/export.ts';

// Any of the three, in any order (the kit's SUITES may run a part): .txt is verify's log; a result
// of the kernel suite is told from the quick suite's by its workloads.
const files = process.argv.slice(2);
const verifyLog = files.find((f) => f.endsWith('.txt'));
const results = files
  .filter((f) => f.endsWith('.json'))
  .map((f) => parseResultFile(readFileSync(f, 'utf8'), f));
const kernels = results.find((r) => r.spec.workloads.some((w) => w.kind === 'kernels'));
const quick = results.find((r) => r !== kernels);
const first = quick ?? kernels;
const p = first?.peaks;
const lines = [
  `# GPU check: ${first ? adapterLabel(first.env.adapter) : 'no result'}`,
  '',
  ...(first
    ? [
        `- runtime: ${first.env.runtime?.name ?? 'browser'}, ${first.env.browser}, backend ${first.env.runtime?.backend ?? '?'}; fallback adapter: ${first.env.adapter.isFallbackAdapter}`,
      ]
    : []),
  ...(verifyLog
    ? [
        `- verify (ci-tiny against the CPU reference): ${/PASS/.test(readFileSync(verifyLog, 'utf8')) ? 'PASS' : 'FAIL'}`,
      ]
    : []),
  ...(p
    ? [
        `- roofs: FMA ${fixed(p.fmaGflops, 1)} GFLOP/s, copy ${fixed(p.copyGBps, 1)} GB/s, dependent dispatch ${fixed(p.dispatchUs, 1)} µs, submit ${fixed(p.submitUs, 1)} µs`,
      ]
    : []),
  ...(quick
    ? [
        `- quick suite (${quick.model.preset}, ${quick.status}, validation ${quick.validation.passed ? 'passed' : 'FAILED'}):`,
        ...quick.points.map(
          (x) =>
            `  - ${x.pass} ${x.pass === 'prefill' ? `L=${x.tokens}` : `depth=${x.depth}`}: ${fixed(x.medianMs, 3)} ms (${x.timebase}), ${x.bound}-bound, ${fixed(x.roofPct, 1)}% of that roof`,
        ),
      ]
    : []),
  ...(kernels
    ? [
        `- kernel suite (${kernels.status}):`,
        ...(kernels.kernelPoints ?? [])
          .filter((k) => /^(matmul|gemv)\b/.test(k.name))
          .map(
            (k) =>
              `  - ${k.name} ${k.variant} ${JSON.stringify(k.shape)}: ${fixed(k.gflops, 1)} GFLOP/s, ${fixed(k.gbps, 1)} GB/s, ${k.bound}-bound, ${fixed(k.roofPct, 1)}% of that roof`,
          ),
      ]
    : []),
];
console.log(lines.join('\n'));
