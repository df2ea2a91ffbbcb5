#!/usr/bin/python3
"""A quantized GGUF file's exact values as an F32 file: every tensor through gguf-py's numpy
dequantization (llama.cpp's own Python package, from the release source node-llama-cpp ships),
every metadata field copied, general.file_type set to F32.

llama.cpp runs an F32 file's matmuls on f32 activations, where it rounds the activations to 8 bits
before a Q8_0, Q4_0 or Q4_K weight. So llama.cpp on the two files is the same weights under two
arithmetics, which is what bench/probes/llama-self-agreement.ts compares: llama.cpp against itself.

    /usr/bin/python3 train/dequantize_gguf.py IN.gguf OUT.gguf
"""

import sys

import numpy as np

from gguf_eval import gguf_py


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: train/dequantize_gguf.py IN.gguf OUT.gguf")
    src, dst = sys.argv[1:]
    gguf = gguf_py()
    reader = gguf.GGUFReader(src)
    arch = reader.fields[gguf.Keys.General.ARCHITECTURE].contents()
    writer = gguf.GGUFWriter(dst, arch)
    for field in reader.fields.values():
        # GGUF.* are the reader's own (version, counts); the writer writes the architecture itself.
        if field.name.startswith("GGUF.") or field.name == gguf.Keys.General.ARCHITECTURE:
            continue
        kind = field.types[0]
        sub = field.types[-1] if kind == gguf.GGUFValueType.ARRAY else None
        value = field.contents()
        if field.name == gguf.Keys.General.FILE_TYPE:
            value = int(gguf.LlamaFileType.ALL_F32)
        writer.add_key_value(field.name, value, kind, sub_type=sub)
    for t in reader.tensors:
        w = np.asarray(gguf.quants.dequantize(t.data, t.tensor_type), dtype=np.float32)
        # The reader's shape is ggml's (fastest axis first); numpy's is the reverse.
        writer.add_tensor(t.name, w.reshape([int(n) for n in reversed(t.shape)]))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    types = sorted({t.tensor_type.name for t in reader.tensors})
    print(f"{dst}: {len(reader.tensors)} tensors from {', '.join(types)} to F32")


if __name__ == "__main__":
    main()
