#!/usr/bin/python3
"""Trains a small Llama (GQA, RoPE, SwiGLU, RMSNorm, tied embeddings) on the corpus, with Debian's
python3-torch on the CPU. Run with Debian's python3, with libopenblas0-pthread installed (without
it Debian's torch falls back to a generic BLAS, 13× slower):

    /usr/bin/python3 train/train.py --data train/data --out train/data/model-256 --seq 256 --batch 32 --minutes 35
    /usr/bin/python3 train/train.py --data train/data --out train/data/model --seq 1024 --batch 8 --minutes 20 \
        --lr 1e-3 --init train/data/model-256/weights.pt
    /usr/bin/python3 train/train.py --data train/data --out train/data/drafter --size drafter --minutes 15

RoPE rotates x[i] with x[i + headDim/2], as Hugging Face's Llama does and as this engine holds its
weights; the GGUF export (train/export-gguf.ts, the project's writer) permutes q and k rows for
llama.cpp as convert_hf_to_gguf.py does. Writes, under --out:
  config.json, model.safetensors   the model as transformers' LlamaForCausalLM reads it (float32)
  weights.pt                       the state dict, to resume or evaluate in torch
  loss.csv                         step, tokens, training loss, held-out loss (every --eval-every steps), seconds
"""

import argparse
import csv
import json
import math
import os
import time

import numpy as np
import sentencepiece as spm
import torch
import torch.nn.functional as F

import corpus

SEED = 20261206

SIZES = {
    # Widths are multiples of 256 so that every K-quant (256-weight blocks) can hold every tensor.
    "model": dict(hiddenSize=256, intermediateSize=768, numLayers=4, numHeads=8, numKvHeads=2, headDim=32),
    # The drafter only needs F16 (10 MB for both files: the model 8.1 MB, this 1.3 MB).
    "drafter": dict(hiddenSize=128, intermediateSize=256, numLayers=1, numHeads=4, numKvHeads=1, headDim=32),
}


def rope_tables(head_dim, max_len, theta):
    inv = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim))
    ang = torch.outer(torch.arange(max_len, dtype=torch.float64), inv)
    return torch.cos(ang).float(), torch.sin(ang).float()


def apply_rope(x, cos, sin, pos=0):
    # x: (B, H, T, D); x[i] and x[i + D/2] rotated by angle pos * theta^(-2i/D) (Hugging Face's rotate_half).
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    c, s = cos[pos : pos + x.shape[2]], sin[pos : pos + x.shape[2]]
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1)


