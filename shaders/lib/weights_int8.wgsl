// Packed int8 weights (src/model/formats.ts): a group of 32 weights along K is two vec4<u32>, byte b
// of word j the weight at k = 4j + b, two's complement q standing for q · scale, with one f32 scale
// per group in `scales` [N, groups]. The interface is described in weights_int4.wgsl.

alias WElem = vec4<u32>;
alias WVec = vec4<u32>;
const W_VECS_PER_GROUP: u32 = 2u;
const X_PER_W_VEC: u32 = 4u;
const W_AFFINE = true;

// Flipping the top bit of bytes 0-2 turns each into q + 128 unsigned; byte 3, read as the top bits
// of an i32, is already signed.
fn w_load(v: u32) -> WVec {
  return w[v] ^ vec4<u32>(0x00808080u);
}

// The bytes of word j masked in place and converted whole: (q + 128) · 256^b, byte 3 q · 2^24.
fn w_raw(q: WVec, j: u32) -> vec4<f32> {
  let word = vec4<u32>(q[j]);
  return vec4<f32>(bitcast<vec4<i32>>(word & vec4<u32>(0xFFu, 0xFF00u, 0xFF0000u, 0xFF000000u)));
}

fn w_step(j: u32) -> vec4<f32> {
  return vec4<f32>(1.0, 0x1p-8, 0x1p-16, 0x1p-24);
}

fn w_offset(j: u32) -> vec4<f32> {
  return vec4<f32>(-128.0, -128.0, -128.0, 0.0);
}

fn w_unpack(q: WVec, j: u32) -> vec4<f32> {
  return w_raw(q, j) * w_step(j) + w_offset(j);
}

fn group_scale(i: u32) -> f32 {
  return scales[i];
}

// The block interface the packed kernels read every format through (see weights_int4.wgsl): a
// block is one group of 32 here (W_SUBS = 1), its scale the group's.
alias SElem = f32;
const W_GROUP: u32 = 32u;
const W_SUBS: u32 = 1u;
const W_HAS_MIN = false;

fn w_load_sub(b: u32, s: u32, u: u32) -> WVec {
  return w_load(b * W_VECS_PER_GROUP + u);
}

// The block header: the group's (scale, min), read once per group.
alias WHead = vec2<f32>;

fn w_head(b: u32) -> WHead {
  return vec2<f32>(group_scale(b), 0.0);
}

fn head_affine(h: WHead, s: u32) -> vec2<f32> {
  return h;
}
