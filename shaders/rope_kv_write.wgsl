// RoPE and the paged KV write in one dispatch, after the fused q/k/v projection: qkv holds each
// token's q, k and v side by side ([rows, heads + 2·kvHeads, headDim], the layout of the
// concatenated [Wq; Wk; Wv] weight, src/model/fused.ts). The q heads are rotated into q (what
// attention reads); the k heads are rotated and, with the v heads, written straight into the
// layer's page pool at the token's slot (see kv_write.wgsl for the slot mapping). It replaces the
// two RoPE dispatches and the kv-write of the unfused graph, which stay as its reference.
// One invocation per (token, head of q, k or v, pair j of the rotate-half split).
override WG: u32;
//#include grid
//#include kv_layout
//#include rope_pair

// From ROPE_KV_PARAMS in src/kernels/kv-write.ts (half: headDim / 2).
//#params

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> qkv: array<f32>;           // [rows, heads + 2 kvHeads, 2 half]
@group(0) @binding(2) var<storage, read> positions: array<u32>;     // [rows]
@group(0) @binding(3) var<storage, read> cosT: array<f32>;          // [maxSeqLen, half]
@group(0) @binding(4) var<storage, read> sinT: array<f32>;          // [maxSeqLen, half]
@group(0) @binding(5) var<storage, read> slots: array<u32>;         // [rows]
@group(0) @binding(6) var<storage, read_write> q: array<f32>;       // [rows, heads, 2 half]
@group(0) @binding(7) var<storage, read_write> pool: array<f32>;    // [pages, 2, kvHeads, pageSize, 2 half]

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) lid: u32) {
  let units = p.heads + 2u * p.kvHeads;
  let i = workgroupIndex(wid, nwg) * WG + lid;  // over rows * units * half
  if (i >= p.rows * units * p.half) { return; }
  let j = i % p.half;
  let rowUnit = i / p.half;
  let u = rowUnit % units;
  let row = rowUnit / units;
  let headDim = 2u * p.half;
  let src = rowUnit * headDim;
  var a = qkv[src + j];
  var b = qkv[src + j + p.half];
  if (u < p.heads + p.kvHeads) {
    let t = positions[row] * p.half + j;
    let r = rope_pair(a, b, cosT[t], sinT[t]);
    a = r.x;
    b = r.y;
  }
  if (u < p.heads) {
    let dst = (row * p.heads + u) * headDim;
    q[dst + j] = a;
    q[dst + j + p.half] = b;
    return;
  }
  // K (which = 0) or V (which = 1) of KV head h, into the token's slot.
  let which = select(1u, 0u, u < p.heads + p.kvHeads);
  let h = u - p.heads - which * p.kvHeads;
  let slot = slots[row];
  let kvLayout = KvLayout(p.kvHeads, p.pageSize, headDim / 4u);
  let dst = kvRow(kvLayout, slot / p.pageSize, which, h, slot % p.pageSize) * 4u;
  pool[dst + j] = a;
  pool[dst + j + p.half] = b;
}
