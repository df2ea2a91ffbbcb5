#!/usr/bin/python3
"""Builds the training corpus and its held-out evaluation set, from files a Debian machine has and
task data generated from a fixed seed. Run with Debian's python3 (no package outside the standard
library is needed here):

    /usr/bin/python3 train/corpus.py --out train/data

Writes, under --out (git-ignored; rebuilt by this command):
  train.txt            the training text, documents separated by a blank line and <|doc|>
  eval/<slice>.jsonl   the held-out set, one file per slice, split off before any training
  manifest.json        every source file's path, size and sha256, and the seed and counts

train/manifest.json (committed) is a copy of the manifest, so a rebuild can be checked against it.

Sources:
  code   the Python standard library's top-level modules (/usr/lib/python3.11/*.py)
  prose  the licence texts in /usr/share/common-licenses, and man pages of section 1 rendered to
         plain text by man(1) (groff), 80 columns, no hyphenation
  tasks  generated from SEED: integer addition and subtraction of 1-4 digits, JSON objects from a
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


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


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


def json_task(rng: random.Random):
    """A JSON object cut after its first key's value: the model completes it to the end."""
    text = json.dumps(json_object(rng), separators=(", ", ": "))
    cut = text.index(", ") + 2 if ", " in text else len(text) // 2
    return "JSON: " + text[:cut], text[cut:]


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
    ap.add_argument("--tasks", type=int, default=60000, help="generated task examples for training, per kind")
    ap.add_argument("--eval-tasks", type=int, default=200, help="held-out examples per task slice")
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
    tasks = {
        "arithmetic": arithmetic,
        "json": json_task,
        "copy": copy_task,
    }
    seen = set()
    for kind, make in tasks.items():
        lines = []
        for _ in range(args.tasks):
            p, a = make(train_rng)
            seen.add(p)
            lines.append(p + a)
        train_docs.append("\n".join(lines))
    recall_lines = []
    for i in range(args.tasks // 20):
        p, a = recall_task(train_rng, train_rng.choice(RECALL_DISTANCES))
        seen.add(p)
        recall_lines.append(p + a)
    train_docs.extend(recall_lines)

    def eval_examples(make, n):
        out = []
        while len(out) < n:
            p, a = make(eval_rng)
            if p not in seen:
                out.append({"prompt": p, "answer": a})
        return out

    for kind, make in tasks.items():
        eval_slices[kind] = eval_examples(make, args.eval_tasks)
    for d in RECALL_DISTANCES:
        eval_slices[f"recall-{d}"] = eval_examples(lambda r, d=d: recall_task(r, d), args.eval_tasks // 4)
    eval_slices["edge-long-numbers"] = eval_examples(lambda r: arithmetic(r, 8), args.eval_tasks // 2)
    eval_slices["edge-rare-bytes"] = eval_examples(rare_bytes_task, args.eval_tasks // 2)

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
