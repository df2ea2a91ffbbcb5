import { defineConfig } from 'vite';

/**
 * The native runtime's engine host, built for Node: the same engine modules as the browser's
 * worker, with the WGSL inlined as strings (the `?raw` imports) and `webgpu` (Dawn) left external.
 */
export default defineConfig({
  build: {
    ssr: 'src/runtime/node/host.ts',
    outDir: 'dist-node',
    emptyOutDir: true,
    target: 'node20',
    rollupOptions: { output: { entryFileNames: 'host.mjs' } },
  },
  ssr: { external: ['webgpu'] },
});
