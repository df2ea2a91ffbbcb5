#!/usr/bin/python3
"""Which tokens of a task's answer the model gets right, position by position: each held-out case
is fed whole (prompt, the right answer, the newline) and each answer position counts when the
model's argmax there is the right next token (teacher forcing: a wrong digit earlier does not
spoil the later ones, as it does in exact match). Answers of different token lengths are counted
apart (a two-digit sum is 4 tokens, a three-digit one 5).

    /usr/bin/python3 train/answer_probe.py --model train/data/model --slice add-2digit [--limit 200]
    /usr/bin/python3 train/answer_probe.py --model models/trained-4m.gguf --slice recall-64 --limit 40

--model: a train.py output directory, or a GGUF file of this model. Prints one line per answer
length: the answer's tokens (of the first such case) and the count right at each position.
"""

import argparse
import os
import sys
from collections import Counter

import sentencepiece as spm
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpus import eval_rows, eval_slices  # noqa: E402
from train import answer_start, load_state  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="train/data")
    ap.add_argument("--model", required=True)
    ap.add_argument("--slice", required=True)
    ap.add_argument("--limit", type=int, default=200)
    args = ap.parse_args()
    torch.set_num_threads(2)
    sp = spm.SentencePieceProcessor(model_file=os.path.join(args.data, "tokenizer.model"))
    if args.model.endswith(".gguf"):
        from gguf_eval import gguf_model  # noqa: PLC0415

        model = gguf_model(args.model, "model", sp.get_piece_size(), 1152)[0]
    else:
        model = load_state(args.model)[0]
    model.eval()
    names = eval_slices(args.data)
    if args.slice not in names:
        raise SystemExit(f"--slice {args.slice}: no such held-out slice in {args.data}/eval (slices: {', '.join(names)})")
    rows = eval_rows(args.data, args.slice)
    if "prompt" not in rows[0]:
        raise SystemExit(f"--slice {args.slice}: a text slice; the probe counts a task's answer tokens")
    right, total, example = Counter(), Counter(), {}
    for r in rows[: args.limit]:
        line = sp.encode(r["prompt"] + r["answer"] + "\n")
        start = answer_start(sp.encode(r["prompt"]), line)  # the answer's first token in `line`
        ids = [sp.bos_id()] + line
        with torch.no_grad():
            pred = model(torch.tensor([ids]))[0].argmax(-1)
        n = len(line) - start
        example.setdefault(n, [sp.id_to_piece(t) for t in line[start:]])
        for j in range(n):
            at = 1 + start + j  # the token's index in ids; the model predicts it at at - 1
            total[(n, j)] += 1
            right[(n, j)] += int(pred[at - 1] == ids[at])
    for n in sorted(example):
        counts = ", ".join(f"{right[(n, j)]}/{total[(n, j)]}" for j in range(n))
        print(f"{args.slice}, answers of {n} tokens like {example[n]}: {counts}")


if __name__ == "__main__":
    main()
