// Embedding gather from a packed table (a GGUF file's token_embd in its block type, or f16):
// out[l, :] = table[tokens[l], :], each row dequantized on the way out, through the `weights`
// slot's block interface (weights_int4.wgsl describes it). One invocation per output vec4, as the
// f32 gather: each decodes only its own four weights (the lookup is a few rows, never the cost).
// The tied LM head reads the same buffers, so a packed embedding is held once, in its file's bits.
override WG: u32;
//#include grid
//#include weights

// From PACKED_EMBEDDING_PARAMS in src/kernels/packed.ts (d: hidden size, the table's row width;
// vocab: table rows, to clamp an out-of-range id instead of reading past the end).
//#params

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> tokens: array<u32>;            // [rows]
@group(0) @binding(2) var<storage, read> w: array<WElem>;               // [vocab, blocks, words]
@group(0) @binding(3) var<storage, read_write> out: array<vec4<f32>>;   // [rows, d/4]
@group(0) @binding(4) var<storage, read> scales: array<SElem>;          // [vocab, blocks]; not bound for f16

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) lid: u32) {
  let d4 = p.d / 4u;
  let i = workgroupIndex(wid, nwg) * WG + lid;
  if (i >= p.rows * d4) { return; }
  let row = i / d4;
  let x4 = i % d4;
  let token = min(tokens[row], p.vocab - 1u);
  // x vec4 x4 of the row is position j of WVec u of group g: group s of block b.
  let g = x4 / (W_GROUP / 4u);
  let u = (x4 % (W_GROUP / 4u)) / X_PER_W_VEC;
  let j = x4 % X_PER_W_VEC;
  let blocks = (p.d + W_GROUP * W_SUBS - 1u) / (W_GROUP * W_SUBS);
  let b = token * blocks + g / W_SUBS;
  let s = g % W_SUBS;
  let f = head_affine(w_head(b), s);
  out[i] = w_unpack(w_load_sub(b, s, u), j) * f.x + f.y;
}
