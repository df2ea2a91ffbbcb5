// KV element type f32: one word of the pool is a vec4<f32>, four values of a row as they are.
// Every KV type's snippet has this interface (kv_f32, kv_f16, kv_int8), so one attention or
// KV-write shader serves each type through its `kv` slot:
//   KvWord              the pool's element type: 4 values of a K or V row
//   KV_EXTRA            words after a row's HD4 value words (int8: its scale)
//   KV_QUANTIZED        whether a writer must find the row's absolute maximum first
//   kvVec(i)            word i as 4 values, before the row's scale
//   kvScale(i)          the row scale stored at word i (1 where there is none; never read then)
//   kvPack(v, inv)      4 values as a word; inv = 1 / the row's scale
//   kvScaleWord(s)      the scale s as the word stored after the row
// The including shader declares `pool` (an array of KvWord).
alias KvWord = vec4<f32>;
const KV_EXTRA: u32 = 0u;
const KV_QUANTIZED: bool = false;

fn kvVec(i: u32) -> vec4<f32> { return pool[i]; }

fn kvScale(i: u32) -> f32 { return 1.0; }

fn kvPack(v: vec4<f32>, inv: f32) -> KvWord { return v; }

fn kvScaleWord(s: f32) -> KvWord { return vec4<f32>(s); }
