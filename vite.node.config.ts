import { defineConfig } from 'vite';

/**
 * The native runtime's engine host and the Node side of the test harness, built for Node: the same
 * engine modules as the browser's worker, with the WGSL inlined as strings (the `?raw` imports) and
 * `webgpu` (Dawn) left external.
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
      },
      output: { entryFileNames: '[name].mjs', chunkFileNames: '[name]-[hash].mjs' },
    },
  },
  // node-llama-cpp stays a package: its native binaries are found beside it, and it is optional.
  ssr: { external: ['webgpu', 'node-llama-cpp'] },
});
