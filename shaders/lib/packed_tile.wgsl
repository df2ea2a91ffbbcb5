// A barrier-free tile of packed-weight products: ROWS rows of x (1…8) by COLS weight columns (4 or
// 8), summed over K one group of W_GROUP (16 or 32) at a time, each group's sums then scaled by its
// columns' scales (and, for formats with a min, its min times the group's sum of x added).
// What the packed GEMV's CPU family (rows = the batch) and the packed matmul (rows = a tile of the
// prompt) share. Per group and WVec, each column's words are loaded once and each x vec4 position
// is decoded once per column (w_raw: a mask and a conversion per weight), then used for every row
// (x · W, W the four columns' weights as a matrix); each x vec4 loaded serves all COLS columns, and
// so does the format's step and offset, applied to x (see weights_int4.wgsl): per row and position
// x · w_step is what meets the raw weights, and dot(x, w_offset) adds the zero points' share.
// Everything is indexed by literals once the helpers are inlined, so the sums stay in registers: no
// dynamically indexed private arrays, and no loops inside a group (even a loop of one trip made the
// group body 2x slower on SwiftShader).
// A column's sum runs over the groups in order, and within a group over the x vec4 positions in
// order, whatever ROWS is: a row's result does not depend on the rows computed beside it.
// The shader declares `override ROWS`, `override COLS`, `x: array<vec4<f32>>`, `y: array<f32>` and
// includes a weights_* snippet (w_load_sub, w_raw, w_step, w_offset, W_AFFINE, sub_affine,
// W_GROUP, W_SUBS, W_HAS_MIN, W_VECS_PER_GROUP, X_PER_W_VEC), and the fusions of src/kernels/fuse.ts: a `prologue` snippet
// (each x vec4 is multiplied by fuse_gamma as it is loaded; tile_rinv gives the rows' norm factors)
// and linear_epilogue (tile_store writes through epi_store4).

// Per tile row, the sums of four columns (component c is column c of the quad): columns 0-3 in one
// TileSums, 4-7 in a second.
alias TileSums = array<vec4<f32>, 8>;

// One group's running sums, per tile row: of the raw products, and of x over the group's even and
// odd positions j, which the zero points (w_offset, depending on j & 1 only) multiply once per group
// for all the columns.
struct TileGroup {
  s: TileSums,      // columns 0-3
  t: TileSums,      // columns 4-7
  even: TileSums,   // Σ x over positions 0, 2, 4, 6
  odd: TileSums,    // Σ x over positions 1, 3, 5, 7
}

// x vec4 `p` of each row (xa: rows 0-3, xb: 4-7, as x vec4 indices), the one meeting position j,
// times the quads' raw weights W (columns 0-3) and V (4-7), added to the group's sums.
fn tile_position(xa: vec4<u32>, xb: vec4<u32>, p: u32, j: u32, W: mat4x4<f32>, V: mat4x4<f32>,
                 G: ptr<function, TileGroup>) {
  let g = fuse_gamma(p);  // the fused RMSNorm's gamma at this position (1 without it)
  tile_row(0u, x[xa.x + p] * g, j, W, V, G);
  if (ROWS > 1u) { tile_row(1u, x[xa.y + p] * g, j, W, V, G); }
  if (ROWS > 2u) { tile_row(2u, x[xa.z + p] * g, j, W, V, G); }
  if (ROWS > 3u) { tile_row(3u, x[xa.w + p] * g, j, W, V, G); }
  if (ROWS > 4u) { tile_row(4u, x[xb.x + p] * g, j, W, V, G); }
  if (ROWS > 5u) { tile_row(5u, x[xb.y + p] * g, j, W, V, G); }
  if (ROWS > 6u) { tile_row(6u, x[xb.z + p] * g, j, W, V, G); }
  if (ROWS > 7u) { tile_row(7u, x[xb.w + p] * g, j, W, V, G); }
}

// Row r (a literal) of one position: v, the row's x vec4, against the raw weights of both quads.
fn tile_row(r: u32, v: vec4<f32>, j: u32, W: mat4x4<f32>, V: mat4x4<f32>,
            G: ptr<function, TileGroup>) {
  var xs = v;
  if (W_AFFINE) {
    xs = v * w_step(j);
    if ((j & 1u) == 0u) { (*G).even[r] += v; } else { (*G).odd[r] += v; }
  }
  (*G).s[r] += xs * W;
  if (COLS > 4u) { (*G).t[r] += xs * V; }
}

