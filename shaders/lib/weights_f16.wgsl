// Packed f16 weights (src/model/formats.ts): a group of 32 weights along K is four vec4<u32>, word j
// holding the halves of k = 2j (low 16 bits) and 2j + 1, with no scales. Read as u32 and widened with
// unpack2x16float, which needs no extension. The interface is described in weights_int4.wgsl.

alias WElem = vec4<u32>;
alias WVec = vec4<u32>;
const W_VECS_PER_GROUP: u32 = 4u;
const X_PER_W_VEC: u32 = 2u;
// The halves are the weights: no step, no offset.
const W_AFFINE = false;

fn w_load(v: u32) -> WVec {
  return w[v];
}

// Words 2j and 2j + 1: the four halves that meet x vec4 j.
fn w_raw(q: WVec, j: u32) -> vec4<f32> {
  return vec4<f32>(unpack2x16float(q[2u * j]), unpack2x16float(q[2u * j + 1u]));
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

// f16 has no scales: the kernels' product by 1.0 is exact, and `scales` is never read, so a
// pipeline's automatic layout has no binding for it.
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
