// Paged KV write: scatters the new tokens' K and V into the layer's page pool.
// slots[r] = page * pageSize + offset of token r, resolved on the CPU from the block table (vLLM's
// slot mapping, slotOf in src/kv/layout.ts), so the same kernel serves the paged cache and the
// contiguous one (one page of maxSeqLen tokens per sequence).
override WG: u32;
//#include grid
//#include kv_layout

// From KV_WRITE_PARAMS in src/kernels/kv-write.ts (hd4: headDim / 4).
//#params

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> k: array<vec4<f32>>;          // [rows, kvHeads, hd4]
@group(0) @binding(2) var<storage, read> v: array<vec4<f32>>;          // [rows, kvHeads, hd4]
@group(0) @binding(3) var<storage, read> slots: array<u32>;            // [rows]
@group(0) @binding(4) var<storage, read_write> pool: array<vec4<f32>>; // [pages, 2, kvHeads, pageSize, hd4]

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) lid: u32) {
  let i = workgroupIndex(wid, nwg) * WG + lid;
  if (i >= p.rows * p.kvHeads * p.hd4) { return; }
  let d = i % p.hd4;
  let rowHead = i / p.hd4;
  let h = rowHead % p.kvHeads;
  let slot = slots[rowHead / p.kvHeads];
  let page = slot / p.pageSize;
  let offset = slot % p.pageSize;
  let kvLayout = KvLayout(p.kvHeads, p.pageSize, p.hd4);
  pool[kvRow(kvLayout, page, 0u, h, offset) + d] = k[i];
  pool[kvRow(kvLayout, page, 1u, h, offset) + d] = v[i];
}
