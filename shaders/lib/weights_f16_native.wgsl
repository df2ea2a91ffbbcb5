// Packed f16 weights read as vec4<f16> where the device has `shader-f16`: the same bytes as
// weights_f16.wgsl (halves in element order, so vec4<f16> element i is halves 4i … 4i + 3), loaded as
// f16 and converted to f32 before any arithmetic: products and sums stay f32, as every other format's.
// The interface is described in weights_int4.wgsl.
enable f16;

alias WElem = vec4<f16>;
// One 16-byte word vector: two vec4<f16>, as the two columns of a matrix.
alias WVec = mat2x4<f16>;
const W_VECS_PER_GROUP: u32 = 4u;
const X_PER_W_VEC: u32 = 2u;
const W_AFFINE = false;

fn w_load(v: u32) -> WVec {
  return WVec(w[2u * v], w[2u * v + 1u]);
}

fn w_raw(q: WVec, j: u32) -> vec4<f32> {
  return vec4<f32>(q[j]);
}

fn w_step(j: u32) -> vec4<f32> {
  return vec4<f32>(1.0);
}

fn w_offset(j: u32) -> vec4<f32> {
  return vec4<f32>(0.0);
}

fn w_unpack(q: WVec, j: u32) -> vec4<f32> {
  return w_raw(q, j);
}

fn group_scale(i: u32) -> f32 {
  return 1.0;
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
