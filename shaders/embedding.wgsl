// Embedding gather: out[l, :] = table[tokens[l], :]. One invocation per vec4 of output.
override WG: u32;
//#include grid

// From EMBEDDING_PARAMS in src/kernels/elementwise.ts (d4: hidden size / 4; vocab: table rows, to clamp an out-of-range id instead of reading past the end).
//#params

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> tokens: array<u32>;            // [rows]
@group(0) @binding(2) var<storage, read> table: array<vec4<f32>>;       // [vocab, d4]
@group(0) @binding(3) var<storage, read_write> out: array<vec4<f32>>;   // [rows, d4]

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) lid: u32) {
  let i = workgroupIndex(wid, nwg) * WG + lid;
  if (i >= p.rows * p.d4) { return; }
  let row = i / p.d4;
  let token = min(tokens[row], p.vocab - 1u);
  out[i] = table[token * p.d4 + i % p.d4];
}
