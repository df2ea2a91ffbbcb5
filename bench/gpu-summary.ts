// npx tsx bench/gpu-summary.ts verify.txt quick.json kernels.json: the short summary that
// bench/gpu-check.sh writes next to its results (adapter, roofs, bound of each pass, kernel shares).
import { readFileSync } from 'node:fs';
import { fixed } from '../src/markdown.ts';
import { parseResultFile } from '../src/results/compare.ts';
import { adapterLabel } from '../src/results/export.ts';

const [verifyLog, quickFile, kernelsFile] = process.argv.slice(2);
const quick = parseResultFile(readFileSync(quickFile, 'utf8'), quickFile);
const kernels = parseResultFile(readFileSync(kernelsFile, 'utf8'), kernelsFile);
const p = quick.peaks;
const lines = [
  `# GPU check: ${adapterLabel(quick.env.adapter)}`,
  '',
  `- runtime: ${quick.env.runtime?.name ?? 'browser'}, ${quick.env.browser}, backend ${quick.env.runtime?.backend ?? '?'}; fallback adapter: ${quick.env.adapter.isFallbackAdapter}`,
  `- verify (ci-tiny against the CPU reference): ${/PASS/.test(readFileSync(verifyLog, 'utf8')) ? 'PASS' : 'FAIL'}`,
  `- roofs: FMA ${fixed(p.fmaGflops, 1)} GFLOP/s, copy ${fixed(p.copyGBps, 1)} GB/s, dependent dispatch ${fixed(p.dispatchUs, 1)} µs, submit ${fixed(p.submitUs, 1)} µs`,
  `- quick suite (${quick.model.preset}, ${quick.status}, validation ${quick.validation.passed ? 'passed' : 'FAILED'}):`,
  ...quick.points.map(
    (x) =>
      `  - ${x.pass} ${x.pass === 'prefill' ? `L=${x.tokens}` : `depth=${x.depth}`}: ${fixed(x.medianMs, 3)} ms (${x.timebase}), ${x.bound}-bound, ${fixed(x.roofPct, 1)}% of that roof`,
  ),
  `- kernel suite (${kernels.status}):`,
  ...(kernels.kernelPoints ?? [])
    .filter((k) => k.name === 'matmul' || k.name === 'gemv')
    .map(
      (k) =>
        `  - ${k.name} ${k.variant} ${JSON.stringify(k.shape)}: ${fixed(k.gflops, 1)} GFLOP/s, ${fixed(k.gbps, 1)} GB/s, ${k.bound}-bound, ${fixed(k.roofPct, 1)}% of that roof`,
    ),
];
console.log(lines.join('\n'));
