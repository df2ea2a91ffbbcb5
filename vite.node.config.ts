import { defineConfig } from 'vite';
import { BUILT_CLIS } from './bench/built-clis.ts';

/**
 * The native runtime's engine host and the Node side of the test harness, built for Node: the same
 * engine modules as the browser's worker, with the WGSL inlined as strings (the `?raw` imports) and
 * `webgpu` (Dawn) left external. Beside them, the CLIs that `npm run bench|verify|generate|serve-api`
 * run (bench/built.ts): plain JavaScript starts in 0.46 s of CPU here, against 1.3 s for tsx
 * compiling the same modules' TypeScript at each start (the e2e suite starts them about 100 times).
 */
export default defineConfig({
  build: {
    ssr: true,
    outDir: 'dist-node',
    emptyOutDir: true,
    target: 'node20',
    rollupOptions: {
      input: {
        host: 'src/runtime/node/host.ts',
        harness: 'e2e/harness/node-host.ts',
        peer: 'src/runtime/node/peer-host.ts',
        api: 'src/runtime/node/api-host.ts',
        ...Object.fromEntries(BUILT_CLIS.map((name) => [`cli-${name}`, `bench/${name}.ts`])),
      },
      output: { entryFileNames: '[name].mjs', chunkFileNames: '[name]-[hash].mjs' },
    },
  },
  // node-llama-cpp stays a package: its native binaries are found beside it, and it is optional.
  ssr: { external: ['webgpu', 'node-llama-cpp'] },
});
