// Realistic dispatch probe: each dispatch reads the buffer the previous one wrote (the bind groups
// alternate a→b, b→a), so the GPU must finish one before starting the next, as a model's chain of
// kernels must. Timing many of them gives the cost of one more dependent dispatch with bound
// buffers, beside the empty-dispatch figure of empty.wgsl.
override WG: u32 = 64u;

@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32) {
  dst[lid] = src[lid] + 1.0;
}
