// FMA throughput probe: 8 independent vec4 FMA chains per invocation, so the ALUs never wait on a
// dependency. The multiplier and addend come from a uniform, so the compiler cannot fold the loop;
// each invocation writes one value so the chains stay live. FLOPs = invocations · ITERS · 8 · 4 · 2.
override WG: u32 = 256u;
override ITERS: u32 = 512u;

struct Params {
  mul: f32,
  add: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> out: array<vec4<f32>>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.y * nwg.x + wid.x) * WG + lid;
  let m = vec4<f32>(p.mul);
  let c = vec4<f32>(p.add);
  let s = f32(i & 1023u) * 1e-6;
  var a0 = vec4<f32>(s, s + 0.1, s + 0.2, s + 0.3);
  var a1 = a0 + 0.01;
  var a2 = a0 + 0.02;
  var a3 = a0 + 0.03;
  var a4 = a0 + 0.04;
  var a5 = a0 + 0.05;
  var a6 = a0 + 0.06;
  var a7 = a0 + 0.07;
  for (var k = 0u; k < ITERS; k++) {
    a0 = fma(a0, m, c);
    a1 = fma(a1, m, c);
    a2 = fma(a2, m, c);
    a3 = fma(a3, m, c);
    a4 = fma(a4, m, c);
    a5 = fma(a5, m, c);
    a6 = fma(a6, m, c);
    a7 = fma(a7, m, c);
  }
  out[i % arrayLength(&out)] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
}
