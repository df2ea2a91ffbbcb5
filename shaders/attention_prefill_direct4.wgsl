// Causal paged attention for prefill, four queries per invocation, no workgroup memory. Each K and
// V row is loaded once and used by four consecutive queries of one head (a register block along
// the queries), which quarters the loads per FLOP of attention_prefill_direct.wgsl. Online softmax
// per query, rescaling only when its running maximum grows; keys are visited in position order,
// page by page, so results do not depend on chunking or page size.
override WG: u32;
override HEAD_DIM: u32;    // multiple of 4, <= 4 * MAX_HD4
override PAGED: bool;
override HD4: u32 = HEAD_DIM / 4u;
//#const MAX_HD4
//#include softmax
//#include kv_layout

// From PREFILL_PARAMS in src/kernels/attention.ts.
//#params

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<vec4<f32>>;            // [L, heads, HD4]
@group(0) @binding(2) var<storage, read> pool: array<vec4<f32>>;         // [pages, 2, kvHeads, pageSize, HD4]
@group(0) @binding(3) var<storage, read> blockTable: array<u32>;         // [pages of this sequence]
@group(0) @binding(4) var<storage, read_write> out: array<vec4<f32>>;    // [L, heads, HD4]

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let first = (wid.x * WG + lid) * 4u;  // this invocation's first query
  let h = wid.y;
  if (first >= p.L) { return; }
  let kvh = h / (p.heads / p.kvHeads);
  let kvLayout = KvLayout(p.kvHeads, p.pageSize, HD4);
  let qi0 = min(first + 0u, p.L - 1u);  // past the end: a duplicate, computed but not written
  let last0 = p.start + qi0;  // the last key query 0 sees
  var q0: array<vec4<f32>, MAX_HD4>;
  var o0: array<vec4<f32>, MAX_HD4>;
  var m0 = NEG_BIG;
  var l0 = 0.0;
  for (var d = 0u; d < HD4; d++) { q0[d] = q[(qi0 * p.heads + h) * HD4 + d] * p.scale; }
  let qi1 = min(first + 1u, p.L - 1u);  // past the end: a duplicate, computed but not written
  let last1 = p.start + qi1;  // the last key query 1 sees
  var q1: array<vec4<f32>, MAX_HD4>;
  var o1: array<vec4<f32>, MAX_HD4>;
  var m1 = NEG_BIG;
  var l1 = 0.0;
  for (var d = 0u; d < HD4; d++) { q1[d] = q[(qi1 * p.heads + h) * HD4 + d] * p.scale; }
  let qi2 = min(first + 2u, p.L - 1u);  // past the end: a duplicate, computed but not written
  let last2 = p.start + qi2;  // the last key query 2 sees
  var q2: array<vec4<f32>, MAX_HD4>;
  var o2: array<vec4<f32>, MAX_HD4>;
  var m2 = NEG_BIG;
  var l2 = 0.0;
  for (var d = 0u; d < HD4; d++) { q2[d] = q[(qi2 * p.heads + h) * HD4 + d] * p.scale; }
  let qi3 = min(first + 3u, p.L - 1u);  // past the end: a duplicate, computed but not written
  let last3 = p.start + qi3;  // the last key query 3 sees
  var q3: array<vec4<f32>, MAX_HD4>;
  var o3: array<vec4<f32>, MAX_HD4>;
  var m3 = NEG_BIG;
  var l3 = 0.0;
  for (var d = 0u; d < HD4; d++) { q3[d] = q[(qi3 * p.heads + h) * HD4 + d] * p.scale; }
  let visible = last3 + 1u;
  for (var t0 = 0u; t0 < visible; t0 += p.pageSize) {
    var page = blockTable[0];
    if (PAGED) { page = blockTable[t0 / p.pageSize]; }
    let kBase = kvRow(kvLayout, page, 0u, kvh, 0u);
    let vBase = kvRow(kvLayout, page, 1u, kvh, 0u);
    let n = min(p.pageSize, visible - t0);
    for (var jj = 0u; jj < n; jj++) {
      let t = t0 + jj;
      let kRow = kBase + jj * HD4;
      let vRow = vBase + jj * HD4;
      var s0 = 0.0;
      var s1 = 0.0;
      var s2 = 0.0;
      var s3 = 0.0;
      for (var d = 0u; d < HD4; d++) {
        let kv = pool[kRow + d];
        s0 += dot(q0[d], kv);
        s1 += dot(q1[d], kv);
        s2 += dot(q2[d], kv);
        s3 += dot(q3[d], kv);
      }
      var p0 = 0.0;
      if (t <= last0) {
        if (s0 > m0) {
          let c = exp(m0 - s0);
          l0 *= c;
          for (var d = 0u; d < HD4; d++) { o0[d] *= c; }
          m0 = s0;
        }
        p0 = exp(s0 - m0);
        l0 += p0;
      }
      var p1 = 0.0;
      if (t <= last1) {
        if (s1 > m1) {
          let c = exp(m1 - s1);
          l1 *= c;
          for (var d = 0u; d < HD4; d++) { o1[d] *= c; }
          m1 = s1;
        }
        p1 = exp(s1 - m1);
        l1 += p1;
      }
      var p2 = 0.0;
      if (t <= last2) {
        if (s2 > m2) {
          let c = exp(m2 - s2);
          l2 *= c;
          for (var d = 0u; d < HD4; d++) { o2[d] *= c; }
          m2 = s2;
        }
        p2 = exp(s2 - m2);
        l2 += p2;
      }
      var p3 = 0.0;
      if (t <= last3) {
        if (s3 > m3) {
          let c = exp(m3 - s3);
          l3 *= c;
          for (var d = 0u; d < HD4; d++) { o3[d] *= c; }
          m3 = s3;
        }
        p3 = exp(s3 - m3);
        l3 += p3;
      }
      for (var d = 0u; d < HD4; d++) {
        let vv = pool[vRow + d];
        o0[d] = fma(vec4<f32>(p0), vv, o0[d]);
        o1[d] = fma(vec4<f32>(p1), vv, o1[d]);
        o2[d] = fma(vec4<f32>(p2), vv, o2[d]);
        o3[d] = fma(vec4<f32>(p3), vv, o3[d]);
      }
    }
  }
  if (first + 0u < p.L) {
    for (var d = 0u; d < HD4; d++) { out[(qi0 * p.heads + h) * HD4 + d] = o0[d] / l0; }
  }
  if (first + 1u < p.L) {
    for (var d = 0u; d < HD4; d++) { out[(qi1 * p.heads + h) * HD4 + d] = o1[d] / l1; }
  }
  if (first + 2u < p.L) {
    for (var d = 0u; d < HD4; d++) { out[(qi2 * p.heads + h) * HD4 + d] = o2[d] / l2; }
  }
  if (first + 3u < p.L) {
    for (var d = 0u; d < HD4; d++) { out[(qi3 * p.heads + h) * HD4 + d] = o3[d] / l3; }
  }
}
