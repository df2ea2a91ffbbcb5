#!/usr/bin/python3
"""Trains the corpus's own tokenizer: a SentencePiece BPE model with byte fallback (every byte has
a token, so no text is unknown), digits split one per token (arithmetic reads digit by digit), and
the vocabulary written as llama.cpp's `llama` (SentencePiece) GGUF tokenizer reads it. Debian's
python3-sentencepiece:

    /usr/bin/python3 train/tokenizer.py --data train/data --vocab 4096

Writes train/data/tokenizer.model (SentencePiece's own file) and train/data/vocab.json: the
tokens, scores and token types in id order, with BOS/EOS/UNK ids, the block the GGUF export
writes as tokenizer.ggml.{tokens,scores,token_type,bos_token_id,eos_token_id,unknown_token_id}.
Token types are llama.cpp's: 1 normal, 2 unknown, 3 control, 6 byte.
"""

import argparse
import json
import os

import sentencepiece as spm

SEED = 20261206


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="train/data")
    ap.add_argument("--vocab", type=int, default=4096)
    ap.add_argument("--sample-lines", type=int, default=400000)
    args = ap.parse_args()
    prefix = os.path.join(args.data, "tokenizer")
    # The sample of lines it trains on is drawn at random: seeded, so a rebuild gives the same vocabulary.
    spm.set_random_generator_seed(SEED)
    # The text and the first 5,000 examples of each task stream (all of them would outnumber the
    # text's lines and spend the vocabulary on JSON keys and filler sentences).
    sample = os.path.join(args.data, "tokenizer-tasks.txt")
    with open(sample, "w", encoding="utf-8") as out:
        for kind in sorted(os.listdir(os.path.join(args.data, "tasks"))):
            with open(os.path.join(args.data, "tasks", kind), encoding="utf-8") as f:
                for i, line in zip(range(5000), f):
                    out.write(line)
    spm.SentencePieceTrainer.train(
        input=[os.path.join(args.data, "train.txt"), sample],
        model_prefix=prefix,
        model_type="bpe",
        vocab_size=args.vocab,
        byte_fallback=True,
        split_digits=True,
        character_coverage=0.9995,
        input_sentence_size=args.sample_lines,
        shuffle_input_sentence=True,
        seed_sentencepiece_size=1000000,
        max_sentence_length=16384,
        remove_extra_whitespaces=False,
        normalization_rule_name="identity",
        user_defined_symbols=["<|doc|>"],
        unk_id=0,
        bos_id=1,
        eos_id=2,
        pad_id=-1,
        num_threads=2,
    )
    sp = spm.SentencePieceProcessor(model_file=prefix + ".model")
    tokens, scores, types = [], [], []
    for i in range(sp.get_piece_size()):
        tokens.append(sp.id_to_piece(i))
        scores.append(sp.get_score(i))
        if sp.is_unknown(i):
            types.append(2)
        elif sp.is_control(i):
            types.append(3)
        elif sp.is_byte(i):
            types.append(6)
        elif sp.id_to_piece(i) == "<|doc|>":
            types.append(4)  # user-defined
        else:
            types.append(1)
    vocab = {
        "model": "llama",
        "tokens": tokens,
        "scores": scores,
        "token_type": types,
        "bos_token_id": sp.bos_id(),
        "eos_token_id": sp.eos_id(),
        "unknown_token_id": sp.unk_id(),
    }
    with open(os.path.join(args.data, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    print(f"{len(tokens)} tokens; 'The pass key is 12345.' -> {sp.encode('The pass key is 12345.', out_type=str)}")


if __name__ == "__main__":
    main()
