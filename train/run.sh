#!/usr/bin/env bash
# The whole recipe, as run for the shipped files (docs/trained-model.md): corpus, tokenizer, the
# model in two phases (sequences of 256 for most tokens, then 1,152 so a passkey 1,024 tokens back
# and its question fit one window, with more of the recall stream), the drafter, the held-out set
# the engine scores, the evaluation in torch and the F16 GGUF files. Each phase runs for a number of
# tokens (the learning rate follows them); loss.csv records its clock too. Run it under nice: it
# takes both cores.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=/usr/bin/python3
$PY train/corpus.py --out train/data
$PY train/tokenizer.py --data train/data --vocab 4096
$PY train/train.py --data train/data --out train/data/model-256 --seq 256 --batch 32 --tokens 9e6 --minutes 150
$PY train/train.py --data train/data --out train/data/model --seq 1152 --batch 8 --tokens 6e5 --minutes 30 \
  --lr 1e-3 --mix recall=0.35,text=0.3 --init train/data/model-256/weights.pt
$PY train/train.py --data train/data --out train/data/drafter --size drafter --seq 256 --batch 32 --tokens 1.5e6 --minutes 15
$PY train/ship.py --data train/data --out models/trained-4m-eval.json
$PY train/eval.py --data train/data --model train/data/model
npx tsx train/export-gguf.ts --model train/data/model --vocab train/data/vocab.json --out models/trained-4m.gguf
npx tsx train/export-gguf.ts --model train/data/drafter --vocab train/data/vocab.json --out models/trained-4m-drafter.gguf --context 1152
