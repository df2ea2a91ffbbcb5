import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { stopWhenLauncherGone } from './launcher-watch.ts';

/** A pid that was alive and is now gone (reaped): a short child that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn('true');
  await new Promise((ok) => child.once('exit', ok));
  return child.pid as number;
}

describe('stopWhenLauncherGone', () => {
  it('stops at the first tick when a launcher read earlier is already gone', async () => {
    const gone = await deadPid();
    let stopped = 0;
    stopWhenLauncherGone(() => stopped++, [process.pid, gone], 20);
    await new Promise((ok) => setTimeout(ok, 120));
    expect(stopped).toBe(1);
  });

  it('keeps serving while every launcher lives, and watches nothing without one', async () => {
    let stopped = 0;
    const unwatch = stopWhenLauncherGone(() => stopped++, [process.pid], 20);
    stopWhenLauncherGone(() => stopped++, [], 20);
    await new Promise((ok) => setTimeout(ok, 120));
    unwatch();
    expect(stopped).toBe(0);
  });
});
