import { encodeGgufHeader, type MetaEntry } from '../src/model/gguf-writer.ts';

/**
 * A header-only GGUF v3 for the tests of header readers (gguf.ts, the capacity CLI), written by the
 * product writer: the metadata and the tensor table, the tensors 64 bytes apart from offset 0
 * whatever their size, and no data section: the file ends where the table does, as the first bytes
 * of a model too large to read whole would.
 */
export function gguf(meta: MetaEntry[], tensors: [name: string, dims: number[], type: number][]): Uint8Array {
  return encodeGgufHeader({
    version: 3,
    meta,
    tensors: tensors.map(([name, dims, type], i) => ({ name, dims, type, offset: 64 * i })),
  });
}

/** A tiny llama GGUF's metadata: 2 layers, d 64, 4 heads of 16, 2 KV heads, context 2048. */
export const TINY_LLAMA_META: MetaEntry[] = [
  ['general.architecture', { str: 'llama' }],
  ['llama.block_count', { u32: 2 }],
  ['llama.embedding_length', { u32: 64 }],
  ['llama.feed_forward_length', { u32: 128 }],
  ['llama.attention.head_count', { u32: 4 }],
  ['llama.attention.head_count_kv', { u32: 2 }],
  ['llama.context_length', { u32: 2048 }],
];
