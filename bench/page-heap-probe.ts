/**
 * The page's memory while it loads a big GGUF from a picked File (docs/gguf.md, "Big files"): the
 * project's writer makes a ~1 GB file (qwen2.5-0.5b's shape, seeded, F16: its largest tensor is the
 * 151,936 × 896 embedding, 272 MB), headless Chromium picks it in the page and runs one small
 * point (prefill 8, three repetitions, no autotune), and the renderer processes' resident memory
 * (VmRSS of every `--type=renderer` process: the page, its engine worker, their JS heaps and every
 * ArrayBuffer; not the GPU process, where the GPU buffers live) is sampled every 100 ms against the
 * moment before the pick. Resident memory holds the JS heap and more, so a peak under the bound
 * bounds the heap too. Linux only (/proc).
 *
 *   npm run build && npx tsx bench/page-heap-probe.ts [--file F.gguf]
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { presetConfig } from '../src/model/config.ts';
import { writeGguf } from '../src/model/gguf-writer.ts';
import { randomWeights } from '../src/model/weights.ts';
import { launchBrowser } from './browser.ts';
import { DIST_DIR, serveApp } from './server.ts';

const MIB = 1024 * 1024;

function rendererRssBytes(): number {
  let total = 0;
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!cmd.includes('--type=renderer')) continue;
      const rss = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB$/m);
      if (rss) total += Number(rss[1]) * 1024;
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return total;
}

const fileFlag = process.argv.indexOf('--file');
const file = fileFlag > 0 ? process.argv[fileFlag + 1] : join(tmpdir(), 'page-heap-qwen2.5-0.5b.F16.gguf');
if (!existsSync(file)) {
  console.error(`writing ${file} (qwen2.5-0.5b, seeded, F16)…`);
  writeFileSync(file, writeGguf(randomWeights(presetConfig('qwen2.5-0.5b'), 1), { type: 'F16' }));
}
const largestTensor = 151936 * 896 * 2;
console.error(
  `file: ${(statSync(file).size / MIB).toFixed(0)} MiB; largest tensor ${(largestTensor / MIB).toFixed(0)} MiB`,
);

const server = await serveApp({ distDir: DIST_DIR });
const browser = await launchBrowser();
try {
  const page = await browser.newPage();
  await page.goto(`${server.url}/index.html`);
  await page.getByTestId('run').waitFor();
  await page.locator('details.advanced > summary').click();
  await page.getByRole('checkbox', { name: /^Autotune/ }).uncheck();
  await page.getByLabel('Prefill lengths L').fill('8');
  await page.getByLabel('Decode depths').fill('');
  await page.getByLabel('Repetitions').fill('3');
  await page.waitForTimeout(1000);
  // The V8 heaps of the page and of its engine worker, through the DevTools protocol: the browser
  // session attaches to every worker target (not flattened, so commands go through
  // Target.sendMessageToTarget) and asks each for Runtime.getHeapUsage every 100 ms.
  const cdp = await browser.newBrowserCDPSession();
  const heapPeaks = new Map<string, number>();
  const pending = new Map<number, string>();
  let nextId = 1;
  cdp.on('Target.receivedMessageFromTarget', (e) => {
    const msg = JSON.parse(e.message) as { id?: number; result?: { usedSize: number } };
    const who = msg.id !== undefined ? pending.get(msg.id) : undefined;
    if (!who || !msg.result) return;
    pending.delete(msg.id as number);
    heapPeaks.set(who, Math.max(heapPeaks.get(who) ?? 0, msg.result.usedSize));
  });
  const sessions = new Map<string, string>();
  const attachAll = async () => {
    const { targetInfos } = await cdp.send('Target.getTargets');
    for (const t of targetInfos) {
      if (sessions.has(t.targetId) || (t.type !== 'worker' && t.type !== 'page')) continue;
      const { sessionId } = await cdp.send('Target.attachToTarget', { targetId: t.targetId, flatten: false });
      sessions.set(t.targetId, `${t.type}:${sessionId}`);
    }
  };
  const heapOf = (kind: string) =>
    Math.max(0, ...[...heapPeaks].filter(([k]) => k.startsWith(kind)).map(([, v]) => v));
  const baseline = rendererRssBytes();
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rendererRssBytes());
    void attachAll()
      .then(() => {
        for (const who of sessions.values()) {
          const id = nextId++;
          pending.set(id, who);
          void cdp
            .send('Target.sendMessageToTarget', {
              sessionId: who.slice(who.indexOf(':') + 1),
              message: JSON.stringify({ id, method: 'Runtime.getHeapUsage' }),
            })
            .catch(() => {});
        }
      })
      .catch(() => {});
  }, 100);
  const t0 = performance.now();
  await page.locator('#local-model').setInputFiles(file);
  await page.getByTestId('run').click();
  const progress = page.getByTestId('progress');
  await progress.filter({ hasText: /Done|failed|Failed|error/ }).waitFor({ timeout: 1_200_000 });
  clearInterval(sampler);
  const status = (await progress.textContent())?.trim();
  const over = peak - baseline;
  console.log(
    JSON.stringify({
      file,
      fileMiB: Math.round(statSync(file).size / MIB),
      largestTensorMiB: Math.round(largestTensor / MIB),
      workerHeapPeakMiB: Math.round(heapOf('worker') / MIB),
      pageHeapPeakMiB: Math.round(heapOf('page') / MIB),
      heapWithinBound: heapOf('worker') + heapOf('page') <= largestTensor + 64 * MIB,
      rendererRssBaselineMiB: Math.round(baseline / MIB),
      rendererRssPeakMiB: Math.round(peak / MIB),
      peakOverBaselineMiB: Math.round(over / MIB),
      boundMiB: Math.round((largestTensor + 64 * MIB) / MIB),
      rssWithinBound: over <= largestTensor + 64 * MIB,
      seconds: Math.round((performance.now() - t0) / 1000),
      status,
    }),
  );
} finally {
  await browser.close();
  await server.close();
}
