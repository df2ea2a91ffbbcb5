import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { findBrowser, webgpuArgs } from '../bench/browser.ts';
import { BenchResultSchema } from '../src/results/schema.ts';
import { cliArgv } from './cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'fleet-'));

/** Starts a process in its own group (so its browser dies with it) and waits for a line matching `ready`. */
function start(cmd: string, args: string[], ready: RegExp): Promise<{ child: ChildProcess; match: string }> {
  const child = spawn(cmd, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let seen = '';
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      const m = ready.exec(seen);
      if (m) resolve({ child, match: m[1] });
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.on('exit', (code) => reject(new Error(`${cmd} exited (${code}) before it was ready:\n${seen}`)));
  });
}

const killGroup = (child: ChildProcess) => {
  try {
    if (child.pid) process.kill(-child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
};

/**
 * Stands in for a browser server of another Playwright release: it refuses the WebSocket upgrade
 * exactly as Playwright's server does for a client of a different major.minor (HTTP 428 and the
 * two versions), which one installed Playwright cannot produce against itself.
 */
function otherVersionServer(): Promise<Server> {
  const server = createServer();
  server.on('upgrade', (_req, socket) => {
    socket.end(
      'HTTP/1.1 428 Precondition Required\r\n\r\n' +
        '╔══════════════════════════════╗\n║ Playwright version mismatch: ║\n' +
        '║   - server version: v1.40.0  ║\n║   - client version: v1.65.1  ║\n╚══════════════════════════════╝\n',
    );
  });
  return new Promise((done) => server.listen(0, '127.0.0.1', () => done(server)));
}

test('a fleet of remote browsers: a Playwright browser server and a DevTools endpoint each give a result named by its adapter; a server killed mid-run, one not there and one of another Playwright version are reported while the others are kept', async () => {
  test.setTimeout(240_000);
  const tsx = ['--import', 'tsx', 'bench/browser-server.ts', '--port', '0'];
  const endpointLine = /browser server: (ws:\/\/\S+)/;
  const [a, c] = await Promise.all([
    start(process.execPath, tsx, endpointLine),
    start(process.execPath, tsx, endpointLine),
  ]);
  // A Chromium of this machine with its DevTools port open, as a device cloud offers one.
  const chromium = findBrowser().executablePath ?? 'chromium';
  const cdp = await start(
    chromium,
    [
      '--headless=new',
      '--remote-debugging-port=0',
      `--user-data-dir=${mkdtempSync(join(tmpdir(), 'cdp-'))}`,
      ...webgpuArgs(),
      'about:blank',
    ],
    /DevTools listening on (ws:\/\/\S+)/,
  );
  const mismatch = await otherVersionServer();
  const mismatchUrl = `ws://127.0.0.1:${(mismatch.address() as AddressInfo).port}/webgpu-bench`;
  const dead = 'ws://127.0.0.1:1/webgpu-bench';
  const outDir = join(dir, 'out');
  try {
    const bench = spawn(
      process.execPath,
      cliArgv('bench/bench.ts', [
        '--connect',
        `${a.match},${c.match}`,
        '--connect',
        `${dead},${mismatchUrl}`,
        '--cdp',
        cdp.match,
        '--prefill',
        '16',
        '--depth',
        '',
        '--reps',
        '3',
        '--no-autotune',
        '--out-dir',
        outDir,
      ]),
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    let stdout = '';
    bench.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => {
      bench.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        // The second device's server dies once its run has begun.
        if (/device 2: /.test(stderr)) killGroup(c.child);
      });
      bench.on('exit', resolve);
    });
    expect(code, stderr).toBe(1);
    // Two devices finished, each in its own file named by its adapter.
    const files = readdirSync(outDir)
      .filter((f) => f.endsWith('.json'))
      .sort();
    expect(files).toEqual(['swiftshader-device-subzero-2.json', 'swiftshader-device-subzero.json']);
    const results = files.map((f) =>
      BenchResultSchema.parse(JSON.parse(readFileSync(join(outDir, f), 'utf8'))),
    );
    expect(results.map((r) => r.status)).toEqual(['complete', 'complete']);
    expect(results.map((r) => r.env.remote?.kind).sort()).toEqual(['cdp', 'connect']);
    expect(results.find((r) => r.env.remote?.kind === 'connect')?.env.remote).toEqual({
      endpoint: a.match,
      kind: 'connect',
      playwright: '1.65.1',
    });
    for (const r of results) expect(r.points.map((p) => `${p.pass} ${p.tokens}`)).toEqual(['prefill 16']);
    // The fleet table ranks the two; each lost device says what happened.
    expect(readFileSync(join(outDir, 'fleet.md'), 'utf8')).toMatch(
      /\| 1 \| SwiftShader[^\n]*\n\| 2 \| SwiftShader/,
    );
    expect(stderr).toMatch(/device 2\/5 [^\n]*the browser disconnected mid-run after \d+ points?/);
    expect(stderr).toMatch(/device 3\/5 [^\n]*cannot reach the browser server \(connection refused\)/);
    expect(stderr).toMatch(
      /device 4\/5 [^\n]*the browser server runs Playwright 1\.40\.0 and this client 1\.65\.1; a client and a server must share major\.minor/,
    );
    expect(stderr).toContain('fleet: 2 of 5 devices finished');
    expect(stdout).toMatch(/\| 2 \| ws:\/\/127\.0\.0\.1:\d+\/webgpu-bench \| lost \|/);
  } finally {
    for (const p of [a, c, cdp]) killGroup(p.child);
    mismatch.close();
  }
});
