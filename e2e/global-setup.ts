import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildIsFresh } from '../bench/build-fresh.ts';

/**
 * Before any test: the build must be newer than every source, since the tests run the built page,
 * hosts and CLIs (e2e/cli.ts), and a stale one would test old code; then a cache folder of the
 * run's own (BENCH_CACHE_DIR, inherited by the workers and every CLI they start), so no test reads
 * the autotuner's winners a developer's runs left in results/.cache, and no test leaves any there.
 */
export default function globalSetup(): void {
  if (!buildIsFresh(process.cwd())) {
    throw new Error('the build is older than the sources (or missing): run `npm run build` first');
  }
  process.env.BENCH_CACHE_DIR = mkdtempSync(join(tmpdir(), 'bench-e2e-cache-'));
}
