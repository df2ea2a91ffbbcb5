"""How often a drafter proposes what the model would, slice by slice, with no timing in it: on the
held-out set's texts, at every position, the share where the drafter's top token is the model's
(what greedy speculative decoding accepts) and the mean of sum_v min(p_v, q_v) at a temperature
(the chance that speculative sampling keeps a drafted token, 1 minus the total variation between
the two distributions). Each file is read as this engine reads it (gguf_eval.load_gguf); the texts
are tokenized with BOS, and the model and the drafter see the same prefix at each position, as
they do after every accepted token.

    /usr/bin/python3 train/drafter_agreement.py --target models/trained-4m.gguf \\
        --drafter models/trained-4m-drafter.gguf [--drafter OTHER.gguf] [--temperature 0.8]
"""

import argparse
import json
import os

import sentencepiece as spm
import torch

from corpus import eval_rows
from gguf_eval import gguf_model

TEXT_SLICES = ["prose", "code"]
TASK_SLICES = ["json", "copy", "arithmetic", "add-2digit", "edge-long-numbers", "edge-rare-bytes"]


def texts(data):
    """Per slice, one sequence of about `tokens` tokens: a text slice's first document, or a task
    slice's cases one per line (prompt and answer), as the agreement files hold them."""
    out = {}
    for name in TEXT_SLICES + TASK_SLICES:
        rows = eval_rows(data, name)
        if name in TEXT_SLICES:
            out[name] = "".join(r["text"] for r in rows[:4])
        else:
            out[name] = "".join(f"{r['prompt']}{r['answer']}\n" for r in rows)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="train/data")
    ap.add_argument("--target", required=True)
    ap.add_argument("--drafter", action="append", required=True)
    ap.add_argument("--tokens", type=int, default=1024, help="positions per slice")
    ap.add_argument("--temperature", type=float, default=0.8)
    args = ap.parse_args()
    torch.set_num_threads(2)
    sp = spm.SentencePieceProcessor(model_file=os.path.join(args.data, "tokenizer.model"))
    vocab = sp.get_piece_size()
    target, _ = gguf_model(args.target, "model", vocab, args.tokens + 1)
    drafters = {path: gguf_model(path, "drafter", vocab, args.tokens + 1)[0] for path in args.drafter}
    rows = []
    with torch.no_grad():
        for name, text in texts(args.data).items():
            ids = torch.tensor([([sp.bos_id()] + sp.encode(text))[: args.tokens + 1]])
            p = target(ids)[0]
            for path, drafter in drafters.items():
                q = drafter(ids)[0]
                greedy = (p.argmax(-1) == q.argmax(-1)).float().mean().item()
                pt = (p / args.temperature).softmax(-1)
                qt = (q / args.temperature).softmax(-1)
                sampled = torch.minimum(pt, qt).sum(-1).mean().item()
                rows.append({"slice": name, "drafter": os.path.basename(path), "positions": ids.shape[1],
                             "greedy_same_top": round(greedy, 4), f"kept_at_T{args.temperature}": round(sampled, 4)})
                print(json.dumps(rows[-1]), flush=True)


if __name__ == "__main__":
    main()
