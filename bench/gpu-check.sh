#!/usr/bin/env bash
# The GPU check: on whatever GPU this machine has, with no browser and no network, runs verify, the
# native quick suite and the kernel suite, and writes the results and a short summary.
#   bench/gpu-check.sh [PRESET]        (default smollm2-135m; OUT=dir to choose where results go)
# Needs only the repository, its node_modules and a Vulkan loader and driver (see README).
set -euo pipefail
cd "$(dirname "$0")/.."
PRESET=${1:-smollm2-135m}
OUT=${OUT:-results/gpu-check-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT"
# The engine host is built once; later runs reuse it (npm run build needs no network).
[ -f dist-node/host.mjs ] || npm run build --silent
TSX=node_modules/.bin/tsx
echo "gpu-check: results in $OUT"
"$TSX" bench/verify.ts --runtime node --preset ci-tiny --tokens 1,17,42,7,99 | tee "$OUT/verify.txt"
"$TSX" bench/bench.ts --runtime node --preset "$PRESET" --suite quick --out "$OUT/quick.json"
"$TSX" bench/bench.ts --runtime node --preset "$PRESET" --suite kernels --out "$OUT/kernels.json"
"$TSX" bench/gpu-summary.ts "$OUT/verify.txt" "$OUT/quick.json" "$OUT/kernels.json" | tee "$OUT/summary.md"
