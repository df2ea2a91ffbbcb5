// Causal paged attention for prefill, register-blocked and barrier-free: one invocation holds a block
// of 4 (query, head) rows against a block of 8 keys in named registers, like the register-tiled
// matmul. Per step of 4 dims it loads 8 K vec4s and 4 Q vec4s for 32 dot products, then, per
// block of keys, rescales its rows once (online softmax: one max, one correction and two vec4 exps
// per row) and adds P·V with 8 V vec4s shared by the 4 rows. No private array is indexed by a loop
// variable: on CPU-backed adapters (SwiftShader) such an array lives in memory and every access is a
// gather or scatter, which is what made the 'direct' families slow. The output accumulators are the
// rows of `out` themselves (zeroed first, rescaled and added to once per block of keys): each
// invocation owns its rows, so no other invocation touches them.
// Rows: the (query, head) pairs of one KV head, query-major (pair j = query j / group, head j %
// group of the group), 4 consecutive pairs per invocation. Each K and V row is loaded once per
// invocation that sees it, whatever the group size, and the invocations of one SIMD group walk the
// same keys together. Keys past every row's position are never visited (causal); a block that some
// row must not see entirely is masked, every other block runs without a select. Key blocks are
// aligned to absolute positions and each row's sums run in position order, so a query's result does
// not depend on how the prompt was chunked, on the page size or on which rows share its invocation.
// The pool holds the `kv` slot's element type: a key's scale multiplies its 4 rows' scores, a
// value's its 4 rows' probabilities. With a sliding window the walk starts at the block of the
// first row's first visible key, and keys before a row's first are masked like future ones. A row
// whose first blocks it sees none of sums garbage with maximum NEG_BIG until its first real key,
// whose correction exp(NEG_BIG − m) = 0 then clears it.
override WG: u32;
override HEAD_DIM: u32;          // multiple of 4
override PAGED: bool;            // false: contiguous cache, one page of pageSize = maxSeqLen
override HD4: u32 = HEAD_DIM / 4u;
override ROW: u32 = HD4 + KV_EXTRA;  // words per cached row
//#const KEYS                    // keys per block (the 8 named keys below); divides every page size
//#include softmax
//#include kv_layout
//#include window
//#include kv

// From PREFILL_PARAMS in src/kernels/attention.ts.
//#params

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<vec4<f32>>;            // [L, heads, HD4]
@group(0) @binding(2) var<storage, read> pool: array<KvWord>;            // [pages, 2, kvHeads, pageSize, ROW]
@group(0) @binding(3) var<storage, read> blockTable: array<u32>;         // [pages of this sequence]
@group(0) @binding(4) var<storage, read_write> out: array<vec4<f32>>;    // [L, heads, HD4]

fn max4(v: vec4<f32>) -> f32 { return max(max(v.x, v.y), max(v.z, v.w)); }

