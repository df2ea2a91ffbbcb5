import { f16Values } from '../weight-format.ts';
import { nearestInt, putHalf } from './ggml-round.ts';
import { halfBits } from './half.ts';
import { unpackScalesAndMins } from './k-scales.ts';
import type { QuantType } from './types.ts';

/**
 * Q4_K (block_q4_K): a super-block of 256 weights in 8 sub-blocks of 32, each with a 6-bit scale
 * and a 6-bit min (packed in 12 bytes, see k-scales.ts) times the block's f16 d and dmin; a weight
 * is (d · scale) · q − (dmin · min), with q a 4-bit quant.
 *
 *   [0, 2) d   [2, 4) dmin   [4, 16) scales   [16, 144) qs
 *
 * Sub-blocks pair up on 32 bytes of qs: sub-block 2c reads the low nibbles of bytes 32c …,
 * sub-block 2c + 1 the high nibbles.
 */
export const Q4_K: QuantType = {
  name: 'Q4_K',
  ggml: 12,
  blockElems: 256,
  blockBytes: 144,
  quants: [[16, 144]],
  header: [[0, 16, 0]],
  headerWords: 4,
  dequantize(src, offset, blocks, out, outOffset) {
    const half = f16Values();
    const scales = new Uint8Array(8);
    const mins = new Uint8Array(8);
    for (let b = 0; b < blocks; b++) {
      const at = offset + b * 144;
      const y = outOffset + b * 256;
      const d = half[halfBits(src, at)];
      const dmin = half[halfBits(src, at + 2)];
      unpackScalesAndMins(src, at + 4, scales, mins);
      for (let c = 0; c < 4; c++) {
        const d1 = Math.fround(d * scales[2 * c]);
        const m1 = Math.fround(dmin * mins[2 * c]);
        const d2 = Math.fround(d * scales[2 * c + 1]);
        const m2 = Math.fround(dmin * mins[2 * c + 1]);
        const q = at + 16 + 32 * c;
        const y1 = y + 64 * c;
        for (let l = 0; l < 32; l++) {
          const byte = src[q + l];
          out[y1 + l] = Math.fround(d1 * (byte & 0xf)) - m1;
          out[y1 + 32 + l] = Math.fround(d2 * (byte >> 4)) - m2;
        }
      }
    }
  },
  quantize: quantizeQ4K,
};

const f = Math.fround;

/**
 * One sub-block's affine fit, as ggml's make_qkx2_quants does it for Q4_K (nmax 15, 20 steps): the
 * weights x ≈ scale · L − min with L in 0…15, minimising Σ w · (scale · L − min − x)². Start from the
 * range's own scale; then try 21 stretched grids (nmax − 1 + 0.1 · step levels across the range),
 * and for each rounding fit scale and min by weighted least squares (min held at 0 when the fit
 * wants it positive), keeping the best; a kept fit's min becomes the origin of the next grids. Every sum in f32, in ggml's order, so the choice between
 * two near-equal fits falls as ggml's does. Writes L and returns [scale, −min].
 */
function fitSubBlock(
  x: Float32Array,
  at: number,
  w: Float32Array,
  L: Uint8Array,
  Laux: Uint8Array,
): [number, number] {
  const n = 32;
  const nmax = 15;
  let min = x[at];
  let max = x[at];
  let sumW = w[0];
  let sumX = f(sumW * x[at]);
  for (let i = 1; i < n; i++) {
    const v = x[at + i];
    if (v < min) min = v;
    if (v > max) max = v;
    sumW = f(sumW + w[i]);
    sumX = f(sumX + f(w[i] * v));
  }
  if (min > 0) min = 0;
  if (max === min) {
    L.fill(0);
    return [0, -min];
  }
  let iscale = f(nmax / f(max - min));
  let scale = f(1 / iscale);
  let bestError = 0;
  for (let i = 0; i < n; i++) {
    const l = Math.max(0, Math.min(nmax, nearestInt(f(iscale * f(x[at + i] - min)))));
    L[i] = l;
    const diff = f(f(f(scale * l) + min) - x[at + i]);
    bestError = f(bestError + f(w[i] * f(diff * diff)));
  }
  for (let step = 0; step <= 20; step++) {
    // As in ggml, a better fit's min moves the grid of every later step.
    iscale = f(f(f(-1 + f(f(0.1) * step)) + nmax) / f(max - min));
    let sumL = 0;
    let sumL2 = 0;
    let sumXL = 0;
    for (let i = 0; i < n; i++) {
      const l = Math.max(0, Math.min(nmax, nearestInt(f(iscale * f(x[at + i] - min)))));
      Laux[i] = l;
      const wl = f(w[i] * l);
      sumL = f(sumL + wl);
      sumL2 = f(sumL2 + f(wl * l));
      sumXL = f(sumXL + f(wl * x[at + i]));
    }
    const D = f(f(sumW * sumL2) - f(sumL * sumL));
    if (!(D > 0)) continue;
    let thisScale = f(f(f(sumW * sumXL) - f(sumX * sumL)) / D);
    let thisMin = f(f(f(sumL2 * sumX) - f(sumL * sumXL)) / D);
    if (thisMin > 0) {
      thisMin = 0;
      thisScale = f(sumXL / sumL2);
    }
    let error = 0;
    for (let i = 0; i < n; i++) {
      const diff = f(f(f(thisScale * Laux[i]) + thisMin) - x[at + i]);
      error = f(error + f(w[i] * f(diff * diff)));
    }
    if (error < bestError) {
      L.set(Laux);
      bestError = error;
      scale = thisScale;
      min = thisMin;
    }
  }
  return [scale, -min];
}

