// `node --import ./bench/probes/raw.mjs --import tsx …`: lets a probe import src/ as the build
// does, where WGSL comes in through Vite's `?raw` imports (raw-hooks.mjs answers them from disk).
import { register } from 'node:module';

register('./raw-hooks.mjs', import.meta.url);