// Position j of the WVecs q (one per column): every column's four weights decoded once, applied to
// every row at x vec4 p.
fn tile_decoded(q: array<WVec, 8>, j: u32, xa: vec4<u32>, xb: vec4<u32>, p: u32,
                G: ptr<function, TileGroup>) {
  let W = mat4x4<f32>(w_raw(q[0], j), w_raw(q[1], j), w_raw(q[2], j), w_raw(q[3], j));
  var V = mat4x4<f32>();
  if (COLS > 4u) {
    V = mat4x4<f32>(w_raw(q[4], j), w_raw(q[5], j), w_raw(q[6], j), w_raw(q[7], j));
  }
  tile_position(xa, xb, p, j, W, V, G);
}

// The first `count` (≥ 1) positions of one WVec per column, at x vec4 p onwards. With count the
// constant X_PER_W_VEC (whole groups) every test below folds away.
fn tile_wvec(q: array<WVec, 8>, count: u32, xa: vec4<u32>, xb: vec4<u32>, p: u32,
             G: ptr<function, TileGroup>) {
  tile_decoded(q, 0u, xa, xb, p, G);
  if (count > 1u) { tile_decoded(q, 1u, xa, xb, p + 1u, G); }
  if (count > 2u) { tile_decoded(q, 2u, xa, xb, p + 2u, G); }
  if (count > 3u) { tile_decoded(q, 3u, xa, xb, p + 3u, G); }
  if (count > 4u) { tile_decoded(q, 4u, xa, xb, p + 4u, G); }
  if (count > 5u) { tile_decoded(q, 5u, xa, xb, p + 5u, G); }
  if (count > 6u) { tile_decoded(q, 6u, xa, xb, p + 6u, G); }
  if (count > 7u) { tile_decoded(q, 7u, xa, xb, p + 7u, G); }
}

// WVec u of group s of the current block of each column (ba, bb: the columns' block indices; s is
// the same for every column).
fn tile_words(ba: vec4<u32>, bb: vec4<u32>, s: u32, u: u32) -> array<WVec, 8> {
  var q = array<WVec, 8>();
  q[0] = w_load_sub(ba.x, s, u);
  q[1] = w_load_sub(ba.y, s, u);
  q[2] = w_load_sub(ba.z, s, u);
  q[3] = w_load_sub(ba.w, s, u);
  if (COLS > 4u) {
    q[4] = w_load_sub(bb.x, s, u);
    q[5] = w_load_sub(bb.y, s, u);
    q[6] = w_load_sub(bb.z, s, u);
    q[7] = w_load_sub(bb.w, s, u);
  }
  return q;
}

// The scales (x) and mins (y) of one group of four columns.
struct QuadAffine {
  s: vec4<f32>,
  m: vec4<f32>,
}

// The block headers of the tile's columns (ba: columns 0-3, bb: 4-7), read once per block: a GGUF
// K-type's groups take their scales from it without reading and unpacking them again.
fn tile_heads(ba: vec4<u32>, bb: vec4<u32>) -> array<WHead, 8> {
  var h = array<WHead, 8>();
  h[0] = w_head(ba.x);
  h[1] = w_head(ba.y);
  h[2] = w_head(ba.z);
  h[3] = w_head(ba.w);
  if (COLS > 4u) {
    h[4] = w_head(bb.x);
    h[5] = w_head(bb.y);
    h[6] = w_head(bb.z);
    h[7] = w_head(bb.w);
  }
  return h;
}

fn quad_affine(h0: WHead, h1: WHead, h2: WHead, h3: WHead, s: u32) -> QuadAffine {
  let a0 = head_affine(h0, s);
  let a1 = head_affine(h1, s);
  let a2 = head_affine(h2, s);
  let a3 = head_affine(h3, s);
  return QuadAffine(vec4<f32>(a0.x, a1.x, a2.x, a3.x), vec4<f32>(a0.y, a1.y, a2.y, a3.y));
}

