import { readFileSync } from 'node:fs';

/**
 * Ends a long-running command when the npm that started it is gone. `npm run serve-api &` then
 * `kill $!` signals npm (or `npx tsx …`: npm exec), which dies without passing the signal on: its
 * `sh -c` dies too, but tsx and the Node process under it are re-parented and keep the port. So a
 * server started through npm watches the npm processes above it and stops, as on Ctrl-C, once one
 * of them is gone. Ancestors above the nearest npm (the user's shell) are not watched, so
 * `nohup npm run serve-api &` still outlives the shell it was started from; a command started
 * without npm watches nothing. Linux only (/proc); elsewhere it watches nothing.
 *
 * `watched` must be read before the server says it is serving (`npmAncestors()` first thing): a
 * launcher killed as soon as it reads "Serving" is gone from /proc before a chain read afterwards
 * reaches it, and that chain ends early and watches nothing (a CI run lost the port that way).
 * A launcher already gone when watching starts stops the server at the first tick.
 */
export function stopWhenLauncherGone(stop: () => void, watched: number[], everyMs = 500): () => void {
  if (watched.length === 0) return () => {};
  const timer = setInterval(() => {
    if (watched.some((pid) => !alive(pid))) {
      clearInterval(timer);
      stop();
    }
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** This process's ancestors up to and including the nearest npm process; [] when there is none. */
export function npmAncestors(start = process.ppid): number[] {
  const chain: number[] = [];
  for (let pid = start; pid > 1 && chain.length < 16; ) {
    let stat: string;
    let cmdline: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      return [];
    }
    chain.push(pid);
    if (isNpm(cmdline.split('\0'))) return chain;
    // The parent's pid is the fourth field, after the command in parentheses (which may hold spaces).
    pid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  }
  return [];
}

/** npm itself (npm run, npm exec / npx), by its argv: `npm …`, or node running npm-cli.js / npx-cli.js. */
function isNpm(argv: string[]): boolean {
  // npm sets its process title ("npm exec tsx …", "npm run serve-api"): argv[0]'s first word.
  const base = (s: string | undefined) => (s ?? '').split(' ')[0].split('/').pop() ?? '';
  const first = base(argv[0]);
  if (first === 'npm' || first === 'npx') return true;
  return /^(npm|npx)(-cli\.js)?$/.test(base(argv[1])) && /node/.test(first);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
