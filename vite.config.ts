import { copyFileSync, mkdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { defineConfig, type Plugin } from 'vitest/config';
import { llamaPath } from './bench/llama-source.ts';
import { CONTENT_SECURITY_POLICY, ISOLATION_HEADERS } from './src/headers.ts';
import { TRAINED_FILES } from './src/model/config.ts';
import { VOCAB_FILES, vocabFileName } from './src/model/preset-vocab.ts';

/**
 * The presets' vocabularies (src/model/preset-vocab.ts), copied at build time from llama.cpp's
 * release that node-llama-cpp bundles into dist/vocab/, where the page's worker and the Node hosts
 * read them: 15.5 MB served beside the page, none of it in the repository.
 */
function presetVocabularies(): Plugin {
  return {
    name: 'preset-vocabularies',
    apply: 'build',
    closeBundle() {
      const dir = resolve(import.meta.dirname, 'dist', 'vocab');
      mkdirSync(dir, { recursive: true });
      for (const v of VOCAB_FILES)
        copyFileSync(llamaPath(join('models', vocabFileName(v))), join(dir, vocabFileName(v)));
    },
  };
}

/**
 * The trained presets' files (src/model/config.ts, `file`), from models/ in the repository to
 * dist/models/, where the page's worker and the Node hosts read them. A file a preset names and the
 * repository lacks fails the build.
 */
function trainedModels(): Plugin {
  return {
    name: 'trained-models',
    apply: 'build',
    closeBundle() {
      const dir = resolve(import.meta.dirname, 'dist', 'models');
      mkdirSync(dir, { recursive: true });
      for (const file of TRAINED_FILES)
        copyFileSync(resolve(import.meta.dirname, 'models', file), join(dir, file));
    },
  };
}

export default defineConfig({
  plugins: [presetVocabularies(), trainedModels()],
  // Relative asset URLs, so the built app works under any path the CLI serves it from.
  base: './',
  server: { headers: { ...ISOLATION_HEADERS }, host: '127.0.0.1' },
  preview: {
    headers: { ...ISOLATION_HEADERS, 'Content-Security-Policy': CONTENT_SECURITY_POLICY },
    host: '127.0.0.1',
  },
  worker: { format: 'es' },
  // Unit tests only; the browser tests in e2e/ run under Playwright.
  test: {
    include: ['src/**/*.test.ts', 'bench/**/*.test.ts', 'test-support/**/*.test.ts'],
    // Vitest leaves a core free by default: one worker on the 2-core CI machine. The unit tests
    // wait on nothing, so every core runs one (81 s → 43 s for `npm run test:unit` here).
    maxWorkers: availableParallelism(),
    // Each worker keeps its modules between test files rather than importing them afresh for each:
    // 71 → 37 s for `npx vitest run` here (imports 31 → 8 s), every test passing, also with the
    // files shuffled (--sequence.shuffle.files, two seeds). No test leaves a module-level state
    // another reads: the one global stub (fetch, gguf-load.test.ts) is undone after each test.
    isolate: false,
  },
  build: {
    target: 'es2022',
    // Two chunks pass Vite's 500 kB default, both on purpose: the engine's worker (about 590 kB: the
    // engine with every WGSL source inlined, all of it needed by the first run) and the page (about
    // 530 kB: the views and charts a result shows at once). Splitting them would add round trips
    // to the first run and save nothing; a chunk past 700 kB still warns.
    chunkSizeWarningLimit: 700,
    outDir: 'dist',
    emptyOutDir: true,
    rollupOptions: {
      input: {
        app: resolve(import.meta.dirname, 'index.html'),
        // The browser-test harness: kernels and model checked against the CPU reference in a real adapter.
        harness: resolve(import.meta.dirname, 'e2e/harness/index.html'),
        // The isolation service worker for hosts without COOP/COEP headers (src/isolation/page.ts):
        // at a fixed name beside index.html, so its scope covers the app wherever it is served.
        'coi-sw': resolve(import.meta.dirname, 'src/isolation/sw.ts'),
      },
      output: {
        entryFileNames: (chunk) => (chunk.name === 'coi-sw' ? 'coi-sw.js' : 'assets/[name]-[hash].js'),
      },
    },
  },
});
