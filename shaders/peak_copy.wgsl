// Copy-bandwidth probe: a grid-stride vec4 copy of a buffer far larger than any cache.
// Bytes moved = 2 · size (each byte read once and written once).
override WG: u32 = 256u;

struct Params {
  n4: u32,   // vec4 elements
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> dst: array<vec4<f32>>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) lid: u32) {
  let stride = nwg.x * nwg.y * WG;
  for (var i = (wid.y * nwg.x + wid.x) * WG + lid; i < p.n4; i += stride) {
    dst[i] = src[i];
  }
}
