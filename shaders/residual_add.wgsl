// Residual add in place: x += y, as vec4.
override WG: u32;
//#include grid

// From N4_PARAMS in src/kernels/elementwise.ts (n4: element count / 4).
//#params

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> y: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> x: array<vec4<f32>>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) lid: u32) {
  let i = workgroupIndex(wid, nwg) * WG + lid;
  if (i >= p.n4) { return; }
  x[i] = x[i] + y[i];
}