// Adds each group's sums plus the zero points' share, times its columns' scales, and (formats with
// a min) the min times the group's sum of x, to the running sums a (columns 0-3) and b (4-7).
fn tile_scale(h: array<WHead, 8>, s: u32, G: ptr<function, TileGroup>,
              a: ptr<function, TileSums>, b: ptr<function, TileSums>) {
  let fa = quad_affine(h[0], h[1], h[2], h[3], s);
  var fb = QuadAffine(vec4<f32>(), vec4<f32>());
  if (COLS > 4u) { fb = quad_affine(h[4], h[5], h[6], h[7], s); }
  tile_scale_row(0u, fa, fb, G, a, b);
  if (ROWS > 1u) { tile_scale_row(1u, fa, fb, G, a, b); }
  if (ROWS > 2u) { tile_scale_row(2u, fa, fb, G, a, b); }
  if (ROWS > 3u) { tile_scale_row(3u, fa, fb, G, a, b); }
  if (ROWS > 4u) { tile_scale_row(4u, fa, fb, G, a, b); }
  if (ROWS > 5u) { tile_scale_row(5u, fa, fb, G, a, b); }
  if (ROWS > 6u) { tile_scale_row(6u, fa, fb, G, a, b); }
  if (ROWS > 7u) { tile_scale_row(7u, fa, fb, G, a, b); }
}

fn tile_scale_row(r: u32, fa: QuadAffine, fb: QuadAffine, G: ptr<function, TileGroup>,
                  a: ptr<function, TileSums>, b: ptr<function, TileSums>) {
  var sr = (*G).s[r];
  var tr = (*G).t[r];
  if (W_AFFINE) {
    let zero = vec4<f32>(dot((*G).even[r], w_offset(0u)) + dot((*G).odd[r], w_offset(1u)));
    sr += zero;
    tr += zero;
  }
  (*a)[r] += sr * fa.s;
  if (COLS > 4u) { (*b)[r] += tr * fb.s; }
  if (W_HAS_MIN) {
    let xs = vec4<f32>(dot((*G).even[r] + (*G).odd[r], vec4<f32>(1.0)));
    (*a)[r] += xs * fa.m;
    if (COLS > 4u) { (*b)[r] += xs * fb.m; }
  }
}

// One whole group s of the blocks ba, bb (headers h), whose x vec4s start at xg: its WVecs, then
// its scales. The WVecs are unrolled: even a loop of one trip (int4) made this body run 2x slower
// on SwiftShader.
fn tile_group(ba: vec4<u32>, bb: vec4<u32>, s: u32, h: array<WHead, 8>, xa: vec4<u32>, xb: vec4<u32>,
              xg: u32, a: ptr<function, TileSums>, b: ptr<function, TileSums>) {
  // Initialized explicitly: a bare `var G: TileGroup;` in a loop body was not zeroed again on each
  // trip on Dawn with SwiftShader, so each group added the earlier groups' sums once more.
  var G = TileGroup();
  tile_wvec(tile_words(ba, bb, s, 0u), X_PER_W_VEC, xa, xb, xg, &G);
  if (W_VECS_PER_GROUP > 1u) {
    tile_wvec(tile_words(ba, bb, s, 1u), X_PER_W_VEC, xa, xb, xg + X_PER_W_VEC, &G);
  }
  if (W_VECS_PER_GROUP > 2u) {
    tile_wvec(tile_words(ba, bb, s, 2u), X_PER_W_VEC, xa, xb, xg + 2u * X_PER_W_VEC, &G);
    tile_wvec(tile_words(ba, bb, s, 3u), X_PER_W_VEC, xa, xb, xg + 3u * X_PER_W_VEC, &G);
  }
  tile_scale(h, s, &G, a, b);
}

