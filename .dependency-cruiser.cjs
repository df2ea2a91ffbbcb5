/**
 * The import check (`npm run check:layers`, part of `npm test`): the layers of src/, top to bottom,
 * written down once, here. A module may import from its own layer or any layer below it; an import
 * that runs up the list, or any cycle, fails the check. docs/architecture.md draws the same list.
 */
const LAYERS = [
  // What people and programs talk to: the page (the CLIs in bench/ sit above all of src/).
  { name: 'ui', path: '^src/ui/' },
  // Where the engine runs: the browser's worker or a Node process on Dawn, behind the typed EngineApi.
  { name: 'runtime', path: '^src/runtime/' },
  // The run: prepare, engine set-up, each workload from the registry, collect, build the result.
  { name: 'run', path: '^src/run/' },
  // One runner per workload, and the runner table.
  { name: 'workloads', path: '^src/workloads/' },
  // The load test's scheduler and traffic, speculative decoding, the capacity estimator.
  { name: 'serving', path: '^src/(serve|speculative|capacity)/' },
  // Roofs, cost model, placement, autotuning and its search.
  { name: 'measure', path: '^src/measure/' },
  // The result: its versioned schema, migrations, exports, comparison of runs.
  { name: 'results', path: '^src/results/' },
  // Other engines on the same weights (llama.cpp): the peer interface, its section, agreement, report.
  { name: 'peers', path: '^src/peers/' },
  // The BenchSpec and the workload descriptors (settings, fit, needs, result section, report).
  { name: 'spec', path: '^src/spec/' },
  // The kernel-case catalogue: shape, CPU reference and tolerance of every kernel check.
  { name: 'checks', path: '^src/checks/' },
  // The model: config, weights and their files, upload, graph, plans, forward, reference.
  { name: 'model', path: '^src/model/' },
  // One class per kernel, its families and limits, the per-op CPU references.
  { name: 'kernels', path: '^src/kernels/' },
  // The paged KV cache.
  { name: 'kv', path: '^src/kv/' },
  // Device, profiler, buffers, pipelines.
  { name: 'gpu', path: '^src/gpu/' },
  // The GGUF block types: one module per type (layout, ggml's dequantization, repack) and the registry.
  { name: 'quant', path: '^src/quant/' },
  // Leaves: errors, statistics, weight formats, error figures, Markdown helpers, seeded randomness.
  { name: 'leaves', path: '^src/[^/]+$' },
];

/** Tests may import what they test from anywhere; the rules are about the product's own imports. */
const TESTS = '\\.test\\.ts$';

const upward = LAYERS.slice(1).map((layer, i) => ({
  name: `no-upward-from-${layer.name}`,
  comment: `${layer.name} may import only from its own layer and those below it`,
  severity: 'error',
  from: { path: layer.path, pathNot: TESTS },
  to: { path: LAYERS.slice(0, i + 1).map((l) => l.path) },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'an import cycle, among files of one layer or across layers',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...upward,
    {
      name: 'no-test-code-in-src',
      comment: 'product code in src/ never imports the tests, their fixtures or the CLIs',
      severity: 'error',
      from: { path: '^src/', pathNot: TESTS },
      to: { path: '^(e2e|test-support|bench)/' },
    },
    {
      name: 'no-ui-below-the-page',
      comment: 'the CLIs and the tests reach the engine through src/runtime and the CLIs never load the page',
      severity: 'error',
      from: { path: '^bench/' },
      to: { path: '^src/ui/' },
    },
    {
      name: 'native-peer-only-in-its-process',
      comment:
        'llama.cpp (node-llama-cpp, native code) is loaded only by the peer process runtime/node/peer-host.ts, so an abort there cannot end a run, and the page never bundles it',
      severity: 'error',
      from: { pathNot: '^src/(runtime/node/peer-host|peers/llama-cpp)\\.ts$' },
      to: { path: '(^|/)node-llama-cpp(/|$)|^src/peers/llama-cpp\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'wllama-only-in-the-page',
      comment:
        'wllama (llama.cpp in WebAssembly, 8.8 MB) is loaded only by peers/wllama.ts, which only the page imports, on demand',
      severity: 'error',
      from: { pathNot: '^src/(peers/wllama|ui/main|ui/peer-run)\\.ts$' },
      to: { path: '(^|/)@wllama/|^src/peers/wllama\\.ts$', dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)node_modules/|\\.wgsl' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
  },
};
