#!/usr/bin/python3
"""Builds the training corpus and its held-out evaluation set, from files a Debian machine has and
task data generated from a fixed seed. Run with Debian's python3 (no package outside the standard
library is needed here):

    /usr/bin/python3 train/corpus.py --out train/data

Writes, under --out (git-ignored; rebuilt by this command):
  train.txt            the text (code and prose), documents separated by a blank line and <|doc|>
  tasks/<kind>.txt     the generated task examples, one per line (arithmetic, json, copy, recall)
  eval/<slice>.jsonl   the held-out set, one file per slice, split off before any training
  manifest.json        every source file's path, size and sha256, and the seed and counts

train/manifest.json (committed) is a copy of the manifest, so a rebuild can be checked against it.

Sources:
  code   the Python standard library's top-level modules (/usr/lib/python3.11/*.py)
  prose  the licence texts in /usr/share/common-licenses, and man pages of section 1 rendered to
         plain text by man(1) (groff), 80 columns, no hyphenation
  tasks  generated from SEED: integer addition and subtraction of 1-4 digits (the held-out set adds
         a slice of two-digit additions), JSON objects from a
         small grammar, key-value recall (a passkey) across 64 to 1,024 tokens of filler, and
         copying a string

A file goes to the held-out set when the first byte of the sha256 of its path is below 13 (5%): the
split depends on nothing but the path. Task examples are drawn from separate random streams for
training and evaluation, and an evaluation prompt that also occurs in training is dropped.
"""

import argparse
import glob
import gzip
import hashlib
import json
import os
import random
import string
import subprocess
import sys

SEED = 20261206
DOC_SEPARATOR = "\n<|doc|>\n"
HELD_OUT_BELOW = 13  # of 256: 5% of files

# Filler for the recall task: plain sentences, so the passkey is the one thing to remember.
FILLER = [
    "The grass is green.",
    "The sky is blue.",
    "The sun is warm.",
    "Here we go again.",
    "The river flows to the sea.",
    "A bird sings in the tree.",
    "The road goes on and on.",
    "Snow falls in the winter.",
]
# Roughly how many tokens one filler sentence is (the tokenizer is trained later; the distance in
# tokens is measured again by the evaluation, which records the real count).
TOKENS_PER_FILLER = 6
RECALL_DISTANCES = [64, 128, 256, 512, 1024]
# Training passkeys sit at any distance in [32, 1024] tokens; the evaluation uses the five above.
RECALL_MIN_TRAIN = 32


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def eval_slices(data):
    """The held-out set's slice names (eval/<slice>.jsonl, as main() writes them), sorted."""
    return sorted(n[: -len(".jsonl")] for n in os.listdir(os.path.join(data, "eval")))


