// Rotate-half RoPE, in place on x[rows, heads, headDim], token r at position positions[r].
// cos/sin come from a table computed in float64 on the CPU (see src/model/rope.ts).
override WG: u32;
//#include grid
//#include rope_pair

// From ROPE_PARAMS in src/kernels/elementwise.ts (half: headDim / 2).
//#params

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> positions: array<u32>;   // [rows]
@group(0) @binding(2) var<storage, read> cosT: array<f32>;        // [maxSeqLen, half]
@group(0) @binding(3) var<storage, read> sinT: array<f32>;        // [maxSeqLen, half]
@group(0) @binding(4) var<storage, read_write> x: array<f32>;     // [rows, heads, 2 * half]

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) lid: u32) {
  let i = workgroupIndex(wid, nwg) * WG + lid;  // over rows * heads * half
  if (i >= p.rows * p.heads * p.half) { return; }
  let j = i % p.half;
  let rowHead = i / p.half;
  let row = rowHead / p.heads;
  let t = positions[row] * p.half + j;
  let c = cosT[t];
  let s = sinT[t];
  let base = rowHead * 2u * p.half;
  let r = rope_pair(x[base + j], x[base + j + p.half], c, s);
  x[base + j] = r.x;
  x[base + j + p.half] = r.y;
}
