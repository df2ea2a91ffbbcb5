/**
 * dawn.node waits for the GPU by polling: while a map, a work-done or an async pipeline is pending,
 * it schedules its native poll with setImmediate, again and again, so the JS thread spins at 100%
 * for the whole wait (about 100,000 polls a second here). On a real GPU that burns a core; on
 * SwiftShader, whose "GPU" is the CPU's other threads, it takes a core from the work being waited
 * for (bench/dawn-poll-probe.ts measures both ways).
 *
 * The poll is kept, but a long wait naps between polls: the nap is a tenth of the time this wait
 * has lasted so far, at most NAP_MAX_MS (Atomics.wait: a sleep, no CPU). A wait of under half a
 * millisecond polls as before, and no wait is lengthened by more than a tenth, nor by more than
 * NAP_MAX_MS, so the wall clock around a GPU step moves by at most that. Only dawn.node's own poll
 * is touched: its callback is a native function; every JavaScript caller of setImmediate gets the
 * original.
 */

/** The longest nap between two polls of one wait. */
export const NAP_MAX_MS = 1;
/** The nap's share of the time the wait has lasted. */
const NAP_SHARE = 0.1;
/** Naps shorter than this are skipped: they cost more in the call than they save. */
const NAP_MIN_MS = 0.05;
/** A gap between two polls longer than this starts a new wait. */
const NEW_WAIT_GAP_MS = 2;

let installed = false;

/**
 * Replaces the global setImmediate with one that naps dawn.node's long polls; idempotent.
 * `BENCH_DAWN_SPIN=1` leaves dawn.node's own spinning poll (to compare the two).
 */
export function installDawnPollNaps(): void {
  if (installed || process.env.BENCH_DAWN_SPIN === '1') return;
  installed = true;
  const original = globalThis.setImmediate;
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  const isNative = new WeakMap<object, boolean>();
  let lastPoll = Number.NEGATIVE_INFINITY;
  let waitStart = 0;
  const napping = <A extends unknown[]>(callback: (...args: A) => void, ...args: A) => {
    let native = isNative.get(callback);
    if (native === undefined) {
      native = Function.prototype.toString.call(callback).includes('[native code]');
      isNative.set(callback, native);
    }
    if (!native) return original(callback, ...args);
    return original(() => {
      let now = performance.now();
      if (now - lastPoll > NEW_WAIT_GAP_MS) waitStart = now;
      const nap = Math.min(NAP_MAX_MS, (now - waitStart) * NAP_SHARE);
      if (nap >= NAP_MIN_MS) {
        Atomics.wait(sleeper, 0, 0, nap);
        now = performance.now();
      }
      lastPoll = now;
      callback(...args);
    });
  };
  // Node's setImmediate carries a promisified form; keep it.
  Object.assign(napping, original);
  globalThis.setImmediate = napping as typeof setImmediate;
}