fn sum4(v: vec4<f32>) -> f32 { return (v.x + v.y) + (v.z + v.w); }

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3u) {
  let group = p.heads / p.kvHeads;
  let pairs = p.L * group;
  let j0 = gid.x * 4u;
  if (j0 >= pairs) { return; }
  let kvh = gid.y;
  // A row past the last pair repeats the last pair's inputs and writes nothing.
  let j1 = min(j0 + 1u, pairs - 1u);
  let j2 = min(j0 + 2u, pairs - 1u);
  let j3 = min(j0 + 3u, pairs - 1u);
  let ok1 = j0 + 1u < pairs;
  let ok2 = j0 + 2u < pairs;
  let ok3 = j0 + 3u < pairs;
  // vec4 index of each row in q and out, and the position of its query.
  let r0 = ((j0 / group) * p.heads + kvh * group + j0 % group) * HD4;
  let r1 = ((j1 / group) * p.heads + kvh * group + j1 % group) * HD4;
  let r2 = ((j2 / group) * p.heads + kvh * group + j2 % group) * HD4;
  let r3 = ((j3 / group) * p.heads + kvh * group + j3 % group) * HD4;
  let pos0 = p.start + j0 / group;
  let pos1 = p.start + j1 / group;
  let pos2 = p.start + j2 / group;
  let pos3 = p.start + j3 / group;
  for (var d = 0u; d < HD4; d++) {
    out[r0 + d] = vec4<f32>(0.0);
    if (ok1) { out[r1 + d] = vec4<f32>(0.0); }
    if (ok2) { out[r2 + d] = vec4<f32>(0.0); }
    if (ok3) { out[r3 + d] = vec4<f32>(0.0); }
  }
  var m0 = NEG_BIG;
  var m1 = NEG_BIG;
  var m2 = NEG_BIG;
  var m3 = NEG_BIG;
  var l0 = 0.0;
  var l1 = 0.0;
  var l2 = 0.0;
  var l3 = 0.0;
  let kvLayout = KvLayout(p.kvHeads, p.pageSize, ROW);
  let last = pos3;  // the last key any row sees (rows ascend)
  let tv = vec4<u32>(0u, 1u, 2u, 3u);
  // Each row's first visible key (ascending with the rows, like their positions).
  let lo0 = kvFirstVisible(pos0, p.window);
  let lo1 = kvFirstVisible(pos1, p.window);
  let lo2 = kvFirstVisible(pos2, p.window);
  let lo3 = kvFirstVisible(pos3, p.window);
  for (var t0 = lo0 - lo0 % KEYS; t0 <= last; t0 += KEYS) {
    var page = blockTable[0];
    var offset = t0;
    if (PAGED) {
      page = blockTable[t0 / p.pageSize];
      offset = t0 % p.pageSize;
    }
    let kBase = kvRow(kvLayout, page, 0u, kvh, offset);
    let vBase = kvRow(kvLayout, page, 1u, kvh, offset);
    // Keys of the block past `last` load row `last` again (same page: the block does not cross
    // one), so nothing outside the sequence is read; they are masked below.
    let n = last - t0;
    let o1 = min(1u, n) * ROW;
    let o2 = min(2u, n) * ROW;
    let o3 = min(3u, n) * ROW;
    let o4 = min(4u, n) * ROW;
    let o5 = min(5u, n) * ROW;
    let o6 = min(6u, n) * ROW;
    let o7 = min(7u, n) * ROW;
    // Scores: s<row>a holds keys t0 .. t0+3, s<row>b keys t0+4 .. t0+7.
    var s0a = vec4<f32>(0.0);
    var s0b = vec4<f32>(0.0);
    var s1a = vec4<f32>(0.0);
    var s1b = vec4<f32>(0.0);
    var s2a = vec4<f32>(0.0);
    var s2b = vec4<f32>(0.0);
    var s3a = vec4<f32>(0.0);
    var s3b = vec4<f32>(0.0);
    for (var d = 0u; d < HD4; d++) {
      let k0 = kvVec(kBase + d);
      let k1 = kvVec(kBase + o1 + d);
      let k2 = kvVec(kBase + o2 + d);
      let k3 = kvVec(kBase + o3 + d);
      let k4 = kvVec(kBase + o4 + d);
      let k5 = kvVec(kBase + o5 + d);
      let k6 = kvVec(kBase + o6 + d);
      let k7 = kvVec(kBase + o7 + d);
      let q0 = q[r0 + d];
      s0a += vec4<f32>(dot(q0, k0), dot(q0, k1), dot(q0, k2), dot(q0, k3));
      s0b += vec4<f32>(dot(q0, k4), dot(q0, k5), dot(q0, k6), dot(q0, k7));
      let q1 = q[r1 + d];
      s1a += vec4<f32>(dot(q1, k0), dot(q1, k1), dot(q1, k2), dot(q1, k3));
      s1b += vec4<f32>(dot(q1, k4), dot(q1, k5), dot(q1, k6), dot(q1, k7));
      let q2 = q[r2 + d];
      s2a += vec4<f32>(dot(q2, k0), dot(q2, k1), dot(q2, k2), dot(q2, k3));
      s2b += vec4<f32>(dot(q2, k4), dot(q2, k5), dot(q2, k6), dot(q2, k7));
      let q3 = q[r3 + d];
      s3a += vec4<f32>(dot(q3, k0), dot(q3, k1), dot(q3, k2), dot(q3, k3));
      s3b += vec4<f32>(dot(q3, k4), dot(q3, k5), dot(q3, k6), dot(q3, k7));
    }
    // The query scale times each key's row scale (1 for f32 and f16).
    let ka = p.scale * vec4<f32>(kvScale(kBase + HD4), kvScale(kBase + o1 + HD4), kvScale(kBase + o2 + HD4),
                                 kvScale(kBase + o3 + HD4));
    let kb = p.scale * vec4<f32>(kvScale(kBase + o4 + HD4), kvScale(kBase + o5 + HD4), kvScale(kBase + o6 + HD4),
                                 kvScale(kBase + o7 + HD4));
    s0a *= ka;
    s0b *= kb;
    s1a *= ka;
    s1b *= kb;
    s2a *= ka;
    s2b *= kb;
    s3a *= ka;
    s3b *= kb;
    // Causal mask, only where some key of the block is past the first row's position (rows
    // ascend). Every row sees key 0, so after the first block no running maximum is NEG_BIG, and a
    // row that sees none of a later block's keys keeps its state (correction 1, probabilities 0).
    if (t0 + KEYS - 1u > pos0) {
      let ta = vec4<u32>(t0) + tv;
      let tb = ta + 4u;
      let big = vec4<f32>(NEG_BIG);
      s0a = select(s0a, big, ta > vec4<u32>(pos0));
      s0b = select(s0b, big, tb > vec4<u32>(pos0));
      s1a = select(s1a, big, ta > vec4<u32>(pos1));
      s1b = select(s1b, big, tb > vec4<u32>(pos1));
      s2a = select(s2a, big, ta > vec4<u32>(pos2));
      s2b = select(s2b, big, tb > vec4<u32>(pos2));
      s3a = select(s3a, big, ta > vec4<u32>(pos3));
      s3b = select(s3b, big, tb > vec4<u32>(pos3));
    }
    // Window mask, only where some key of the block is before the last row's first visible key.
    if (t0 < lo3) {
      let ta = vec4<u32>(t0) + tv;
      let tb = ta + 4u;
      let big = vec4<f32>(NEG_BIG);
      s0a = select(s0a, big, ta < vec4<u32>(lo0));
      s0b = select(s0b, big, tb < vec4<u32>(lo0));
      s1a = select(s1a, big, ta < vec4<u32>(lo1));
      s1b = select(s1b, big, tb < vec4<u32>(lo1));
      s2a = select(s2a, big, ta < vec4<u32>(lo2));
      s2b = select(s2b, big, tb < vec4<u32>(lo2));
      s3a = select(s3a, big, ta < vec4<u32>(lo3));
      s3b = select(s3b, big, tb < vec4<u32>(lo3));
    }
    // Online softmax, once per block and row: c<row> rescales what the row has summed so far.
    let n0 = max(m0, max(max4(s0a), max4(s0b)));
    let n1 = max(m1, max(max4(s1a), max4(s1b)));
    let n2 = max(m2, max(max4(s2a), max4(s2b)));
    let n3 = max(m3, max(max4(s3a), max4(s3b)));
    let c0 = exp(m0 - n0);
    let c1 = exp(m1 - n1);
    let c2 = exp(m2 - n2);
    let c3 = exp(m3 - n3);
    let p0a = exp(s0a - n0);
    let p0b = exp(s0b - n0);
    let p1a = exp(s1a - n1);
    let p1b = exp(s1b - n1);
    let p2a = exp(s2a - n2);
    let p2b = exp(s2b - n2);
    let p3a = exp(s3a - n3);
    let p3b = exp(s3b - n3);
    // Each value's row scale folds into the probabilities that weight it (after the sums).
    let va = vec4<f32>(kvScale(vBase + HD4), kvScale(vBase + o1 + HD4), kvScale(vBase + o2 + HD4),
                       kvScale(vBase + o3 + HD4));
    let vb = vec4<f32>(kvScale(vBase + o4 + HD4), kvScale(vBase + o5 + HD4), kvScale(vBase + o6 + HD4),
                       kvScale(vBase + o7 + HD4));
    l0 = l0 * c0 + (sum4(p0a) + sum4(p0b));
    l1 = l1 * c1 + (sum4(p1a) + sum4(p1b));
    l2 = l2 * c2 + (sum4(p2a) + sum4(p2b));
    l3 = l3 * c3 + (sum4(p3a) + sum4(p3b));
    m0 = n0;
    m1 = n1;
    m2 = n2;
    m3 = n3;
    for (var d = 0u; d < HD4; d++) {
      let v0 = kvVec(vBase + d);
      let v1 = kvVec(vBase + o1 + d);
      let v2 = kvVec(vBase + o2 + d);
      let v3 = kvVec(vBase + o3 + d);
      let v4 = kvVec(vBase + o4 + d);
      let v5 = kvVec(vBase + o5 + d);
      let v6 = kvVec(vBase + o6 + d);
      let v7 = kvVec(vBase + o7 + d);
      out[r0 + d] = pv(out[r0 + d] * c0, p0a * va, p0b * vb, v0, v1, v2, v3, v4, v5, v6, v7);
      if (ok1) { out[r1 + d] = pv(out[r1 + d] * c1, p1a * va, p1b * vb, v0, v1, v2, v3, v4, v5, v6, v7); }
      if (ok2) { out[r2 + d] = pv(out[r2 + d] * c2, p2a * va, p2b * vb, v0, v1, v2, v3, v4, v5, v6, v7); }
      if (ok3) { out[r3 + d] = pv(out[r3 + d] * c3, p3a * va, p3b * vb, v0, v1, v2, v3, v4, v5, v6, v7); }
    }
  }
  let i0 = 1.0 / l0;
  let i1 = 1.0 / l1;
  let i2 = 1.0 / l2;
  let i3 = 1.0 / l3;
  for (var d = 0u; d < HD4; d++) {
    out[r0 + d] *= i0;
    if (ok1) { out[r1 + d] *= i1; }
    if (ok2) { out[r2 + d] *= i2; }
    if (ok3) { out[r3 + d] *= i3; }
  }
}

// o + Σ_k p_k · v_k over the block's 8 keys, in key order.
fn pv(
  o: vec4<f32>,
  pa: vec4<f32>,
  pb: vec4<f32>,
  v0: vec4<f32>,
  v1: vec4<f32>,
  v2: vec4<f32>,
  v3: vec4<f32>,
  v4: vec4<f32>,
  v5: vec4<f32>,
  v6: vec4<f32>,
  v7: vec4<f32>,
) -> vec4<f32> {
  var r = fma(vec4<f32>(pa.x), v0, o);
  r = fma(vec4<f32>(pa.y), v1, r);
  r = fma(vec4<f32>(pa.z), v2, r);
  r = fma(vec4<f32>(pa.w), v3, r);
  r = fma(vec4<f32>(pb.x), v4, r);
  r = fma(vec4<f32>(pb.y), v5, r);
  r = fma(vec4<f32>(pb.z), v6, r);
  return fma(vec4<f32>(pb.w), v7, r);
}
