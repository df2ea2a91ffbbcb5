// RMSNorm (HF LlamaRMSNorm): out = x * rsqrt(mean(x^2) + eps) * weight.
// One workgroup per row: strided vec4 sum of squares, then a tree reduction in workgroup memory.
override WG: u32;  // power of two
//#include grid

// From RMSNORM_PARAMS in src/kernels/rowwise.ts (d4: row width / 4).
//#params

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;           // [rows, d4]
@group(0) @binding(2) var<storage, read> weight: array<vec4<f32>>;      // [d4]
@group(0) @binding(3) var<storage, read_write> out: array<vec4<f32>>;   // [rows, d4]

var<workgroup> partial: array<f32, WG>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) lid: u32) {
  let row = workgroupIndex(wid, nwg);
  // The whole workgroup leaves together, so the barriers below stay uniform.
  if (row >= p.rows) { return; }
  let base = row * p.d4;
  var ss = 0.0;
  for (var i = lid; i < p.d4; i += WG) {
    let v = x[base + i];
    ss += dot(v, v);
  }
  partial[lid] = ss;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride /= 2u) {
    if (lid < stride) { partial[lid] += partial[lid + stride]; }
    workgroupBarrier();
  }
  let inv = inverseSqrt(partial[0] / f32(p.d4 * 4u) + p.eps);
  for (var i = lid; i < p.d4; i += WG) {
    out[base + i] = x[base + i] * inv * weight[i];
  }
}
