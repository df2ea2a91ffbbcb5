/**
 * A hand-rolled GGUF v3 writer for tests (unit and CLI): only the header, byte by byte, written
 * independently of the reader in gguf.ts so that the two check each other.
 */
class Writer {
  private parts: number[] = [];
  u8(v: number) {
    this.parts.push(v & 0xff);
  }
  u32(v: number) {
    for (let i = 0; i < 4; i++) this.u8(v >>> (8 * i));
  }
  u64(v: number) {
    this.u32(v % 2 ** 32);
    this.u32(Math.floor(v / 2 ** 32));
  }
  f32(v: number) {
    const b = new Uint8Array(new Float32Array([v]).buffer);
    for (const x of b) this.u8(x);
  }
  str(s: string) {
    const b = new TextEncoder().encode(s);
    this.u64(b.length);
    for (const x of b) this.u8(x);
  }
  bytes() {
    return new Uint8Array(this.parts);
  }
}

export type Meta = [key: string, kind: 'u32' | 'f32' | 'str' | 'strs', value: number | string | string[]];

export function gguf(meta: Meta[], tensors: [string, number[], number][]): Uint8Array {
  const w = new Writer();
  w.u32(0x46554747);
  w.u32(3);
  w.u64(tensors.length);
  w.u64(meta.length);
  for (const [key, kind, value] of meta) {
    w.str(key);
    if (kind === 'u32') {
      w.u32(4);
      w.u32(value as number);
    } else if (kind === 'f32') {
      w.u32(6);
      w.f32(value as number);
    } else if (kind === 'str') {
      w.u32(8);
      w.str(value as string);
    } else {
      w.u32(9);
      w.u32(8);
      w.u64((value as string[]).length);
      for (const s of value as string[]) w.str(s);
    }
  }
  let offset = 0;
  for (const [name, dims, type] of tensors) {
    w.str(name);
    w.u32(dims.length);
    for (const d of dims) w.u64(d);
    w.u32(type);
    w.u64(offset);
    offset += 64;
  }
  return w.bytes();
}

/** A tiny llama GGUF's metadata: 2 layers, d 64, 4 heads of 16, 2 KV heads, context 2048. */
export const TINY_LLAMA_META: Meta[] = [
  ['general.architecture', 'str', 'llama'],
  ['llama.block_count', 'u32', 2],
  ['llama.embedding_length', 'u32', 64],
  ['llama.feed_forward_length', 'u32', 128],
  ['llama.attention.head_count', 'u32', 4],
  ['llama.attention.head_count_kv', 'u32', 2],
  ['llama.context_length', 'u32', 2048],
];
