#!/usr/bin/python3
"""Writes the held-out evaluation set the engine measures the trained model on (--suite formats,
the page's quality table): models/trained-4m-eval.json, from train/data/eval/ (train/corpus.py).

    /usr/bin/python3 train/ship.py --data train/data --out models/trained-4m-eval.json

Task slices keep their prompt and answer; a recall case keeps only its passkey and the order of its
filler sentences (the prompt is rebuilt from the template, 2 MB of repeated sentences → 0.2 MB):
every rebuilt prompt is checked here against the original. Text slices (prose, code) keep the first
--text-chars characters of each of the first --text-files held-out files.
"""

import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpus import FILLER, SEED, eval_rows, eval_slices  # noqa: E402

HEAD = "The pass key is {key}. Remember it. "
TAIL = " What is the pass key? The pass key is"
ANSWER = " {key}."
# Which check a slice is scored by (src/workloads/task-quality.ts reads the same names).
KIND = {"json": "json"}
# The order the tables show: the targets' slices first, recall by distance, the text slices last.
ORDER = ["add-2digit", "arithmetic", "edge-long-numbers", "json", "copy", "edge-rare-bytes",
         "recall-64", "recall-128", "recall-256", "recall-512", "recall-1024", "prose", "code"]


def rebuild(key, order):
    return HEAD.format(key=key) + " ".join(FILLER[int(i)] for i in order) + TAIL


def compact_recall(row):
    m = re.fullmatch(r"The pass key is (\d+)\. Remember it\. (.*) What is the pass key\? The pass key is", row["prompt"], re.S)
    if not m:
        raise SystemExit(f"not a recall prompt: {row['prompt'][:80]}")
    key, body = m.group(1), m.group(2)
    order, rest = [], body
    while rest:
        for i, s in enumerate(FILLER):
            if rest.startswith(s):
                order.append(str(i))
                rest = rest[len(s) :].lstrip(" ")
                break
        else:
            raise SystemExit(f"filler not from the list: {rest[:40]}")
    out = {"key": key, "filler": "".join(order)}
    if rebuild(key, out["filler"]) != row["prompt"] or ANSWER.format(key=key) != row["answer"]:
        raise SystemExit("a rebuilt recall prompt differs from the original")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="train/data")
    ap.add_argument("--out", default="models/trained-4m-eval.json")
    ap.add_argument("--text-files", type=int, default=4)
    ap.add_argument("--text-chars", type=int, default=6000)
    args = ap.parse_args()
    slices = []
    for slice_ in sorted(eval_slices(args.data), key=lambda n: ORDER.index(n) if n in ORDER else len(ORDER)):
        rows = eval_rows(args.data, slice_)
        if slice_.startswith("recall-"):
            slices.append({"name": slice_, "kind": "recall", "cases": [compact_recall(r) for r in rows]})
        elif "prompt" in rows[0]:
            slices.append({"name": slice_, "kind": KIND.get(slice_, "exact"), "cases": rows})
        else:
            texts = [{"source": r["source"], "text": r["text"][: args.text_chars]} for r in rows[: args.text_files]]
            slices.append({"name": slice_, "kind": "text", "texts": texts})
    out = {
        "about": f"The held-out set of train/corpus.py (seed {SEED}), split off before training; written by train/ship.py.",
        "recall": {"head": HEAD, "filler": FILLER, "tail": TAIL, "answer": ANSWER},
        "slices": slices,
    }
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, separators=(",", ":"))
    print(f"{args.out}: {os.path.getsize(args.out)} bytes, {len(slices)} slices", file=sys.stderr)


if __name__ == "__main__":
    main()