/**
 * quantize_row_q4_K_ref. Each sub-block of 32 is fitted (fitSubBlock, weighting each weight by the
 * sub-block's RMS plus its own magnitude); the eight scales and eight mins are then quantized to 6
 * bits against the block's largest (d = max scale / 63, dmin = max min / 63, both f16), and every
 * weight is quantized again against the scale and min as stored, so rounding the scales costs no
 * more than it must.
 */
function quantizeQ4K(
  src: Float32Array,
  offset: number,
  blocks: number,
  out: Uint8Array,
  outOffset: number,
): void {
  const w = new Float32Array(32);
  const L = new Uint8Array(256);
  const Laux = new Uint8Array(32);
  const scales = new Float32Array(8);
  const mins = new Float32Array(8);
  const sc = new Uint8Array(8);
  const m = new Uint8Array(8);
  const half = f16Values();
  for (let b = 0; b < blocks; b++) {
    const x = offset + 256 * b;
    const at = outOffset + 144 * b;
    let maxScale = 0;
    let maxMin = 0;
    for (let j = 0; j < 8; j++) {
      const sub = x + 32 * j;
      let sumX2 = 0;
      for (let l = 0; l < 32; l++) sumX2 = f(sumX2 + f(src[sub + l] * src[sub + l]));
      const avX = f(Math.sqrt(f(sumX2 / 32)));
      for (let l = 0; l < 32; l++) w[l] = f(avX + Math.abs(src[sub + l]));
      const [scale, min] = fitSubBlock(src, sub, w, L.subarray(32 * j, 32 * j + 32), Laux);
      scales[j] = scale;
      mins[j] = min;
      if (scale > maxScale) maxScale = scale;
      if (min > maxMin) maxMin = min;
    }
    const invScale = maxScale > 0 ? f(63 / maxScale) : 0;
    const invMin = maxMin > 0 ? f(63 / maxMin) : 0;
    const packed = out.subarray(at + 4, at + 16);
    packed.fill(0);
    for (let j = 0; j < 8; j++) {
      const ls = Math.min(63, nearestInt(f(invScale * scales[j])) & 0xff);
      const lm = Math.min(63, nearestInt(f(invMin * mins[j])) & 0xff);
      // The 12-byte packing that k-scales.ts reads back.
      if (j < 4) {
        packed[j] = ls;
        packed[j + 4] = lm;
      } else {
        packed[j + 4] = (ls & 0xf) | ((lm & 0xf) << 4);
        packed[j - 4] |= (ls >> 4) << 6;
        packed[j] |= (lm >> 4) << 6;
      }
    }
    putHalf(out, at, f(maxScale / 63));
    putHalf(out, at + 2, f(maxMin / 63));
    const d = half[halfBits(out, at)];
    const dmin = half[halfBits(out, at + 2)];
    unpackScalesAndMins(out, at + 4, sc, m);
    for (let j = 0; j < 8; j++) {
      const dj = f(d * sc[j]);
      if (!dj) continue;
      const mj = f(dmin * m[j]);
      for (let i = 0; i < 32; i++) {
        L[32 * j + i] = Math.max(0, Math.min(15, nearestInt(f(f(src[x + 32 * j + i] + mj) / dj))));
      }
    }
    // Sub-blocks 2c and 2c + 1 share 32 bytes: low nibbles, then high.
    for (let c = 0; c < 4; c++) {
      for (let l = 0; l < 32; l++) out[at + 16 + 32 * c + l] = L[64 * c + l] | (L[64 * c + 32 + l] << 4);
    }
  }
}
