#!/usr/bin/python3
"""Draws the loss curve of the shipped model as an SVG (no plotting library: Debian's python3 has
none installed by default): the training loss of each phase against tokens seen, and the held-out
loss where it was measured, from the loss.csv files train.py wrote. Phase 3's training loss counts
the task rows' answers alone (--answer-loss), so its level is not phase 1's and 2's; the held-out
text loss (the dots: 8 windows of the last 1% of the text, at each phase's window length) is
measured the same way in all of them. Phase 4's three runs are one file (train/results/phase4-loss.csv,
their tokens added up).

    /usr/bin/python3 train/plot.py --out docs/img/trained-loss.svg train/results/phase1-loss.csv \\
        train/results/phase2-loss.csv train/results/phase3-loss.csv train/results/phase4-loss.csv
"""

import argparse
import csv
import math

W, H, PAD_L, PAD_R, PAD_T, PAD_B = 720, 320, 56, 16, 16, 44


def read(path):
    rows = list(csv.DictReader(open(path)))
    return [(int(r["tokens"]), float(r["train_loss"]), float(r["val_loss"]) if r["val_loss"] else None) for r in rows]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("files", nargs="+", help="loss.csv of each phase, in order (tokens add up across them)")
    args = ap.parse_args()
    phases, offset = [], 0
    for f in args.files:
        rows = read(f)
        phases.append([(offset + t, l, v) for t, l, v in rows])
        offset += rows[-1][0]
    pts = [p for ph in phases for p in ph]
    xmax = pts[-1][0]
    ymax = math.ceil(max(l for _, l, _ in pts[5:]) if len(pts) > 5 else 9)
    ymin = math.floor(min(min(l for _, l, _ in pts), min((v for _, _, v in pts if v is not None), default=9)))
    x = lambda t: PAD_L + (W - PAD_L - PAD_R) * t / xmax
    y = lambda l: PAD_T + (H - PAD_T - PAD_B) * (ymax - min(max(l, ymin), ymax)) / (ymax - ymin)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="11">',
           "<title>Training loss of trained-4m against tokens seen, each phase, with the held-out text loss</title>",
           f'<rect width="{W}" height="{H}" fill="white"/>']
    for i in range(ymin, ymax + 1):
        out.append(f'<line x1="{PAD_L}" x2="{W - PAD_R}" y1="{y(i):.1f}" y2="{y(i):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{PAD_L - 6}" y="{y(i) + 4:.1f}" text-anchor="end">{i}</text>')
    step = 10 ** math.floor(math.log10(xmax / 2))
    t = 0
    while t <= xmax:
        out.append(f'<text x="{x(t):.1f}" y="{H - PAD_B + 16}" text-anchor="middle">{t / 1e6:g}M</text>')
        t += step * (2 if xmax / step > 10 else 1)
    out.append(f'<text x="{(W + PAD_L) / 2}" y="{H - 8}" text-anchor="middle">training tokens</text>')
    out.append(f'<text transform="translate(14 {H / 2}) rotate(-90)" text-anchor="middle">cross-entropy, nats</text>')
    colours = ["#1f6feb", "#d9480f", "#2f9e44", "#7048e8"]
    for i, ph in enumerate(phases):
        line = " ".join(f"{x(t):.1f},{y(l):.1f}" for t, l, _ in ph)
        out.append(f'<polyline fill="none" stroke="{colours[i % 4]}" stroke-width="1.2" points="{line}"/>')
        for t, _, v in ph:
            if v is not None:
                out.append(f'<circle cx="{x(t):.1f}" cy="{y(v):.1f}" r="2.5" fill="black"/>')
    out.append(f'<text x="{W - PAD_R}" y="{PAD_T + 12}" text-anchor="end">blue: phase 1 (sequences of 256) · orange: phase 2 (1,152) · dots: held-out text loss</text>')
    out.append(f'<text x="{W - PAD_R}" y="{PAD_T + 26}" text-anchor="end">green: phase 3 (640), the task rows\' loss on their answers alone</text>')
    if len(phases) > 3:
        out.append(f'<text x="{W - PAD_R}" y="{PAD_T + 40}" text-anchor="end">purple: phase 4 (256, then 640), two-digit additions and near passkeys, answers alone</text>')
    out.append("</svg>")
    open(args.out, "w").write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
