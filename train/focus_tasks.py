#!/usr/bin/python3
"""Two extra task streams for a fourth training phase, aimed at the two slices the first three
phases did not teach (docs/trained-model.md): two-digit addition and passkey recall.

    /usr/bin/python3 train/focus_tasks.py --data train/data

Writes, beside corpus.py's streams (train.py --mix add2=...,recall-near=... draws from them):
  tasks/add2.txt         two-digit additions, the add-2digit slice's form (corpus.two_digit_addition)
  tasks/recall-near.txt  passkeys 8 to 192 tokens back (corpus.recall_task): a short lookup first,
                         as copying was learnt, so that the long one has something to grow from
From their own random stream (corpus.SEED + 3; corpus.py uses + 0, + 1 and + 2), and no line whose
prompt is a held-out prompt of any slice: the held-out set stays unseen, as corpus.py keeps it.
"""

import argparse
import os
import random

import corpus

NEAR_DISTANCES = (8, 192)


def held_out_prompts(data):
    return {row["prompt"] for name in corpus.eval_slices(data) for row in corpus.eval_rows(data, name) if "prompt" in row}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="train/data")
    ap.add_argument("--count", type=int, default=100000, help="examples per stream")
    args = ap.parse_args()
    held = held_out_prompts(args.data)
    rng = random.Random(corpus.SEED + 3)
    makers = {
        "add2": corpus.two_digit_addition,
        "recall-near": lambda r: corpus.recall_task(r, r.randint(*NEAR_DISTANCES)),
    }
    for kind, make in makers.items():
        lines, dropped = [], 0
        while len(lines) < args.count:
            p, a = make(rng)
            if p in held:
                dropped += 1
                continue
            lines.append(p + a)
        with open(os.path.join(args.data, "tasks", f"{kind}.txt"), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        print(f"tasks/{kind}.txt: {len(lines)} examples ({dropped} held-out prompts drawn and dropped)")


if __name__ == "__main__":
    main()
