// Packed int4 weights (src/model/formats.ts): a group of 32 weights along K is one vec4<u32>, nibble
// b of word j the weight at k = 8j + b, unsigned q in 0…15 standing for (q − 8) · scale, with one f32
// scale per group in `scales` [N, groups].
//
// Every weights_* snippet defines this interface, and the packed kernels are written against it only:
//   WElem, SElem       the element types of the shader's `w` and `scales` bindings
//   W_GROUP            weights per group along K, each group with one scale (and min): 32, or 16
//   W_SUBS             groups per block (a GGUF K-quant block of 256 holds 8 or 16; here 1), so that
//                      group g of a row is group s = g % W_SUBS of block g / W_SUBS
//   WVec               what w_load_sub returns: one vec4<u32> of words (16 bytes), held in registers
//   W_VECS_PER_GROUP   WVecs per group (f16 4, int8 2, int4 1)
//   X_PER_W_VEC        x vec4s one WVec meets (f16 2, int8 4, int4 8), so the two multiply to W_GROUP / 4
//   w_load_sub(b, s, u) WVec u of group s of block b (blocks in [N, blocks per row] order)
//   w_raw(q, j)        q's four weights that meet x vec4 j (j < X_PER_W_VEC, a literal at every call
//                      site, so the word and masks it picks fold away), in a raw form r: the weight,
//                      unscaled (q − 8, q or the half), is r · w_step(j) + w_offset(j), exactly
//   w_step(j)          per component a power of two (f16: 1)
//   w_offset(j)        per component the zero point (f16: 0); depends on j & 1 only
//   W_AFFINE           false when w_step is 1 and w_offset 0 (f16), so kernels skip both
//   w_unpack(q, j)     the weights themselves: w_raw · w_step + w_offset
//   sub_affine(b, s)   group s of block b's (scale, min): w = scale · w_unpack + min (f16: (1, 0),
//                      and no `scales` read); W_HAS_MIN false when every min is 0
// A kernel may apply step and offset to x instead of the weights, once per x vec4 for all the
// columns it computes: dot(x, w) = dot(x · w_step, w_raw) + dot(x, w_offset); and the min once per
// group: Σ x · min. The raw forms cost a
// mask and a conversion per weight; SwiftShader has no vector shift by per-component amounts, and
// the shift-based decode this replaced ran 8x slower there.
// It reads the shader's `w: array<WElem>` and, for int8 and int4, `scales: array<f32>`.

alias WElem = vec4<u32>;
alias WVec = vec4<u32>;
const W_VECS_PER_GROUP: u32 = 1u;
const X_PER_W_VEC: u32 = 8u;
const W_AFFINE = true;

// Flipping the top bit of each word makes its top nibble, read as the top bits of an i32, the two's
// complement of q − 8 (q ^ 8 as a signed nibble is q − 8).
fn w_load(v: u32) -> WVec {
  return w[v] ^ vec4<u32>(0x80000000u);
}

// Nibbles 4(j & 1) … 4(j & 1) + 3 of word j / 2, each masked in place and converted whole: q · 16^b,
// the top nibble (q − 8) · 2^28, all exact in f32.
fn w_raw(q: WVec, j: u32) -> vec4<f32> {
  let word = vec4<u32>(q[j >> 1u]);
  if ((j & 1u) == 0u) {
    return vec4<f32>(bitcast<vec4<i32>>(word & vec4<u32>(0xFu, 0xF0u, 0xF00u, 0xF000u)));
  }
  return vec4<f32>(bitcast<vec4<i32>>(word & vec4<u32>(0xF0000u, 0xF00000u, 0xF000000u, 0xF0000000u)));
}

fn w_step(j: u32) -> vec4<f32> {
  if ((j & 1u) == 0u) { return vec4<f32>(1.0, 0x1p-4, 0x1p-8, 0x1p-12); }
  return vec4<f32>(0x1p-16, 0x1p-20, 0x1p-24, 0x1p-28);
}

fn w_offset(j: u32) -> vec4<f32> {
  if ((j & 1u) == 0u) { return vec4<f32>(-8.0); }
  return vec4<f32>(-8.0, -8.0, -8.0, 0.0);
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
