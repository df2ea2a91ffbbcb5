#!/usr/bin/python3
"""Times one training step of train.py's model at three window lengths (random tokens, AdamW, 2
threads), 3 steps each, printing the last: what a phase's throughput will be on this machine.
Compare with and without glibc's huge-page tunable (docs/trained-model.md, "Training, as run"):

    /usr/bin/python3 train/steptime.py
    GLIBC_TUNABLES=glibc.malloc.hugetlb=1 /usr/bin/python3 train/steptime.py
"""

import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train  # noqa: E402


def main():
    torch.set_num_threads(2)
    torch.manual_seed(train.SEED)
    for seq, batch in [(256, 32), (640, 16), (1152, 8)]:
        c = train.model_config("model", 4096, seq)
        model = train.Llama(c)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        x = torch.randint(0, c["vocabSize"], (batch, seq))
        y = torch.randint(0, c["vocabSize"], (batch, seq))
        for _ in range(3):
            t = time.time()
            loss = F.cross_entropy(model(x).view(-1, c["vocabSize"]), y.reshape(-1))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            dt = time.time() - t
        print(f"window {seq} x batch {batch}: {dt:.2f} s a step, {batch * seq / dt:.0f} tokens/s", flush=True)


if __name__ == "__main__":
    main()
