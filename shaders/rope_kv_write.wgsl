// RoPE and the paged KV write in one dispatch, after the fused q/k/v projection: qkv holds each
// token's q, k and v side by side ([rows, heads + 2·kvHeads, headDim], the layout of the
// concatenated [Wq; Wk; Wv] weight, src/model/fused.ts). The q heads are rotated into q (what
// attention reads); the k heads are rotated and, with the v heads, written straight into the
// layer's page pool at the token's slot, in the pool's KV element type (the `kv` slot; see
// kv_write.wgsl for the slot mapping). It replaces the two RoPE dispatches and the kv-write of the
// unfused graph, which stay as its reference. Before RoPE each head gets what its architecture
// adds, as head_prep.wgsl does in the unfused graph with the same snippets: the projection's bias
// (qwen2, the `qkv_bias` slot) and, for q and k, an RMSNorm over the head (qwen3, `head_norm`).
// One invocation per (token, head of q, k or v): an int8 row needs its absolute maximum before any
// of its values is packed, and a normed head its sum of squares, so an invocation owns a whole row.
override WG: u32;
//#include grid
//#include kv_layout
//#include rope_pair
//#include kv
//#const BIAS_BINDING
//#const NORM_BINDING
//#include qkv_bias
//#include head_norm

// From ROPE_KV_PARAMS in src/kernels/kv-write.ts (half: headDim / 2; eps: the head norm's).
//#params

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> qkv: array<f32>;           // [rows, heads + 2 kvHeads, 2 half]
@group(0) @binding(2) var<storage, read> positions: array<u32>;     // [rows]
@group(0) @binding(3) var<storage, read> cosT: array<f32>;          // [maxSeqLen, half]
@group(0) @binding(4) var<storage, read> sinT: array<f32>;          // [maxSeqLen, half]
@group(0) @binding(5) var<storage, read> slots: array<u32>;         // [rows]
@group(0) @binding(6) var<storage, read_write> q: array<f32>;       // [rows, heads, 2 half]
@group(0) @binding(7) var<storage, read_write> pool: array<KvWord>; // [pages, 2, kvHeads, pageSize, rowWords]

// One head's row before RoPE: where it starts in qkv, where its bias starts in the fused [q; k; v]
// bias, where its norm weights start (q 0, k headDim) and its norm factor (1 when not normed).
struct Head {
  src: u32,
  biasAt: u32,
  normAt: u32,
  rinv: f32,
  normed: bool,
}

// Element e of the head, with its bias and, for a normed head, its norm applied.
fn prepped(hd: Head, e: u32) -> f32 {
  var v = qkv[hd.src + e];
  if (QKV_BIAS) { v += qkv_bias(hd.biasAt + e); }
  if (HEAD_NORM && hd.normed) { return v * hd.rinv * head_norm_weight(hd.normAt + e); }
  return v;
}

// The head of unit u (q heads, then k, then v) of the token whose qkv row starts at src; `normed`
// for q and k when the architecture norms them.
fn head(src: u32, u: u32, normAt: u32, normed: bool) -> Head {
  var hd = Head(src, u * 2u * p.half, normAt, 1.0, normed);
  if (HEAD_NORM && normed) {
    var ss = 0.0;
    for (var e = 0u; e < 2u * p.half; e++) {
      var v = qkv[src + e];
      if (QKV_BIAS) { v += qkv_bias(hd.biasAt + e); }
      ss += v * v;
    }
    hd.rinv = inverseSqrt(ss / f32(2u * p.half) + p.eps);
  }
  return hd;
}

// Element e of the prepared head, rotated when `rotate` (rotate-half split: e < half is the first
// of pair e, e ≥ half the second of pair e − half).
fn element(hd: Head, e: u32, t: u32, rotate: bool) -> f32 {
  let j = e % p.half;
  let x = vec2<f32>(prepped(hd, j), prepped(hd, j + p.half));
  var r = x;
  if (rotate) { r = rope_pair(x.x, x.y, cosT[t + j], sinT[t + j]); }
  return select(r.x, r.y, e >= p.half);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) lid: u32) {
  let units = p.heads + 2u * p.kvHeads;
  let i = workgroupIndex(wid, nwg) * WG + lid;  // over rows * units
  if (i >= p.rows * units) { return; }
  let u = i % units;
  let row = i / units;
  let headDim = 2u * p.half;
  let src = i * headDim;
  let t = positions[row] * p.half;
  if (u < p.heads) {
    let hq = head(src, u, 0u, true);
    let dst = (row * p.heads + u) * headDim;
    for (var j = 0u; j < p.half; j++) {
      let r = rope_pair(prepped(hq, j), prepped(hq, j + p.half), cosT[t + j], sinT[t + j]);
      q[dst + j] = r.x;
      q[dst + j + p.half] = r.y;
    }
    return;
  }
  // K (which = 0, rotated, normed) or V (which = 1) of KV head h, into the token's slot.
  let which = select(1u, 0u, u < p.heads + p.kvHeads);
  let rotate = which == 0u;
  let hd = head(src, u, headDim, rotate);
  let h = u - p.heads - which * p.kvHeads;
  let slot = slots[row];
  let hd4 = headDim / 4u;
  let kvLayout = KvLayout(p.kvHeads, p.pageSize, hd4 + KV_EXTRA);
  let dst = kvRow(kvLayout, slot / p.pageSize, which, h, slot % p.pageSize);
  var absMax = 0.0;
  if (KV_QUANTIZED) {
    for (var e = 0u; e < headDim; e++) { absMax = max(absMax, abs(element(hd, e, t, rotate))); }
    pool[dst + hd4] = kvScaleWord(absMax);
  }
  let inv = select(1.0, 1.0 / absMax, absMax > 0.0);
  for (var d = 0u; d < hd4; d++) {
    let e = 4u * d;
    let x = vec4<f32>(element(hd, e, t, rotate), element(hd, e + 1u, t, rotate),
                      element(hd, e + 2u, t, rotate), element(hd, e + 3u, t, rotate));
    pool[dst + d] = kvPack(x, inv);
  }
}
