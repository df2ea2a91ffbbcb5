#!/usr/bin/python3
"""The trained model's evaluation by slice, in torch at f32 (the reference the engine's formats
will be measured against): on the held-out set that train/corpus.py split off before training.

    /usr/bin/python3 train/eval.py --data train/data --model train/data/model [--limit 100]

Task slices (arithmetic, json, copy, recall-<distance>, edge-*) run greedy from the prompt and
score exact match of the answer (with its 95% Wilson interval); json also scores validity (the prompt plus the completion, cut at
the first newline, parses as JSON). Text slices (prose, code) score next-token accuracy and
perplexity over the held-out files (windows of the model's context, at most --text-tokens tokens
per slice). Prints one JSON object per slice, and writes them to <model>/eval.json.
"""

import argparse
import json
import math
import os

import sys

import sentencepiece as spm
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpus import eval_rows, eval_slices  # noqa: E402
from train import load_state  # noqa: E402


def wilson(k, n, z=1.96):
    """The 95% Wilson score interval of k successes in n trials."""
    if n == 0:
        return [0.0, 1.0]
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return [round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4)]


def greedy(model, ids, n, stop_id, gaps=None):
    """Greedy decoding with a KV cache: the prompt in one pass, then a token at a time. `gaps`, a
    list, gets each step's gap between its top two log-probabilities."""
    caches = [[] for _ in model.blocks]
    logits = model(torch.tensor([ids]), caches)[0, -1]
    out = []
    for _ in range(n):
        if gaps is not None:
            top = logits.log_softmax(-1).topk(2).values
            gaps.append(float(top[0] - top[1]))
        t = int(logits.argmax())
        if t == stop_id:
            return out, True
        if len(ids) + len(out) >= model.c["maxSeqLen"]:
            break
        out.append(t)
        logits = model(torch.tensor([[t]]), caches)[0, -1]
    return out, False


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="train/data")
    ap.add_argument("--model", default="train/data/model")
    ap.add_argument("--limit", type=int, default=200, help="examples per task slice")
    ap.add_argument("--text-tokens", type=int, default=20000)
    ap.add_argument("--slices", help="comma-separated slice names to score (default: every slice)")
    args = ap.parse_args()
    torch.set_num_threads(2)
    sp = spm.SentencePieceProcessor(model_file=os.path.join(args.data, "tokenizer.model"))
    model, c = load_state(args.model)
    model.eval()
    newline = sp.piece_to_id("<0x0A>")
    results = {}
    with torch.no_grad():
        for slice_ in eval_slices(args.data):
            if args.slices and slice_ not in args.slices.split(","):
                continue
            rows = eval_rows(args.data, slice_)
            if "prompt" in rows[0]:
                # Cases whose prompt does not fit the model's context are not scored (a phase-1 checkpoint's 256).
                rows = [r for r in rows if len(sp.encode(r["prompt"])) + 16 <= c["maxSeqLen"]][: args.limit]
                if not rows:
                    continue
                exact = valid = 0
                for r in rows:
                    ids = [sp.bos_id()] + sp.encode(r["prompt"])
                    want = r["answer"]
                    # The completion's text is the whole decoded minus the prompt's: SentencePiece drops
                    # the leading space of the first piece it decodes, so decoding the new ids
                    # alone would read " 46" as "46".
                    out, ended = greedy(model, ids, len(sp.encode(want)) + (64 if slice_ == "json" else 8), newline)
                    got = sp.decode(ids + out)[len(sp.decode(ids)) :]
                    # Exact match: the answer and then the end of the line, as the engine scores it
                    # (src/workloads/task-quality.ts: every answer token and the newline are the argmax).
                    exact += ended and got == want
                    if slice_ == "json":
                        text = r["prompt"][len("JSON: ") :] + got
                        try:
                            valid += isinstance(json.loads(text), dict)
                        except ValueError:
                            pass
                res = {"examples": len(rows), "exact_match": exact / len(rows), "exact_match_95": wilson(exact, len(rows))}
                if slice_ == "json":
                    res["valid"] = valid / len(rows)
                    res["valid_95"] = wilson(valid, len(rows))
            else:
                n = correct = 0
                nll = 0.0
                for r in rows:
                    ids = torch.tensor([sp.bos_id()] + sp.encode(r["text"]))
                    for s in range(0, len(ids) - 1, c["maxSeqLen"]):
                        x = ids[s : s + c["maxSeqLen"]]
                        y = ids[s + 1 : s + 1 + c["maxSeqLen"]]
                        x = x[: len(y)]
                        logits = model(x[None])[0]
                        nll += F.cross_entropy(logits, y, reduction="sum").item()
                        correct += int((logits.argmax(-1) == y).sum())
                        n += len(y)
                        if n >= args.text_tokens:
                            break
                    if n >= args.text_tokens:
                        break
                res = {"tokens": n, "next_token_accuracy": correct / n, "perplexity": math.exp(nll / n)}
            results[slice_] = res
            print(json.dumps({slice_: res}), flush=True)
    out = "eval.json" if not args.slices else "eval-some.json"
    with open(os.path.join(args.model, out), "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
