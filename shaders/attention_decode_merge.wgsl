// Split-K (flash-decoding) attention for decode, second half: combines the partial results that
// attention_decode_split.wgsl wrote for each slice of a sequence's context. With M the largest
// partial maximum, out = Σ o_s·exp(m_s − M) / Σ l_s·exp(m_s − M) over the sequence's slices that
// hold visible tokens (from the slice of the first key the sliding window shows, to ⌈len / sliceTokens⌉;
// the grid's others were never written this step and hold stale values). One invocation per (sequence, query head, vec4 of the head dim): no barriers, and enough
// invocations that it is small next to the first half.
override WG: u32;
override HEAD_DIM: u32;
override HD4: u32 = HEAD_DIM / 4u;
//#include softmax
//#include window

// From MERGE_PARAMS in src/kernels/attention.ts.
//#params

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> seqLens: array<u32>;            // [batch]
@group(0) @binding(2) var<storage, read> partO: array<vec4<f32>>;        // [batch, heads, slices, HD4]
@group(0) @binding(3) var<storage, read> partML: array<vec2<f32>>;       // [batch, heads, slices] (m, l)
@group(0) @binding(4) var<storage, read_write> out: array<vec4<f32>>;    // [batch, heads, HD4]

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3u) {
  let index = gid.x;  // over batch * heads * HD4
  if (index >= p.batch * p.heads * HD4) { return; }
  let d = index % HD4;
  let bh = index / HD4;  // b * heads + h
  let b = bh / p.heads;
  let len = seqLens[b];
  let used = min(p.slices, (len + p.sliceTokens - 1u) / p.sliceTokens);
  let firstSlice = kvFirstVisible(len - 1u, p.window) / p.sliceTokens;
  let base = bh * p.slices;
  var mMax = NEG_BIG;
  for (var s = firstSlice; s < used; s++) { mMax = max(mMax, partML[base + s].x); }
  var sum = 0.0;
  var acc = vec4<f32>(0.0);
  for (var s = firstSlice; s < used; s++) {
    let ml = partML[base + s];
    let w = exp(ml.x - mMax);
    sum += ml.y * w;
    acc = fma(vec4<f32>(w), partO[(base + s) * HD4 + d], acc);
  }
  out[index] = acc / sum;
}
