import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileSlug, formatFor, toMarkdown } from '../src/results/export.ts';
import { buildLeaderboard, leaderboardToMarkdown } from '../src/results/leaderboard.ts';
import { type BenchResult, BenchResultSchema } from '../src/results/schema.ts';
import type { Progress } from '../src/runtime/api.ts';
import type { BenchSpec } from '../src/spec/schema.ts';
import { type EngineSession, engineMessage, openEngine } from './engine.ts';
import { type RemoteEndpoint, redactEndpoint, remoteRecord } from './remote.ts';

/**
 * A fleet: the same spec in one remote browser after another (never two at once, so no device
 * shares a network or this machine's CPU with another while it is timed). Each device's result is
 * written as soon as it finishes, named by its adapter, with where it ran (`env.remote`); a device
 * that cannot be reached, refuses the client's version or is lost mid-run is reported and the
 * others go on. The fleet ends with a table of the devices (the leaderboard's).
 */
export interface FleetOptions {
  remotes: readonly RemoteEndpoint[];
  spec: BenchSpec;
  pageUrl?: string;
  modelDir?: string;
  outDir: string;
  runId: (device: number) => string;
  progress: (p: Progress) => void;
  /** The session in flight, so Ctrl-C can cancel it. */
  onSession: (session: EngineSession | undefined) => void;
  interrupted: () => boolean;
}

export interface FleetOutcome {
  endpoint: string;
  /** The result files written, or none. */
  files: string[];
  status: BenchResult['status'] | 'unreachable' | 'lost';
  error?: string;
}

/** A file stem in `dir` named by the adapter, numbered when two devices share a name. */
function freeStem(dir: string, adapter: string): string {
  const base = fileSlug(adapter);
  for (let n = 1; ; n++) {
    const stem = join(dir, n === 1 ? base : `${base}-${n}`);
    if (!existsSync(`${stem}.json`)) return stem;
  }
}

/** Whether an error says the browser or its connection went away. */
function isDisconnect(message: string): boolean {
  return /has been closed|disconnected|Target closed|Browser closed|WebSocket|socket hang up|ECONNRESET/i.test(
    message,
  );
}

export async function runFleet(o: FleetOptions): Promise<FleetOutcome[]> {
  mkdirSync(o.outDir, { recursive: true });
  const outcomes: FleetOutcome[] = [];
  const results: { name: string; result: BenchResult }[] = [];
  for (const [i, remote] of o.remotes.entries()) {
    const shown = redactEndpoint(remote.endpoint);
    const tag = `device ${i + 1}/${o.remotes.length} (${remote.kind} ${shown})`;
    if (o.interrupted()) {
      outcomes.push({
        endpoint: shown,
        files: [],
        status: 'cancelled',
        error: 'not run: the fleet was interrupted',
      });
      continue;
    }
    console.error(`fleet: ${tag}: connecting…`);
    let session: EngineSession;
    try {
      session = await openEngine({ runtime: 'browser', remote, pageUrl: o.pageUrl, modelDir: o.modelDir });
    } catch (e) {
      const error = engineMessage(e).replace(/^RuntimeUnavailableError: /, '');
      console.error(`fleet: ${tag}: ${error}`);
      outcomes.push({ endpoint: shown, files: [], status: 'unreachable', error });
      continue;
    }
    o.onSession(session);
    const adapter = session.gpu.adapter;
    console.error(
      `fleet: ${tag}: ${adapter.description || adapter.vendor || 'unknown adapter'}, ${session.version}`,
    );
    let points = 0;
    try {
      const result = await session.run(o.spec, o.runId(i), (p) => {
        if (p.point) points++;
        o.progress({ ...p, label: `device ${i + 1}: ${p.label}` });
      });
      result.env.remote = remoteRecord(remote);
      BenchResultSchema.parse(result);
      const stem = freeStem(o.outDir, adapter.description || `${adapter.vendor}-${adapter.architecture}`);
      writeFileSync(`${stem}.json`, formatFor(result, 'json'));
      writeFileSync(`${stem}.md`, toMarkdown(result));
      const files = [`${stem}.json`, `${stem}.md`];
      console.error(`fleet: ${tag}: ${result.status}; wrote ${files.join(', ')}`);
      outcomes.push({ endpoint: shown, files, status: result.status, error: result.error?.message });
      results.push({ name: `${stem}.json`, result });
    } catch (e) {
      const message = engineMessage(e);
      const error = isDisconnect(message)
        ? `the browser disconnected mid-run after ${points} point${points === 1 ? '' : 's'} (its server stopped, or the network or the device went away); a run cut off in the page is not a whole result, so none is written for this device`
        : message;
      console.error(`fleet: ${tag}: ${error}`);
      outcomes.push({ endpoint: shown, files: [], status: isDisconnect(message) ? 'lost' : 'failed', error });
    } finally {
      o.onSession(undefined);
      await session.close().catch(() => undefined);
    }
  }
  if (results.length > 0) {
    const table = leaderboardToMarkdown(buildLeaderboard(results)).replace(
      /^# Device leaderboard/,
      '# Fleet',
    );
    writeFileSync(join(o.outDir, 'fleet.md'), table);
    console.log(table);
  }
  console.log(fleetSummary(outcomes));
  return outcomes;
}

/** One line per device: where it ran, how it ended, and its files or its error. */
export function fleetSummary(outcomes: readonly FleetOutcome[]): string {
  const lines = ['| device | endpoint | outcome | files or error |', '| ---: | --- | --- | --- |'];
  for (const [i, o] of outcomes.entries()) {
    const what = (o.files.length > 0 ? o.files.join(', ') : (o.error ?? '')).replace(/\|/g, '\\|');
    lines.push(`| ${i + 1} | ${o.endpoint} | ${o.status} | ${what} |`);
  }
  return `${lines.join('\n')}\n`;
}
