import { execFile } from 'node:child_process';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

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
