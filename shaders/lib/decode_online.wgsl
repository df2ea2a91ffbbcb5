// The online softmax of one decode query per head for GROUP query heads that share a KV head, over
// rows streamed in any number of runs: what the barrier-free decode kernels (attention_decode_direct,
// attention_decode_split) have in common, so a query's arithmetic is the same, in the same order, in
// both. The state lives in private memory; each K and V row is loaded once and used by all GROUP
// queries. It rescales a query's output only when its running maximum grows.
// The including shader provides: overrides GROUP, HD4 and ROW (words per cached row), constants
// MAX_GROUP and MAX_SLOTS (GROUP ≤ MAX_GROUP, GROUP·HD4 ≤ MAX_SLOTS), the `q` binding (vec4s), the
// `pool` binding and the `kv` snippet of its element type, and the softmax snippet (NEG_BIG).
var<private> qv: array<vec4<f32>, MAX_SLOTS>;  // [GROUP][HD4], scaled queries
var<private> o: array<vec4<f32>, MAX_SLOTS>;   // [GROUP][HD4], output not yet divided by l
var<private> m: array<f32, MAX_GROUP>;         // running maximum score
var<private> l: array<f32, MAX_GROUP>;         // running sum of exp(score - m)

// Loads `count` query heads starting at vec4 index qBase of q, times `scale`, and empties the state.
// Slots past the last head repeat it: computed, never written (a short last chunk of a group).
fn onlineBegin(qBase: u32, count: u32, scale: f32) {
  for (var g = 0u; g < GROUP; g++) {
    let src = qBase + min(g, count - 1u) * HD4;
    for (var d = 0u; d < HD4; d++) {
      qv[g * HD4 + d] = q[src + d] * scale;
      o[g * HD4 + d] = vec4<f32>(0.0);
    }
    m[g] = NEG_BIG;
    l[g] = 0.0;
  }
}

// Attends to n consecutive cached rows: K rows from word kBase, V rows from vBase, ROW words apart.
fn onlineRows(kBase: u32, vBase: u32, n: u32) {
  for (var j = 0u; j < n; j++) {
    let kRow = kBase + j * ROW;
    // Explicit zeros: Chromium's compiler (Tint to SwiftShader, measured) does not re-zero a
    // loop-scoped var declared without an initializer on each iteration.
    var s = array<f32, MAX_GROUP>();
    for (var d = 0u; d < HD4; d++) {
      let k = kvVec(kRow + d);
      for (var g = 0u; g < GROUP; g++) { s[g] += dot(qv[g * HD4 + d], k); }
    }
    let kScale = kvScale(kRow + HD4);
    for (var g = 0u; g < GROUP; g++) { s[g] *= kScale; }
    var pr = array<f32, MAX_GROUP>();
    for (var g = 0u; g < GROUP; g++) {
      if (s[g] > m[g]) {
        let correction = exp(m[g] - s[g]);
        l[g] *= correction;
        for (var d = 0u; d < HD4; d++) { o[g * HD4 + d] *= correction; }
        m[g] = s[g];
      }
      pr[g] = exp(s[g] - m[g]);
      l[g] += pr[g];
    }
    let vRow = vBase + j * ROW;
    let vScale = kvScale(vRow + HD4);
    for (var g = 0u; g < GROUP; g++) { pr[g] *= vScale; }
    for (var d = 0u; d < HD4; d++) {
      let v = kvVec(vRow + d);
      for (var g = 0u; g < GROUP; g++) { o[g * HD4 + d] = fma(vec4<f32>(pr[g]), v, o[g * HD4 + d]); }
    }
  }
}
