// npm run kit [-- --platform linux-x64 --out DIR]
// The air-gapped GPU kit: a folder that runs verify, the quick suite and the kernel suite natively
// on a machine with a GPU and nothing else (no Node, no npm, no network): a Node runtime, Dawn's
// dawn.node, and the engine and the CLIs bundled to plain JavaScript, compressed where that is
// needed and unpacked on first run.
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { parseArgs } from 'node:util';

const HELP = `Usage: npm run kit [-- --platform linux-x64 --out DIR]

Builds DIR (default kit/): run.sh [PRESET] runs verify, the quick suite and the kernel suite on the
machine's own adapter with the Node runtime, Dawn and the engine it carries, and writes the results
and a summary. At most ${48} MiB; the Node runtime and dawn.node are xz-compressed and unpacked on the
first run (which needs xz, or python3).

  --platform P   linux-x64 (the only one: the kit carries this machine's own Node runtime)
  --out DIR      where to build it (default kit)
  --level N      xz compression level, 0…9 (default 9; lower builds faster and larger)`;

const MAX_MIB = 48;

function fail(message: string, code = 2): never {
  console.error(`kit: ${message}`);
  process.exit(code);
}

let args: { platform: string; out: string; level: string; help: boolean };
try {
  args = parseArgs({
    options: {
      platform: { type: 'string', default: 'linux-x64' },
      out: { type: 'string', default: 'kit' },
      level: { type: 'string', default: '9' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  }).values as typeof args;
} catch (e) {
  fail(`${(e as Error).message}\n\n${HELP}`);
}
if (args.help) {
  console.log(HELP);
  process.exit(0);
}
const level = Number(args.level);
if (!Number.isInteger(level) || level < 0 || level > 9) fail(`--level takes 0…9, got "${args.level}"`);
if (args.platform !== 'linux-x64')
  fail(
    `--platform ${args.platform}: only linux-x64 can be built (the kit carries this machine's Node runtime and Dawn build)`,
  );
if (`${process.platform}-${process.arch}` !== 'linux-x64')
  fail(
    `the kit is built on linux-x64 (it carries this Node runtime), not ${process.platform}-${process.arch}`,
  );
if (spawnSync('xz', ['--version']).status !== 0)
  fail('xz is needed to build the kit (Debian: apt-get install xz-utils)', 3);

const require = createRequire(import.meta.url);
const webgpuDir = dirname(require.resolve('webgpu/package.json'));
const dawn = join(webgpuDir, 'dist', 'linux-x64', 'dawn.node');
if (!existsSync(dawn)) fail(`${dawn} is missing: npm ci installs it with the webgpu package`);

const out = args.out;
rmSync(out, { recursive: true, force: true });
const app = join(out, 'app');
mkdirSync(join(out, 'payload'), { recursive: true });
mkdirSync(app, { recursive: true });

// 1. The CLIs and the engine host they start, bundled to plain JavaScript with every dependency
// inside. Playwright and the llama.cpp peer stay out: the kit drives no browser and runs no peer,
// and both are loaded only when asked for. The host's WGSL comes in as text, as Vite's `?raw` does.
const esbuild = await import('esbuild');
const rawText: import('esbuild').Plugin = {
  name: 'raw',
  setup(build) {
    build.onResolve({ filter: /\?raw$/ }, (a) => ({
      path: join(a.resolveDir, a.path.replace(/\?raw$/, '')),
      namespace: 'raw',
    }));
    build.onLoad({ filter: /.*/, namespace: 'raw' }, (a) => ({
      contents: readFileSync(a.path, 'utf8'),
      loader: 'text',
    }));
  },
};
// webgpu itself stays outside (its dawn.node is found beside it at run time); its package.json,
// which the host reads for its version, is inlined like any JSON.
const webgpuOutside: import('esbuild').Plugin = {
  name: 'webgpu-outside',
  setup(build) {
    build.onResolve({ filter: /^webgpu$/ }, () => ({ path: 'webgpu', external: true }));
  },
};
await esbuild.build({
  entryPoints: {
    bench: 'bench/bench.ts',
    verify: 'bench/verify.ts',
    'gpu-summary': 'bench/gpu-summary.ts',
    host: 'src/runtime/node/host.ts',
  },
  plugins: [rawText, webgpuOutside],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  outdir: app,
  outExtension: { '.js': '.mjs' },
  splitting: true,
  minify: true,
  legalComments: 'none',
  external: ['@playwright/test', 'playwright', 'playwright-core', 'node-llama-cpp', 'fastify'],
  banner: {
    js: "import { createRequire as __kitRequire } from 'node:module'; const require = __kitRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
// 2. The webgpu package the host imports, with its dawn.node compressed below.
const pkg = join(app, 'node_modules', 'webgpu');
mkdirSync(join(pkg, 'dist', 'linux-x64'), { recursive: true });
for (const f of ['package.json', 'index.js', 'LICENSE.md']) copyFileSync(join(webgpuDir, f), join(pkg, f));
writeFileSync(join(app, 'package.json'), '{ "type": "module", "private": true }\n');

// 3. The Node runtime and dawn.node, xz-compressed (about a quarter of their size).
function xz(src: string, dest: string): void {
  const r = spawnSync('sh', ['-c', `xz -T0 -${level} -c "$1" > "$2"`, 'xz', src, dest], { stdio: 'inherit' });
  if (r.status !== 0) fail(`xz failed on ${src}`, 1);
}
console.error('kit: compressing the Node runtime and dawn.node (a minute or two)…');
xz(process.execPath, join(out, 'payload', 'node.xz'));
xz(dawn, join(out, 'payload', 'dawn.node.xz'));

// 4. The entry point, and what it says.
const runSh = `#!/bin/sh
# The GPU check, air-gapped: verify, the quick suite and the kernel suite on this machine's own
# adapter, with the Node runtime ($(node_version)), Dawn and the engine carried in this folder.
#   ./run.sh [PRESET] [--adapter default|swiftshader]     (default PRESET: smollm2-135m)
# Results and summary.md go to results/<time>/ here (OUT=dir to choose); SUITES="verify quick"
# runs a part of "verify quick kernels"; BENCH_ARGS="--no-autotune …" adds flags to the suites'
# runs. Needs a Vulkan loader (libvulkan.so.1) and a driver; see README.txt.
set -eu
KIT=$(cd "$(dirname "$0")" && pwd)
PRESET=\${1:-smollm2-135m}
[ $# -gt 0 ] && shift
NODE="$KIT/runtime/node"
DAWN="$KIT/app/node_modules/webgpu/dist/linux-x64/dawn.node"
unpack() {
  if command -v xz >/dev/null 2>&1; then xz -dc "$1" > "$2.part"
  elif command -v python3 >/dev/null 2>&1; then python3 -c 'import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' "$1" "$2.part"
  else echo "kit: unpacking needs xz (apt-get install xz-utils) or python3" >&2; exit 3
  fi
  mv "$2.part" "$2"
}
if [ ! -x "$NODE" ] || [ ! -f "$DAWN" ]; then
  echo "kit: first run: unpacking the Node runtime and Dawn…"
  mkdir -p "$KIT/runtime"
  unpack "$KIT/payload/node.xz" "$NODE"
  chmod +x "$NODE"
  unpack "$KIT/payload/dawn.node.xz" "$DAWN"
fi
OUT=\${OUT:-$KIT/results/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT"
export BENCH_NODE_HOST="$KIT/app/host.mjs"
export BENCH_CACHE_DIR="$KIT/cache"
SUITES=\${SUITES:-verify quick kernels}
echo "kit: results in $OUT"
FILES=""
for SUITE in $SUITES; do
  case "$SUITE" in
    verify) # Into a file, then shown: a pipe through tee would hide verify's exit code.
            CODE=0
            "$NODE" "$KIT/app/verify.mjs" --runtime node --preset ci-tiny --tokens 1,17,42,7,99 "$@" > "$OUT/verify.txt" 2>&1 || CODE=$?
            cat "$OUT/verify.txt"
            [ "$CODE" -eq 0 ] || exit "$CODE"
            FILES="$FILES $OUT/verify.txt" ;;
    # shellcheck disable=SC2086
    quick|kernels) "$NODE" "$KIT/app/bench.mjs" --runtime node --preset "$PRESET" --suite "$SUITE" --out "$OUT/$SUITE.json" "$@" \${BENCH_ARGS:-}
            FILES="$FILES $OUT/$SUITE.json" ;;
    *) echo "kit: unknown suite $SUITE in SUITES (verify, quick, kernels)" >&2; exit 2 ;;
  esac
done
# shellcheck disable=SC2086
"$NODE" "$KIT/app/gpu-summary.mjs" $FILES > "$OUT/summary.md"
cat "$OUT/summary.md"
`.replace('$(node_version)', `Node ${process.version}`);
writeFileSync(join(out, 'run.sh'), runSh);
chmodSync(join(out, 'run.sh'), 0o755);
writeFileSync(
  join(out, 'README.txt'),
  `WebGPU inference benchmark: the air-gapped GPU kit (linux-x64, Node ${process.version}, webgpu ${require('webgpu/package.json').version}).

  ./run.sh [PRESET] [--adapter default|swiftshader]

runs verify, the quick suite and the kernel suite on this machine's adapter and writes the results
and summary.md to results/<time>/ (OUT=dir to choose). The first run unpacks the Node runtime and
dawn.node (xz, or python3). Nothing is fetched or compiled at run time.

Needs: a Linux x86-64 userland, and a Vulkan loader and driver.
- The loader: libvulkan.so.1. Without network, bring Debian's libvulkan1 package (and its
  dependencies) and install it with dpkg -i libvulkan1_*.deb, or point LD_LIBRARY_PATH at the
  folder that holds libvulkan.so.1.
- The driver: NVIDIA's installs its ICD file as /usr/share/vulkan/icd.d/nvidia_icd.json (or
  /etc/vulkan/icd.d/nvidia_icd.json); set VK_ICD_FILENAMES to it if the loader does not find it.
  Mesa's drivers come with mesa-vulkan-drivers (radeon_icd, intel_icd, lvp_icd).
- Check with vulkaninfo --summary (vulkan-tools) when the kit says it found no adapter.
`,
);

// 5. The size, against the limit.
function size(path: string): number {
  const s = statSync(path);
  return s.isDirectory() ? readdirSync(path).reduce((n, f) => n + size(join(path, f)), 0) : s.size;
}
const mib = size(out) / 2 ** 20;
for (const part of ['payload', 'app'])
  console.error(`kit: ${part}/ ${(size(join(out, part)) / 2 ** 20).toFixed(1)} MiB`);
console.error(
  `kit: ${relative('.', out) || out}/ is ${mib.toFixed(1)} MiB (at most ${MAX_MIB}); run it with ${join(out, 'run.sh')} [PRESET]`,
);
if (mib > MAX_MIB) fail(`the kit is ${mib.toFixed(1)} MiB, over ${MAX_MIB} MiB`, 1);
