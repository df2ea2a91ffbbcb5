import { execFile } from 'node:child_process';

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
 * Runs one of the bench/ CLIs against the built dist/, as a user would; never rejects. Node runs it
 * with tsx's loader in the same process (`node --import tsx`): `npx tsx` would resolve npx and start
 * a second Node process first, about half a second of CPU per call here, over 100 calls.
 */
export function runCli(
  script: string,
  args: readonly string[],
  timeoutMs = 170_000,
  env: Record<string, string> = {},
): Promise<CliRun> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', script, ...args],
      { timeout: timeoutMs, maxBuffer: 64 << 20, env: { ...process.env, ...env } },
      (error, stdout, stderr) => {
        done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}
