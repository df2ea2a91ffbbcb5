// KV element type int8, symmetric, one f32 scale per row (token, KV head, K or V): one word is a u32
// of four int8 values (pack4x8snorm of value / absmax: round(clamp(x, -1, 1) · 127)), and the row's
// absolute maximum follows its HD4 value words as one more word (its f32 bits). A value is read
// back as unpack4x8snorm(word) · absmax, so a row of headDim values takes headDim + 4 bytes.
// The interface is kv_f32.wgsl's.
alias KvWord = u32;
const KV_EXTRA: u32 = 1u;
const KV_QUANTIZED: bool = true;

fn kvVec(i: u32) -> vec4<f32> { return unpack4x8snorm(pool[i]); }

fn kvScale(i: u32) -> f32 { return bitcast<f32>(pool[i]); }

fn kvPack(v: vec4<f32>, inv: f32) -> KvWord { return pack4x8snorm(v * inv); }

fn kvScaleWord(s: f32) -> KvWord { return bitcast<u32>(s); }
