// SwiGLU: out = silu(gate) * up, elementwise as vec4 (silu in lib/activation.wgsl). The unfused
// reference of the gate/up projection's SwiGLU epilogue (lib/linear_epilogue.wgsl).
override WG: u32;
//#include grid
//#include activation

// From N4_PARAMS in src/kernels/elementwise.ts (n4: element count / 4).
//#params

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> gate: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> up: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> out: array<vec4<f32>>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) lid: u32) {
  let i = workgroupIndex(wid, nwg) * WG + lid;
  if (i >= p.n4) { return; }
  out[i] = silu4(gate[i]) * up[i];
}
