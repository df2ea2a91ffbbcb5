/**
 * The second half of the import check: what plain Node loads. The CLIs (run by tsx), the Playwright
 * specs and the fixtures they load cannot import WGSL (`?raw` is a Vite import), so at run time
 * (type-only imports are erased) they must not reach engine code that does; the harness pages and
 * the native host are built by Vite and may. Run after the layer check by `npm run check:layers`.
 */
const TESTS = '\\.test\\.ts$';
/** Kernel probes run under a loader hook that answers `?raw` from disk (bench/probes/raw.mjs), so they may. */
const PROBES = '^bench/probes/';

module.exports = {
  forbidden: [
    {
      name: 'no-shaders-outside-the-bundles',
      comment:
        'the CLIs (tsx), the Playwright specs and the fixtures they load run in plain Node, which cannot import WGSL (`?raw` is a Vite import): they must not reach engine code that does; the harness pages and the native host are built by Vite',
      severity: 'error',
      from: {
        path: '^(bench/|test-support/|e2e/[^/]+\\.ts$|e2e/harness/(client|protocol)\\.ts$)',
        pathNot: [TESTS, PROBES],
      },
      to: { path: '\\.wgsl', reachable: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)node_modules/' },
    // Only what survives compilation: a type-only import loads nothing.
    tsPreCompilationDeps: false,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
  },
};
