// Paged KV write: scatters the new tokens' K and V into the layer's page pool, in the pool's KV
// element type (the `kv` slot: f32, f16 pairs, or int8 with a scale per row).
// slots[r] = page * pageSize + offset of token r, resolved on the CPU from the block table (vLLM's
// slot mapping, slotOf in src/kv/layout.ts), so the same kernel serves the paged cache and the
// contiguous one (one page of maxSeqLen tokens per sequence).
// One invocation per (token, KV head, K or V) row: an int8 row needs its absolute maximum before any
// of its values is packed.
override WG: u32;
//#include grid
//#include kv_layout
//#include kv

// From KV_WRITE_PARAMS in src/kernels/kv-write.ts (hd4: headDim / 4).
//#params

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> k: array<vec4<f32>>;          // [rows, kvHeads, hd4]
@group(0) @binding(2) var<storage, read> v: array<vec4<f32>>;          // [rows, kvHeads, hd4]
@group(0) @binding(3) var<storage, read> slots: array<u32>;            // [rows]
@group(0) @binding(4) var<storage, read_write> pool: array<KvWord>;    // [pages, 2, kvHeads, pageSize, rowWords]

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) lid: u32) {
  let i = workgroupIndex(wid, nwg) * WG + lid;  // over rows * kvHeads * 2
  if (i >= p.rows * p.kvHeads * 2u) { return; }
  let which = i % 2u;
  let rowHead = i / 2u;
  let h = rowHead % p.kvHeads;
  let slot = slots[rowHead / p.kvHeads];
  let kvLayout = KvLayout(p.kvHeads, p.pageSize, p.hd4 + KV_EXTRA);
  let dst = kvRow(kvLayout, slot / p.pageSize, which, h, slot % p.pageSize);
  let src = rowHead * p.hd4;
  var absMax = 0.0;
  if (KV_QUANTIZED) {
    for (var d = 0u; d < p.hd4; d++) { absMax = max(absMax, max4abs(select(v[src + d], k[src + d], which == 0u))); }
    pool[dst + p.hd4] = kvScaleWord(absMax);
  }
  let inv = select(1.0, 1.0 / absMax, absMax > 0.0);
  for (var d = 0u; d < p.hd4; d++) {
    pool[dst + d] = kvPack(select(v[src + d], k[src + d], which == 0u), inv);
  }
}

fn max4abs(x: vec4<f32>) -> f32 {
  let a = abs(x);
  return max(max(a.x, a.y), max(a.z, a.w));
}
