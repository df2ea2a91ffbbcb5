#!/usr/bin/env bash
# The whole recipe, as run for the shipped files (train/README.md): corpus, tokenizer, the model in
# two phases (short sequences for most tokens, then 1,024 for the recall slice), the drafter.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=/usr/bin/python3
$PY train/corpus.py --out train/data
$PY train/tokenizer.py --data train/data --vocab 4096
$PY train/train.py --data train/data --out train/data/model-256 --seq 256 --batch 32 --minutes "${PHASE1_MIN:-35}"
$PY train/train.py --data train/data --out train/data/model --seq 1024 --batch 8 --minutes "${PHASE2_MIN:-20}" \
  --lr 1e-3 --init train/data/model-256/weights.pt
