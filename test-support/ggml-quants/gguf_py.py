"""gguf-py's numpy dequantization (gguf/quants.py of the llama.cpp release) over blocks written by
gguf-py.ts: the second, independent reference for the tests of src/quant. Run with Debian's python3,
whose numpy is python3-numpy, with the release's gguf-py folder as argv[1].

  gguf_py.py GGUF_PY dequantize DIR   DIR/manifest.json lists {"type", "rows", "input", "output"};
                                      each input (rows of blocks) is dequantized to output (f32)
  gguf_py.py GGUF_PY types            prints {name: [code, block elements, block bytes]} as JSON
"""

import json
import sys

sys.path.insert(0, sys.argv[1])

import numpy as np  # noqa: E402
from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType  # noqa: E402
from gguf.quants import dequantize  # noqa: E402


def main() -> None:
    mode = sys.argv[2]
    if mode == "types":
        sizes = {t.name: [int(t), *GGML_QUANT_SIZES[t]] for t in GGMLQuantizationType}
        print(json.dumps(sizes))
        return
    if mode == "dequantize":
        folder = sys.argv[3]
        with open(f"{folder}/manifest.json") as f:
            jobs = json.load(f)
        for job in jobs:
            blocks = np.fromfile(f"{folder}/{job['input']}", dtype=np.uint8).reshape((job["rows"], -1))
            values = dequantize(blocks, GGMLQuantizationType(job["type"]))
            np.asarray(values, dtype=np.float32).tofile(f"{folder}/{job['output']}")
        return
    raise SystemExit(f"unknown mode {mode}")


main()
