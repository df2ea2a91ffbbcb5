#!/usr/bin/python3
"""The trained model in torch on a GGUF file's weights: an independent reference for what the engine
and llama.cpp compute on a quantized file, and a measurement of why they part.

The weights are gguf-py's numpy dequantization of each tensor (llama.cpp's own Python package, from
the release source node-llama-cpp ships), the q/k rows un-permuted back to Hugging Face's order, in
train.py's Llama. Two arithmetics:

  --act exact      the dequantized weights times f32 activations (what the engine computes);
  --act llama-cpu  as llama.cpp's CPU backend computes a quantized matmul: the activations are first
                   rounded to its 8-bit blocks (Q8_0, 32 values a block with an f16 scale, before a
                   Q8_0 or Q4_0 weight; Q8_K, 256 values with an f32 scale, before a Q4_K weight),
                   and the integer dot products are exact, so the product is the dequantized weight
                   times the dequantized activation. F32 and F16 weights take the activations as
                   they are.
  --kv f16         also rounds each key, value, query and attention weight to f16, as llama.cpp's
                   default F16 KV cache does (it is f32 otherwise).

Scores the held-out JSON slice greedily as train/eval.py does (the answer's length + 64 tokens,
cut at the first newline; with the share of greedy steps whose top two are within 0.05 nats), or, with --agreement TEXT, prints each position's top-1 over the text's
first N positions (for comparing with the top-1 flips `bench --peer llama.cpp` records).

    /usr/bin/python3 train/gguf_eval.py --gguf DIR/trained-4m-Q4_K.gguf [--act llama-cpu] [--kv f16] [--limit 200]
"""

import argparse
import glob
import json
import os
import sys

import numpy as np
import sentencepiece as spm
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from corpus import eval_rows  # noqa: E402
from eval import greedy, wilson  # noqa: E402
from train import Llama, load_state, model_config  # noqa: E402

GGUF_NAMES = {
    "attn_norm": "attn_norm", "attn_q": "q", "attn_k": "k", "attn_v": "v", "attn_output": "o",
    "ffn_norm": "ffn_norm", "ffn_gate": "gate", "ffn_up": "up", "ffn_down": "down",
}


def gguf_py():
    found = sorted(glob.glob(os.path.join(HERE, "..", "node_modules", ".cache", "llama-bundle", "*", "gguf-py")))
    if not found:
        sys.exit("gguf-py not found: run the unit tests once (they clone llama.cpp's release bundle)")
    sys.path.insert(0, found[0])
    import gguf  # noqa: PLC0415

    return gguf


