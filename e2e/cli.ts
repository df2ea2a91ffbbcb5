import { execFile } from 'node:child_process';
import { builtCliOf } from '../bench/built-clis.ts';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The flags that run a CLI's engine natively on Dawn. A CLI test whose subject is not the browser
 * runtime passes them: the engine is the same code in the page's worker and in Node, on the same
 * SwiftShader, and the browser costs each run about 7 s more here (Chromium's start, the page, the
 * worker; a kernel suite took 45 s against 38 s natively). The worker's side of each suite is
 * driven through the page by its -ui test, and the CLI's own browser path by quick.spec.ts
 * (--runtime both), generate.spec.ts, verify.spec.ts, capacity.spec.ts and the error-path tests.
 */
export const NATIVE = ['--runtime', 'node'] as const;

/**
 * Node's arguments for one of the bench/ CLIs: the built one (dist-node/cli-<name>.mjs, what
 * `npm run <name>` runs) where the build has it, else its source under tsx's loader in the same
 * process (`node --import tsx`; `npx tsx` would resolve npx and start a second Node process first).
 * The built CLI starts in 0.46 s of CPU here against 1.3 s under tsx, over about 100 starts. The
 * build is the one the suite runs against: global-setup.ts refuses a stale one.
 */
export function cliArgv(script: string, args: readonly string[]): string[] {
  const built = builtCliOf(script);
  return built ? [built, ...args] : ['--import', 'tsx', script, ...args];
}

/** Runs one of the bench/ CLIs against the built dist/, as a user would; never rejects. */
export function runCli(
  script: string,
  args: readonly string[],
  timeoutMs = 170_000,
  env: Record<string, string> = {},
): Promise<CliRun> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      cliArgv(script, args),
      { timeout: timeoutMs, maxBuffer: 64 << 20, env: { ...process.env, ...env } },
      (error, stdout, stderr) => {
        done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}
