import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Before any test: a cache folder of the run's own (BENCH_CACHE_DIR, inherited by the workers and
 * every CLI they start), so no test reads the autotuner's winners a developer's runs left in
 * results/.cache, and no test leaves any there.
 */
export default function globalSetup(): void {
  process.env.BENCH_CACHE_DIR = mkdtempSync(join(tmpdir(), 'bench-e2e-cache-'));
}