def unpermute(w, heads):
    """convert_hf_to_gguf.py's q/k permutation undone. Its permute puts HF's row (half h, index i)
    of each head at row 2i + h; reading the GGUF rows as (head, i, h) and swapping the last two
    gives HF's (head, h, i) back."""
    rows, cols = w.shape
    return w.reshape(heads, rows // heads // 2, 2, cols).swapaxes(1, 2).reshape(rows, cols)


def load_gguf(model, c, path):
    """Every tensor of the file, dequantized, into the model; returns {param name: GGUF type name}."""
    gguf = gguf_py()
    reader = gguf.GGUFReader(path)
    state, types = {}, {}
    for t in reader.tensors:
        w = np.asarray(gguf.quants.dequantize(t.data, t.tensor_type), dtype=np.float32)
        w = w.reshape([int(n) for n in reversed(t.shape)])
        if t.name == "token_embd.weight":
            name = "embed.weight"
        elif t.name == "output_norm.weight":
            name = "norm.weight"
        elif t.name.startswith("blk."):
            _, layer, part, kind = t.name.split(".")
            name = f"blocks.{layer}.{GGUF_NAMES[part]}.{kind}"
            if part == "attn_q":
                w = unpermute(w, c["numHeads"])
            elif part == "attn_k":
                w = unpermute(w, c["numKvHeads"])
        else:
            sys.exit(f"{path}: a tensor this model has no place for: {t.name} (an untied output head?)")
        state[name] = torch.from_numpy(w.copy())
        types[name] = t.tensor_type.name
    missing = set(model.state_dict()) - set(state)
    if missing:
        sys.exit(f"{path}: no tensor for {sorted(missing)}")
    model.load_state_dict(state)
    return types


def gguf_model(path, size, vocab, max_len):
    """A model of train.py's size `size` with the file's weights, in eval mode; with the file's types."""
    c = model_config(size, vocab, max_len)
    model = Llama(c)
    types = load_gguf(model, c, path)
    return model.eval(), types


def round_q8_0(x):
    """quantize_row_q8_0 then back: blocks of 32, scale max|x|/127 stored as f16, round half away."""
    b = x.reshape(-1, 32)
    d = b.abs().amax(-1, keepdim=True) / 127
    inv = torch.where(d > 0, 1 / d, torch.zeros_like(d))
    q = torch.sign(b * inv) * torch.floor((b * inv).abs() + 0.5)
    return (q * d.half().float()).reshape(x.shape)


def round_q8_k(x):
    """quantize_row_q8_K then back: blocks of 256, the value of largest magnitude maps to -127, the
    scale its inverse kept in f32, values rounded to nearest and capped at 127."""
    b = x.reshape(-1, 256)
    idx = b.abs().argmax(-1, keepdim=True)
    mx = b.gather(-1, idx)
    iscale = torch.where(mx != 0, -127.0 / mx, torch.zeros_like(mx))
    q = torch.clamp(torch.round(b * iscale), max=127)  # nearest_int: round half to even
    d = torch.where(mx != 0, 1 / iscale, torch.zeros_like(mx))
    return (q * d).reshape(x.shape)


ROUNDING = {"Q8_0": round_q8_0, "Q4_0": round_q8_0, "Q4_1": round_q8_0, "Q4_K": round_q8_k, "Q6_K": round_q8_k}


def llama_cpu_activations(model, types):
    """Each linear layer and the tied head round their input as llama.cpp's CPU matmul does."""
    for name, mod in model.named_modules():
        if isinstance(mod, torch.nn.Linear):
            r = ROUNDING.get(types[f"{name}.weight"])
            if r:
                mod.forward = (lambda m, f: lambda x: F.linear(f(x), m.weight))(mod, r)
    head = ROUNDING.get(types["embed.weight"])
    if head:
        norm_forward = model.norm.forward
        model.norm.forward = lambda x: head(norm_forward(x))


def f16_attention(model):
    """Queries, keys, values and the attention weights rounded to f16, as over an F16 KV cache."""
    import train  # noqa: PLC0415

    rope = train.apply_rope
    train.apply_rope = lambda x, cos, sin, pos=0: rope(x, cos, sin, pos).half().float()
    for b in model.blocks:
        v_forward = b.v.forward
        b.v.forward = (lambda f: lambda x: f(x).half().float())(v_forward)
    softmax = torch.Tensor.softmax
    torch.Tensor.softmax = lambda self, dim: softmax(self, dim).half().float()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gguf", required=True)
    ap.add_argument("--data", default="train/data")
    ap.add_argument("--model", default="train/data/model", help="where the config is read")
    ap.add_argument("--act", choices=["exact", "llama-cpu"], default="exact")
    ap.add_argument("--kv", choices=["f32", "f16"], default="f32")
    ap.add_argument("--embed-from", help="another GGUF file whose token_embd the embedding lookup reads (the tied head keeps --gguf's)")
    ap.add_argument("--limit", type=int, default=200, help="JSON cases (in the held-out set's order)")
    ap.add_argument("--agreement", help="a text: print the top-1 at each of its first --tokens positions")
    ap.add_argument("--tokens", type=int, default=256)
    args = ap.parse_args()
    torch.set_num_threads(2)
    sp = spm.SentencePieceProcessor(model_file=os.path.join(args.data, "tokenizer.model"))
    model, c = load_state(args.model)
    types = load_gguf(model, c, args.gguf)
    model.eval()
    if args.embed_from:
        other, _ = load_state(args.model)
        load_gguf(other, c, args.embed_from)
        table = other.embed.weight.detach().clone()
        model.embed.forward = lambda ids: F.embedding(ids, table)
    if args.act == "llama-cpu":
        llama_cpu_activations(model, types)
    if args.kv == "f16":
        f16_attention(model)
    label = {"file": os.path.basename(args.gguf), "act": args.act, "kv": args.kv}
    if args.embed_from:
        label["embed_from"] = os.path.basename(args.embed_from)
    with torch.no_grad():
        if args.agreement:
            ids = [sp.bos_id()] + sp.encode(open(args.agreement, encoding="utf-8").read())
            ids = ids[: args.tokens + 2]
            logits = model(torch.tensor([ids]))[0]
            lp = logits.log_softmax(-1)
            top = lp.topk(2, -1)
            # Position i predicts token i + 1; the agreement starts after BOS and the first token.
            rows = [
                {"top1": int(top.indices[i, 0]), "gap": float(top.values[i, 0] - top.values[i, 1])}
                for i in range(1, len(ids) - 1)
            ]
            print(json.dumps({**label, "positions": rows[: args.tokens]}))
            return
        rows = eval_rows(args.data, "json")
        newline = sp.piece_to_id("<0x0A>")
        valid = 0
        marks, gaps = [], []
        for r in rows[: args.limit]:
            ids = [sp.bos_id()] + sp.encode(r["prompt"])
            out, _ = greedy(model, ids, len(sp.encode(r["answer"])) + 64, newline, gaps)
            got = sp.decode(ids + out)[len(sp.decode(ids)) :]
            try:
                ok = isinstance(json.loads(r["prompt"][len("JSON: ") :] + got), dict)
            except ValueError:
                ok = False
            valid += ok
            marks.append("V" if ok else "-")
        n = len(marks)
        print(json.dumps({**label, "json_cases": n, "valid": valid, "valid_share": valid / n,
                          "valid_95": wilson(valid, n),
                          # How unsure the greedy chain is: the share of its steps whose top two
                          # tokens lie within 0.05 nats (where a small change of the logits can flip it).
                          "steps": len(gaps), "near_tie_share": sum(x < 0.05 for x in gaps) / len(gaps),
                          "marks": "".join(marks)}))


if __name__ == "__main__":
    main()