// The tile's sums over all of K. na, nb: the weight rows (output columns) of the tile, clamped into
// range; xa, xb: each tile row's first x vec4. A row's last group, when K is no multiple of 32,
// takes only the x vec4s below K (the weights past K are zero padding; x past K is never read).
fn tile_run(na: vec4<u32>, nb: vec4<u32>, xa: vec4<u32>, xb: vec4<u32>, K: u32,
            a: ptr<function, TileSums>, b: ptr<function, TileSums>) {
  // Blocks along a row: a GGUF type's rows are whole blocks; the project's formats have blocks of one
  // group (W_SUBS = 1), the last one possibly part full.
  let blockElems = W_GROUP * W_SUBS;
  let blocks = (K + blockElems - 1u) / blockElems;
  let full = K / blockElems;
  for (var bk = 0u; bk < full; bk++) {
    let ba = na * blocks + bk;
    let bb = nb * blocks + bk;
    let h = tile_heads(ba, bb);
    if (W_SUBS == 1u) {
      tile_group(ba, bb, 0u, h, xa, xb, (W_GROUP / 4u) * bk, a, b);
    } else {
      for (var s = 0u; s < W_SUBS; s++) {
        tile_group(ba, bb, s, h, xa, xb, (W_GROUP / 4u) * (bk * W_SUBS + s), a, b);
      }
    }
  }
  // A part group: only the project's own formats (f16, int8, int4; W_SUBS = 1) allow K to end inside one.
  if (full < blocks) {
    var G = TileGroup();
    let ba = na * blocks + full;
    let bb = nb * blocks + full;
    let xg = (W_GROUP / 4u) * full;
    let nx = K / 4u - xg;
    for (var u = 0u; u * X_PER_W_VEC < nx; u++) {
      let first = u * X_PER_W_VEC;
      tile_wvec(tile_words(ba, bb, 0u, u), min(X_PER_W_VEC, nx - first), xa, xb, xg + first, &G);
    }
    tile_scale(tile_heads(ba, bb), 0u, &G, a, b);
  }
}

// The fused RMSNorm's factor of each tile row (1 without it), from a pass over the row: the tile's
// own loop meets each x vec4 once per group of its columns, not once in all, so it cannot sum them.
fn tile_rinv(xa: vec4<u32>, xb: vec4<u32>, k4: u32) -> array<f32, 8> {
  var r = array<f32, 8>(1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0);
  r[0] = fuse_row_rinv(xa.x, k4);
  if (ROWS > 1u) { r[1] = fuse_row_rinv(xa.y, k4); }
  if (ROWS > 2u) { r[2] = fuse_row_rinv(xa.z, k4); }
  if (ROWS > 3u) { r[3] = fuse_row_rinv(xa.w, k4); }
  if (ROWS > 4u) { r[4] = fuse_row_rinv(xb.x, k4); }
  if (ROWS > 5u) { r[5] = fuse_row_rinv(xb.y, k4); }
  if (ROWS > 6u) { r[6] = fuse_row_rinv(xb.z, k4); }
  if (ROWS > 7u) { r[7] = fuse_row_rinv(xb.w, k4); }
  return r;
}

// Writes the tile's sums, each row times its norm factor: `rows` rows from y row `row0`, `cols`
// columns from `col0` (a multiple of 4), of a product N columns wide, through the epilogue.
fn tile_store(row0: u32, rows: u32, col0: u32, cols: u32, N: u32, rinv: array<f32, 8>,
              a: ptr<function, TileSums>, b: ptr<function, TileSums>) {
  tile_store_row(row0, col0, cols, N, (*a)[0] * rinv[0], (*b)[0] * rinv[0]);
  if (ROWS > 1u && rows > 1u) { tile_store_row(row0 + 1u, col0, cols, N, (*a)[1] * rinv[1], (*b)[1] * rinv[1]); }
  if (ROWS > 2u && rows > 2u) { tile_store_row(row0 + 2u, col0, cols, N, (*a)[2] * rinv[2], (*b)[2] * rinv[2]); }
  if (ROWS > 3u && rows > 3u) { tile_store_row(row0 + 3u, col0, cols, N, (*a)[3] * rinv[3], (*b)[3] * rinv[3]); }
  if (ROWS > 4u && rows > 4u) { tile_store_row(row0 + 4u, col0, cols, N, (*a)[4] * rinv[4], (*b)[4] * rinv[4]); }
  if (ROWS > 5u && rows > 5u) { tile_store_row(row0 + 5u, col0, cols, N, (*a)[5] * rinv[5], (*b)[5] * rinv[5]); }
  if (ROWS > 6u && rows > 6u) { tile_store_row(row0 + 6u, col0, cols, N, (*a)[6] * rinv[6], (*b)[6] * rinv[6]); }
  if (ROWS > 7u && rows > 7u) { tile_store_row(row0 + 7u, col0, cols, N, (*a)[7] * rinv[7], (*b)[7] * rinv[7]); }
}

fn tile_store_row(row: u32, col0: u32, cols: u32, N: u32, va: vec4<f32>, vb: vec4<f32>) {
  epi_store4(row, col0, N, min(cols, 4u), va);
  if (cols > 4u) { epi_store4(row, col0 + 4u, N, cols - 4u, vb); }
}
