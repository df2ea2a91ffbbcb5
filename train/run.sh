#!/usr/bin/env bash
# The whole recipe, as run for the shipped files (docs/trained-model.md): corpus, tokenizer, the
# model in three phases (sequences of 256 for most tokens, then 1,152 so a passkey 1,024 tokens back
# and its question fit one window, with more of the recall stream, then the tasks' answers), the drafter, the held-out set
# the engine scores, the evaluation in torch and the F16 GGUF files. Each phase runs for a number of
# tokens (the learning rate follows them); loss.csv records its clock too. Run it under nice: it
# takes both cores.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=/usr/bin/python3
# glibc's malloc asks for transparent huge pages on the large blocks torch allocates (attention
# scores, logits): with the kernel's THP on madvise (Debian's default) each step otherwise faults
# its gigabytes in 4 KiB pages. One step of 16 x 640 tokens: 21.7 s without, 5.7 s with.
export GLIBC_TUNABLES=glibc.malloc.hugetlb=1
$PY train/corpus.py --out train/data
$PY train/tokenizer.py --data train/data --vocab 4096
$PY train/train.py --data train/data --out train/data/model-256 --seq 256 --batch 32 --tokens 9e6 --minutes 150
$PY train/train.py --data train/data --out train/data/model-1152 --seq 1152 --batch 8 --tokens 6e5 --minutes 30 \
  --lr 1e-3 --mix recall=0.35,text=0.3 --init train/data/model-256/weights.pt
# Phase 3 starts from phase 2's F16 export (the file shipped before it), with the loss of task rows on
# their answers alone: text 20% of the rows, the tasks 80%, windows of 640 (a passkey up to ~600
# tokens back fits whole), 50 minutes by the clock.
npx tsx train/export-gguf.ts --model train/data/model-1152 --vocab train/data/vocab.json --out train/data/model-1152.gguf
$PY train/train.py --data train/data --out train/data/model --init-gguf train/data/model-1152.gguf --context 1152 \
  --seq 640 --batch 16 --lr 1e-3 --warmup 20 --answer-loss --mix text=0.2,arithmetic=0.3,copy=0.15,recall=0.25,json=0.1 --minutes 50 --eval-every 25
$PY train/train.py --data train/data --out train/data/drafter --size drafter --seq 256 --batch 32 --tokens 1.5e6 --minutes 15
$PY train/ship.py --data train/data --out models/trained-4m-eval.json
$PY train/eval.py --data train/data --model train/data/model
npx tsx train/export-gguf.ts --model train/data/model --vocab train/data/vocab.json --out models/trained-4m.gguf
npx tsx train/export-gguf.ts --model train/data/drafter --vocab train/data/vocab.json --out train/data/drafter.gguf --context 1152
# The drafter again, distilled from the shipped model: from its own F16 export, 18 minutes of the
# KL divergence from the model's next-token distribution at every position (2026-12-07).
$PY train/train.py --data train/data --out train/data/drafter-distilled --size drafter --seq 256 --batch 32 --minutes 18 \
  --lr 2e-3 --warmup 20 --init-gguf train/data/drafter.gguf --teacher models/trained-4m.gguf --eval-every 25
npx tsx train/export-gguf.ts --model train/data/drafter-distilled --vocab train/data/vocab.json --out models/trained-4m-drafter.gguf --context 1152
# Phase 4 (2026-12-07): two-digit additions and passkeys 8-192 tokens back, from their own stream
# (train/focus_tasks.py, the held-out prompts left out), in three runs one after the other, from
# the phase-3 file: 10 minutes at windows of 256, 20 more with additions at 43% of the rows (the
# streams --mix does not name keep their default weights), 35 at windows of 640 so that a passkey
# 512 tokens back fits whole. The loss on task rows is their answers', as in phase 3.
$PY train/focus_tasks.py --data train/data
$PY train/train.py --data train/data --out train/data/p4pilot --init-gguf models/trained-4m.gguf --context 1152 \
  --seq 256 --batch 32 --lr 1e-3 --warmup 20 --answer-loss \
  --mix text=0.15,add2=0.3,recall-near=0.35,arithmetic=0.05,copy=0.05,json=0.05,recall=0.05 --minutes 10 --eval-every 25
$PY train/train.py --data train/data --out train/data/p4add --init train/data/p4pilot/weights.pt --context 1152 \
  --seq 256 --batch 32 --lr 1e-3 --warmup 10 --answer-loss --mix text=0.15,add2=0.6,arithmetic=0.1,recall-near=0.15 \
  --minutes 20 --eval-every 25
$PY train/train.py --data train/data --out train/data/model-p4 --init train/data/p4add/weights.pt --context 1152 \
  --seq 640 --batch 12 --lr 1e-3 --warmup 10 --answer-loss \
  --mix text=0.2,add2=0.3,recall-near=0.2,recall=0.15,arithmetic=0.05,json=0.05,copy=0.05 --minutes 35 --eval-every 25
$PY train/eval.py --data train/data --model train/data/model-p4
npx tsx train/export-gguf.ts --model train/data/model-p4 --vocab train/data/vocab.json --out models/trained-4m.gguf
# The drafter distilled again, from the phase-4 file (2026-12-07): from the drafter distilled from
# phase 3, 18 minutes, with phase 4's two streams in the mix so that the teacher's sums are drawn.
$PY train/train.py --data train/data --out train/data/drafter-p4 --size drafter --seq 256 --batch 32 --minutes 18 \
  --lr 2e-3 --warmup 20 --init-gguf models/trained-4m-drafter.gguf --teacher models/trained-4m.gguf --eval-every 25 \
  --mix text=0.35,arithmetic=0.12,add2=0.13,json=0.12,copy=0.06,recall=0.12,recall-near=0.1
npx tsx train/export-gguf.ts --model train/data/drafter-p4 --vocab train/data/vocab.json --out models/trained-4m-drafter.gguf --context 1152