def eval_rows(data, slice_):
    """One held-out slice's rows: {"prompt", "answer"} for a task, {"text", ...} for a text slice."""
    with open(os.path.join(data, "eval", f"{slice_}.jsonl"), encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def held_out(path: str) -> bool:
    return hashlib.sha256(path.encode()).digest()[0] < HELD_OUT_BELOW


def read_code():
    for path in sorted(glob.glob("/usr/lib/python3.11/*.py")):
        data = open(path, "rb").read()
        yield path, data, data.decode("utf-8", errors="replace")


def read_prose(max_man_pages: int):
    for path in sorted(glob.glob("/usr/share/common-licenses/*")):
        if os.path.islink(path) or not os.path.isfile(path):
            continue
        data = open(path, "rb").read()
        yield path, data, data.decode("utf-8", errors="replace")
    pages = sorted(glob.glob("/usr/share/man/man1/*.1.gz"))[:max_man_pages]
    env = dict(os.environ, MANWIDTH="80", MAN_KEEP_FORMATTING="0", LC_ALL="C.UTF-8")
    for path in pages:
        data = open(path, "rb").read()
        try:
            out = subprocess.run(
                ["man", "--no-hyphenation", "--no-justification", "-l", "-P", "cat", path],
                capture_output=True,
                env=env,
                timeout=30,
                check=True,
            ).stdout
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
            continue
        # man's plain output may still carry backspace overstrikes: keep the last character of each.
        text = out.decode("utf-8", errors="replace")
        while "\b" in text:
            i = text.index("\b")
            text = text[: i - 1] + text[i + 1 :] if i > 0 else text[1:]
        yield path, data, text


def two_digit_addition(rng: random.Random):
    """The target slice: both operands of exactly two digits, addition."""
    a, b = rng.randint(10, 99), rng.randint(10, 99)
    return f"{a} + {b} =", f" {a + b}"


def arithmetic(rng: random.Random, max_digits: int = 4):
    a = rng.randint(0, 10 ** rng.randint(1, max_digits) - 1)
    b = rng.randint(0, 10 ** rng.randint(1, max_digits) - 1)
    op = rng.choice("+-")
    prompt = f"{a} {op} {b} ="
    answer = f" {a + b if op == '+' else a - b}"
    return prompt, answer


NAMES = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"]
KEYS = ["id", "name", "age", "tags", "active", "score", "city", "items"]
CITIES = ["paris", "oslo", "lima", "cairo", "tokyo", "quito"]


def json_value(rng: random.Random, key: str, depth: int):
    if key == "id":
        return rng.randint(1, 9999)
    if key == "name":
        return rng.choice(NAMES)
    if key == "age":
        return rng.randint(1, 99)
    if key == "tags":
        return [rng.choice(["a", "b", "c", "x", "y"]) for _ in range(rng.randint(0, 3))]
    if key == "active":
        return rng.random() < 0.5
    if key == "score":
        return round(rng.random() * 100, 1)
    if key == "city":
        return rng.choice(CITIES)
    if key == "items" and depth < 1:
        return [json_object(rng, depth + 1) for _ in range(rng.randint(1, 2))]
    return None


def json_object(rng: random.Random, depth: int = 0):
    keys = rng.sample(KEYS, rng.randint(2, 4))
    return {k: json_value(rng, k, depth) for k in keys}


JSON_PREFIX = "JSON: "


def json_cut(text: str) -> int:
    """Where a JSON task's object is cut: after its first key's value, at the comma before the space
    (a prompt that ended in a space would end in a lone SentencePiece "▁", which the training text
    never has there: the space joins the next word); mid-way in an object without one."""
    return text.index(", ") + 1 if ", " in text else len(text) // 2


def json_task(rng: random.Random):
    """A JSON object cut after its first key's value: the model completes it to the end."""
    text = json.dumps(json_object(rng), separators=(", ", ": "))
    cut = json_cut(text)
    return JSON_PREFIX + text[:cut], text[cut:]


def recall_task(rng: random.Random, distance_tokens: int):
    key = "".join(rng.choice(string.digits) for _ in range(5))
    sentences = [rng.choice(FILLER) for _ in range(max(1, distance_tokens // TOKENS_PER_FILLER))]
    prompt = f"The pass key is {key}. Remember it. " + " ".join(sentences) + " What is the pass key? The pass key is"
    return prompt, f" {key}."


def copy_task(rng: random.Random):
    n = rng.randint(3, 12)
    s = "".join(rng.choice(string.ascii_lowercase + " ") for _ in range(n)).strip() or "a"
    return f"copy: {s} ->", f" {s}"


def rare_bytes_task(rng: random.Random):
    """Edge case: characters the corpus hardly has (they go through the tokenizer's byte fallback)."""
    alphabet = "éüßøñçλπΩж中文日本語한국🙂€±×÷"
    s = "".join(rng.choice(alphabet) for _ in range(rng.randint(2, 6)))
    return f"copy: {s} ->", f" {s}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="train/data")
    ap.add_argument("--man-pages", type=int, default=1500, help="how many section-1 man pages (sorted by name)")
    ap.add_argument("--tasks", type=int, default=100000, help="generated training examples per task kind (arithmetic 4x, recall 1/4)")
    ap.add_argument("--eval-tasks", type=int, default=200, help="held-out examples per task slice (200: a 95%% interval of about ±5 points at 80%%)")
    args = ap.parse_args()
    os.makedirs(os.path.join(args.out, "eval"), exist_ok=True)

    manifest = {"seed": SEED, "files": [], "counts": {}}
    train_docs = []
    eval_slices = {}

    def add_file(kind, path, data, text):
        text = text.strip()
        if not text:
            return
        is_eval = held_out(path)
        manifest["files"].append({"path": path, "bytes": len(data), "sha256": sha256(data), "kind": kind, "split": "eval" if is_eval else "train"})
        if is_eval:
            eval_slices.setdefault(kind, []).append({"source": path, "text": text})
        else:
            train_docs.append(text)

    for path, data, text in read_code():
        add_file("code", path, data, text)
    for path, data, text in read_prose(args.man_pages):
        add_file("prose", path, data, text)

    train_rng = random.Random(SEED)
    eval_rng = random.Random(SEED + 1)
    # Task examples go to their own streams (tasks/<kind>.txt, one example per line): train.py
    # draws each batch row from a stream by a fixed mixture, so the tasks' share of the tokens is a
    # choice, not an accident of how long the prose is.
    tasks = {
        "arithmetic": (arithmetic, args.tasks * 4),
        "json": (json_task, args.tasks),
        "copy": (copy_task, args.tasks),
        "recall": (lambda r: recall_task(r, r.randint(RECALL_MIN_TRAIN, RECALL_DISTANCES[-1])), args.tasks // 4),
    }
    seen = set()
    os.makedirs(os.path.join(args.out, "tasks"), exist_ok=True)
    for kind, (make, count) in tasks.items():
        lines = []
        for _ in range(count):
            p, a = make(train_rng)
            seen.add(p)
            lines.append(p + a)
        with open(os.path.join(args.out, "tasks", f"{kind}.txt"), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        manifest["counts"][f"tasks/{kind}"] = count

    def eval_examples(make, n):
        out = []
        while len(out) < n:
            p, a = make(eval_rng)
            if p not in seen:
                seen.add(p)
                out.append({"prompt": p, "answer": a})
        return out

    n = args.eval_tasks
    eval_slices["arithmetic"] = eval_examples(arithmetic, n)
    eval_slices["add-2digit"] = eval_examples(two_digit_addition, n)
    eval_slices["json"] = eval_examples(json_task, n)
    eval_slices["copy"] = eval_examples(copy_task, n)
    for d in RECALL_DISTANCES:
        eval_slices[f"recall-{d}"] = eval_examples(lambda r, d=d: recall_task(r, d), n)
    eval_slices["edge-long-numbers"] = eval_examples(lambda r: arithmetic(r, 8), n)
    eval_slices["edge-rare-bytes"] = eval_examples(rare_bytes_task, n)

    rng = random.Random(SEED + 2)
    rng.shuffle(train_docs)
    train_text = DOC_SEPARATOR.join(train_docs)
    with open(os.path.join(args.out, "train.txt"), "w", encoding="utf-8") as f:
        f.write(train_text)
    for name, rows in sorted(eval_slices.items()):
        with open(os.path.join(args.out, "eval", f"{name}.jsonl"), "w", encoding="utf-8") as f:
            for row in rows:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
        manifest["counts"][f"eval/{name}"] = len(rows)
    manifest["counts"]["train_documents"] = len(train_docs)
    manifest["counts"]["train_bytes"] = len(train_text.encode("utf-8"))
    manifest["train_sha256"] = sha256(train_text.encode("utf-8"))
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print(json.dumps(manifest["counts"], indent=1), file=sys.stderr)


if __name__ == "__main__":
    main()
