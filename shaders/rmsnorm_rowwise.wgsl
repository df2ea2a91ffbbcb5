// RMSNorm, one invocation per row: out = x * rsqrt(mean(x^2) + eps) * weight.
// No workgroup memory or barriers, so it suits CPU-backed adapters and long prompts; on GPUs with
// few rows and wide hidden sizes the workgroup-reduction rmsnorm.wgsl parallelises better.
override WG: u32;
//#include grid

// From RMSNORM_PARAMS in src/kernels/rowwise.ts (d4: row width / 4).
//#params

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;           // [rows, d4]
@group(0) @binding(2) var<storage, read> weight: array<vec4<f32>>;      // [d4]
@group(0) @binding(3) var<storage, read_write> out: array<vec4<f32>>;   // [rows, d4]

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) lid: u32) {
  let row = workgroupIndex(wid, nwg) * WG + lid;
  if (row >= p.rows) { return; }
  let base = row * p.d4;
  var ss = vec4<f32>(0.0);
  for (var i = 0u; i < p.d4; i++) {
    let v = x[base + i];
    ss = fma(v, v, ss);
  }
  let inv = inverseSqrt((ss.x + ss.y + ss.z + ss.w) / f32(p.d4 * 4u) + p.eps);
  for (var i = 0u; i < p.d4; i++) {
    out[base + i] = x[base + i] * inv * weight[i];
  }
}
