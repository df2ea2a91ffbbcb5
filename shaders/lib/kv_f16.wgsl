// KV element type f16, stored as pairs packed into u32 (pack2x16float), so it runs on adapters
// without `shader-f16`: one word is a vec2<u32>, four values of a row. Half of f32's bytes exactly.
// The interface is kv_f32.wgsl's.
alias KvWord = vec2<u32>;
const KV_EXTRA: u32 = 0u;
const KV_QUANTIZED: bool = false;

fn kvVec(i: u32) -> vec4<f32> {
  let w = pool[i];
  return vec4<f32>(unpack2x16float(w.x), unpack2x16float(w.y));
}

fn kvScale(i: u32) -> f32 { return 1.0; }

fn kvPack(v: vec4<f32>, inv: f32) -> KvWord { return vec2<u32>(pack2x16float(v.xy), pack2x16float(v.zw)); }

fn kvScaleWord(s: f32) -> KvWord { return vec2<u32>(bitcast<u32>(s), 0u); }
