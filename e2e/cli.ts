import { execFile } from 'node:child_process';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
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
      'npx',
      ['tsx', script, ...args],
      { timeout: timeoutMs, maxBuffer: 64 << 20, env: { ...process.env, ...env } },
      (error, stdout, stderr) => {
        done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}
