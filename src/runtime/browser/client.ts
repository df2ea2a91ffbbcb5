import { type Remote, wrap } from 'comlink';
import { type EngineApi, installErrorTransfer } from '../api.ts';

/** Starts the engine worker and returns its typed remote. */
export function startEngine(): Remote<EngineApi> {
  installErrorTransfer();
  const worker = new Worker(new URL('./worker.ts', import.meta.url), { type: 'module', name: 'engine' });
  return wrap<EngineApi>(worker);
}