class RMSNorm(torch.nn.Module):
    def __init__(self, d, eps):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class Block(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        d, h, kv, hd, f = c["hiddenSize"], c["numHeads"], c["numKvHeads"], c["headDim"], c["intermediateSize"]
        self.h, self.kv, self.hd = h, kv, hd
        self.attn_norm = RMSNorm(d, c["rmsNormEps"])
        self.q = torch.nn.Linear(d, h * hd, bias=False)
        self.k = torch.nn.Linear(d, kv * hd, bias=False)
        self.v = torch.nn.Linear(d, kv * hd, bias=False)
        self.o = torch.nn.Linear(h * hd, d, bias=False)
        self.ffn_norm = RMSNorm(d, c["rmsNormEps"])
        self.gate = torch.nn.Linear(d, f, bias=False)
        self.up = torch.nn.Linear(d, f, bias=False)
        self.down = torch.nn.Linear(f, d, bias=False)

    def forward(self, x, cos, sin, cache=None):
        """cache: None in training; in evaluation a list this layer appends its keys and values to
        (the tokens before x), so greedy decoding runs one token at a time."""
        B, T, _ = x.shape
        past = 0 if not cache else cache[0].shape[2]
        y = self.attn_norm(x)
        q = self.q(y).view(B, T, self.h, self.hd).transpose(1, 2)
        k = self.k(y).view(B, T, self.kv, self.hd).transpose(1, 2)
        v = self.v(y).view(B, T, self.kv, self.hd).transpose(1, 2)
        q, k = apply_rope(q, cos, sin, past), apply_rope(k, cos, sin, past)
        if cache is not None:
            if cache:
                k, v = torch.cat([cache[0], k], dim=2), torch.cat([cache[1], v], dim=2)
            cache[:] = [k, v]
        rep = self.h // self.kv
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        att = (q @ k.transpose(-1, -2)) / math.sqrt(self.hd)
        mask = torch.ones(T, past + T, dtype=torch.bool).triu(past + 1)
        att = att.masked_fill(mask, float("-inf")).softmax(-1)
        x = x + self.o((att @ v).transpose(1, 2).reshape(B, T, -1))
        y = self.ffn_norm(x)
        return x + self.down(F.silu(self.gate(y)) * self.up(y))


class Llama(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.embed = torch.nn.Embedding(c["vocabSize"], c["hiddenSize"])
        torch.nn.init.normal_(self.embed.weight, std=0.02)
        self.blocks = torch.nn.ModuleList(Block(c) for _ in range(c["numLayers"]))
        self.norm = RMSNorm(c["hiddenSize"], c["rmsNormEps"])
        cos, sin = rope_tables(c["headDim"], c["maxSeqLen"], c["ropeTheta"])
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)

    def forward(self, ids, caches=None):
        x = self.embed(ids)
        for i, b in enumerate(self.blocks):
            x = b(x, self.cos, self.sin, None if caches is None else caches[i])
        return self.norm(x) @ self.embed.weight.T  # tied LM head


def save_hf(model, c, out):
    """config.json and model.safetensors under Hugging Face's Llama names, float32 (the safetensors
    format by hand: an 8-byte header length, the JSON header, the tensors' bytes)."""
    names = {"embed.weight": "model.embed_tokens.weight", "norm.weight": "model.norm.weight"}
    sub = {"attn_norm": "input_layernorm", "q": "self_attn.q_proj", "k": "self_attn.k_proj", "v": "self_attn.v_proj",
           "o": "self_attn.o_proj", "ffn_norm": "post_attention_layernorm", "gate": "mlp.gate_proj", "up": "mlp.up_proj",
           "down": "mlp.down_proj"}
    header, blobs, offset = {}, [], 0
    for name, t in model.state_dict().items():
        if name.startswith("blocks."):
            _, layer, part, kind = name.split(".")
            hf = f"model.layers.{layer}.{sub[part]}.{kind}"
        else:
            hf = names[name]
        data = t.detach().float().contiguous().numpy().tobytes()
        header[hf] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    head = json.dumps(header, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)
    with open(os.path.join(out, "model.safetensors"), "wb") as f:
        f.write(len(head).to_bytes(8, "little"))
        f.write(head)
        for b in blobs:
            f.write(b)
    hf_config = {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": c["vocabSize"],
        "hidden_size": c["hiddenSize"], "intermediate_size": c["intermediateSize"], "num_hidden_layers": c["numLayers"],
        "num_attention_heads": c["numHeads"], "num_key_value_heads": c["numKvHeads"], "head_dim": c["headDim"],
        "hidden_act": "silu", "max_position_embeddings": c["maxSeqLen"], "rms_norm_eps": c["rmsNormEps"],
        "rope_theta": c["ropeTheta"], "rope_scaling": None, "attention_bias": False, "mlp_bias": False,
        "tie_word_embeddings": True, "torch_dtype": "float32", "bos_token_id": 1, "eos_token_id": 2,
    }
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(hf_config, f, indent=1)


def load_state(out):
    """The model train.py saved under `out` (its config.json in Hugging Face's names, weights.pt)."""
    hf = json.load(open(os.path.join(out, "config.json")))
    c = dict(
        arch="llama", vocabSize=hf["vocab_size"], hiddenSize=hf["hidden_size"], intermediateSize=hf["intermediate_size"],
        numLayers=hf["num_hidden_layers"], numHeads=hf["num_attention_heads"], numKvHeads=hf["num_key_value_heads"],
        headDim=hf["head_dim"], ropeTheta=hf["rope_theta"], rmsNormEps=hf["rms_norm_eps"], tieWordEmbeddings=True,
        maxSeqLen=hf["max_position_embeddings"],
    )
    model = Llama(c)
    model.load_state_dict(torch.load(os.path.join(out, "weights.pt")))
    return model, c


def model_config(size, vocab, max_len):
    """The model's config in this engine's names, for a size of SIZES."""
    return dict(arch="llama", vocabSize=vocab, ropeTheta=10000.0, rmsNormEps=1e-5, tieWordEmbeddings=True,
                maxSeqLen=max_len, **SIZES[size])


TASKS = ["arithmetic", "json", "copy", "recall", "add2", "recall-near"]
# Each batch row is drawn from one stream with these weights (--mix overrides them). The text is
# most of the corpus's bytes but the tasks are what the evaluation asks for, so they get a fixed
# share of every batch rather than whatever share their size would give.
# focus_tasks.py's streams (add2: two-digit additions; recall-near: passkeys 8-192 tokens back) are
# drawn only when --mix names them.
MIXTURE = {"text": 0.40, "arithmetic": 0.22, "json": 0.12, "copy": 0.06, "recall": 0.20, "add2": 0.0, "recall-near": 0.0}


def cached(data, name, sp, build):
    """A stream's arrays (ids, example starts and, for a task, its answer marks), cached beside the
    corpus until the tokenizer changes."""
    cache = os.path.join(data, f"{name}.ids.npz")
    if os.path.exists(cache) and os.path.getmtime(cache) > os.path.getmtime(os.path.join(data, "tokenizer.model")):
        z = np.load(cache)
        # A task's cache from before the answer marks is built again.
        if name == "text" or "answer" in z:
            return tuple(z[k] for k in z.files)
    arrays = build()
    np.savez(cache, **dict(zip(["ids", "starts", "answer"], arrays)))
    return arrays


def load_text(data, sp):
    """The text stream: every document between a BOS and an EOS."""

    def build():
        docs = open(os.path.join(data, "train.txt"), encoding="utf-8").read().split("\n<|doc|>\n")
        ids, starts = [], []
        for d in docs:
            starts.append(len(ids))
            ids.append(sp.bos_id())
            ids.extend(sp.encode(d))
            ids.append(sp.eos_id())
        return np.array(ids, dtype=np.uint16), np.array(starts, dtype=np.int64)

    return cached(data, "text", sp, build)


def answer_start(prompt_ids, line_ids):
    """Where the answer's tokens begin in an example encoded whole: after the prompt's own tokens when
    the whole line begins with them (the evaluation prompts with the prompt alone and the model
    writes on from its last token), else at the first token that differs."""
    n = 0
    while n < min(len(prompt_ids), len(line_ids)) and prompt_ids[n] == line_ids[n]:
        n += 1
    return n


def load_task(data, sp, kind):
    """One task's stream: every example as BOS, its text, a newline (where the evaluation stops) and
    EOS (where generation stops: llama.cpp and this engine end at it), with where each example starts
    and which tokens are its answer (the tokens after the prompt, the newline and EOS: --answer-loss
    trains on those alone)."""

    def build():
        lines = open(os.path.join(data, "tasks", f"{kind}.txt"), encoding="utf-8").read().splitlines()
        prompts = [split_example(kind, l)[0] for l in lines]
        ids, starts, answer = [], [], []
        for enc, p in zip(sp.encode([l + "\n" for l in lines]), sp.encode(prompts)):
            starts.append(len(ids))
            a = answer_start(p, enc)
            ids.append(sp.bos_id())
            ids.extend(enc)
            ids.append(sp.eos_id())
            # The target at position t is token t + 1: mark the tokens to predict (answer, EOS).
            answer.extend([0] * (1 + a) + [1] * (len(enc) - a + 1))
        return np.array(ids, dtype=np.uint16), np.array(starts, dtype=np.int64), np.array(answer, dtype=np.uint8)

    return cached(data, kind, sp, build)


# Where each task's prompt ends in its one-line example (corpus.py writes prompt + answer): the
# answer is what follows the last of these markers.
PROMPT_ENDS = {"arithmetic": " =", "copy": " ->", "recall": "The pass key is", "add2": " =", "recall-near": "The pass key is"}


def split_example(kind, line):
    if kind == "json":
        # As corpus.json_task cut it.
        cut = len(corpus.JSON_PREFIX) + corpus.json_cut(line[len(corpus.JSON_PREFIX) :])
        return line[:cut], line[cut:]
    i = line.rindex(PROMPT_ENDS[kind]) + len(PROMPT_ENDS[kind])
    return line[:i], line[i:]


def parse_mix(text):
    mix = dict(MIXTURE)
    for part in filter(None, (text or "").split(",")):
        k, v = part.split("=")
        if k not in mix:
            raise SystemExit(f"--mix: unknown stream {k!r} (streams: {', '.join(mix)})")
        mix[k] = float(v)
    total = sum(mix.values())
    return {k: v / total for k, v in mix.items() if v > 0}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="train/data")
    ap.add_argument("--out", default="train/data/model")
    ap.add_argument("--size", choices=sorted(SIZES), default="model")
    ap.add_argument("--tokens", type=float, default=0, help="training tokens (the schedule follows them); 0: --minutes decides")
    ap.add_argument("--minutes", type=float, default=100, help="wall-clock cap (the schedule follows the clock when --tokens is 0)")
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--eval-every", type=int, default=50)
    ap.add_argument("--mix", help="stream weights, e.g. recall=0.4,text=0.3; a stream not named keeps its default weight, "
                    "=0 leaves it out (default: " + ",".join(f"{k}={v}" for k, v in MIXTURE.items()) + ")")
    ap.add_argument("--init", help="weights.pt to start from (a second phase at a longer --seq)")
    ap.add_argument("--context", type=int, default=0, help="the context the model declares, if longer than --seq")
    ap.add_argument("--warmup", type=int, default=100, help="steps of linear warmup")
    ap.add_argument("--init-gguf", help="a GGUF file (this model's export) to start from")
    ap.add_argument("--answer-loss", action="store_true",
                    help="task rows count the loss of their answers alone (text rows every token)")
    ap.add_argument("--teacher", help="a GGUF file of the model (its F16 export): the loss becomes the KL divergence "
                    "of this model's next-token distribution from the teacher's, at every position (distillation: "
                    "a drafter is accepted where it proposes what the model would)")
    args = ap.parse_args()
    if args.teacher and args.answer_loss:
        ap.error("--teacher scores every position; it does not combine with --answer-loss")
    torch.manual_seed(SEED)
    torch.set_num_threads(args.threads)
    os.makedirs(args.out, exist_ok=True)
    sp = spm.SentencePieceProcessor(model_file=os.path.join(args.data, "tokenizer.model"))
    mix = parse_mix(args.mix)
    text_ids, _ = load_text(args.data, sp)
    # The last 1% of the text stream is this script's held-out loss (the slices' evaluation is eval.py's).
    split = int(len(text_ids) * 0.99)
    streams = {"text": (torch.from_numpy(text_ids[:split].astype(np.int64)), None, None)}
    val_ids = torch.from_numpy(text_ids[split:].astype(np.int64))
    for kind in TASKS:
        if kind in mix:
            ids, starts, answer = load_task(args.data, sp, kind)
            if args.answer_loss:
                # Only windows whose first example fits whole: a passkey cut off before its
                # answer would teach nothing when the answer is all the loss counts.
                ends = np.append(starts[1:], len(ids))
                starts = starts[ends - starts <= args.seq + 1]
            starts = starts[starts < len(ids) - args.seq - 1]
            streams[kind] = (torch.from_numpy(ids.astype(np.int64)), torch.from_numpy(starts), torch.from_numpy(answer))
    names = sorted(mix)
    weights = torch.tensor([mix[n] for n in names])
    # The context the model declares (its RoPE tables and config): a later phase at shorter
    # windows keeps the context an earlier one trained.
    c = model_config(args.size, sp.get_piece_size(), max(args.seq, args.context))
    model = Llama(c)
    if args.init:
        model.load_state_dict(torch.load(args.init))
    if args.init_gguf or args.teacher:
        from gguf_eval import gguf_model, load_gguf  # noqa: PLC0415
    if args.init_gguf:
        # The shipped file's weights (F16, rounded once), to train on from where it stopped.
        types = load_gguf(model, c, args.init_gguf)
        print(f"from {args.init_gguf}: {sorted(set(types.values()))}", flush=True)
    teacher = None
    if args.teacher:
        teacher, types = gguf_model(args.teacher, "model", sp.get_piece_size(), args.seq)
        print(f"teacher {args.teacher}: {sorted(set(types.values()))}", flush=True)
    params = sum(p.numel() for p in model.parameters())
    sizes = ", ".join(f"{n} {len(streams[n][0]) / 1e6:.1f}M tokens ({mix[n]:.0%})" for n in names)
    print(f"{args.size}: {params / 1e6:.2f}M parameters; streams: {sizes}", flush=True)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}], lr=args.lr, betas=(0.9, 0.95))
    gen = torch.Generator().manual_seed(SEED)
    budget = args.minutes * 60
    warmup = args.warmup
    t0 = time.time()
    step, tokens = 0, 0
    log = open(os.path.join(args.out, "loss.csv"), "w", newline="")
    writer = csv.writer(log)
    writer.writerow(["step", "tokens", "train_loss", "val_loss", "seconds"])

    def window(src, starts, answer):
        """A window of the stream: at a random token of the text, at an example's start in a task;
        with the weight of each target (1 everywhere, or a task's answer marks under --answer-loss)."""
        if starts is None:
            s = int(torch.randint(0, len(src) - args.seq - 1, (1,), generator=gen))
        else:
            s = int(starts[int(torch.randint(0, len(starts), (1,), generator=gen))])
        w = answer[s + 1 : s + args.seq + 1].float() if args.answer_loss and answer is not None else torch.ones(args.seq)
        return src[s : s + args.seq + 1], w

    def batch(n):
        picks = torch.multinomial(weights, n, replacement=True, generator=gen)
        rows, ws = zip(*(window(*streams[names[int(i)]]) for i in picks))
        rows = torch.stack(rows)
        return rows[:, :-1], rows[:, 1:], torch.stack(ws)

    val = torch.stack([window(val_ids, None, None)[0] for _ in range(8)])
    val_x, val_y = val[:, :-1], val[:, 1:]
    while True:
        elapsed = time.time() - t0
        if elapsed > budget or (args.tokens and tokens >= args.tokens):
            break
        # Warmup, then cosine decay over the token budget (or, without one, over the clock's).
        frac = min(1.0, tokens / args.tokens if args.tokens else elapsed / budget)
        lr = args.lr * min(1.0, (step + 1) / warmup) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac)))
        for g in opt.param_groups:
            g["lr"] = lr
        x, y, w = batch(args.batch)
        if teacher is None:
            per_token = F.cross_entropy(model(x).view(-1, c["vocabSize"]), y.reshape(-1), reduction="none").view_as(w)
        else:
            # KL(teacher || drafter) at each position: the teacher's whole distribution, not only
            # the corpus's next token, is what speculative sampling's acceptance (1 - total
            # variation) and greedy acceptance (the same top token) depend on.
            with torch.no_grad():
                target = F.log_softmax(teacher(x), -1)
            per_token = (target.exp() * (target - F.log_softmax(model(x), -1))).sum(-1)
        # Each row's mean over the tokens it counts, then the mean over rows: a passkey row counts
        # its 8 answer tokens, a text row all of its tokens, and each weighs as one row.
        counted = w.sum(1)
        keep = counted > 0
        loss = ((per_token * w).sum(1)[keep] / counted[keep]).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        tokens += x.numel()
        val = ""
        if step % args.eval_every == 0:
            with torch.no_grad():
                val = F.cross_entropy(model(val_x).view(-1, c["vocabSize"]), val_y.reshape(-1)).item()
            torch.save(model.state_dict(), os.path.join(args.out, "weights.pt"))
            save_hf(model, c, args.out)
            print(f"step {step} tokens {tokens} loss {loss.item():.3f} val {val:.3f} {tokens / (time.time() - t0):.0f} tok/s", flush=True)
        writer.writerow([step, tokens, f"{loss.item():.4f}", f"{val:.4f}" if val != "" else "", f"{time.time() - t0:.1f}"])
        log.flush()
    torch.save(model.state_dict(), os.path.join(args.out, "weights.pt"))
    save_hf(model, c, args.out)
    print(f"done: {step} steps, {tokens} tokens, {time.time() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
