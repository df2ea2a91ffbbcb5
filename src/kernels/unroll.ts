import { KernelError } from '../errors.ts';

/**
 * Unrolling of a register tile's per-element lines, for shaders whose tile size is a search
 * parameter. WGSL has no unroll, and on the software adapter (SwiftShader) a loop over a private
 * accumulator array indexes it per lane: 3% of the FMA peak against 30–50% for the same tile written
 * out with literal indices (measured on the ci-tiny shapes). So a tile shader writes each
 * per-element statement once with markers, and this expands it:
 *   $i   row of the tile, 0 … rows − 1
 *   $j   column of the tile, 0 … cols − 1
 *   $u   step of the K unroll, 0 … unroll − 1
 *   $ij  the element's index in a row-major rows × cols array, i · cols + j
 * A line is repeated once for every combination of the axes it mentions, $u outermost, then $i,
 * then $j; lines without markers are kept as they are. `$` is not WGSL, so a marker this does not
 * know is an error here rather than a shader that compiles into something else.
 */
export interface TileExtents {
  rows: number;
  cols: number;
  unroll: number;
}

const MARKER = /\$(ij|i|j|u)/g;

export function unrollTile(code: string, e: TileExtents): string {
  for (const [name, n] of Object.entries(e)) {
    if (!Number.isInteger(n) || n < 1)
      throw new KernelError(`unrollTile: ${name} = ${n} must be a positive integer`);
  }
  return code
    .split('\n')
    .flatMap((line, index) => {
      const marks = new Set([...line.matchAll(MARKER)].map((m) => m[1]));
      const rest = line.replace(MARKER, '');
      if (rest.includes('$'))
        throw new KernelError(`unrollTile: line ${index + 1} has an unknown $ marker: ${line.trim()}`);
      if (marks.size === 0) return [line];
      const us = marks.has('u') ? range(e.unroll) : [0];
      const is = marks.has('i') || marks.has('ij') ? range(e.rows) : [0];
      const js = marks.has('j') || marks.has('ij') ? range(e.cols) : [0];
      const out: string[] = [];
      for (const u of us) {
        for (const i of is) {
          for (const j of js) {
            out.push(
              line.replace(MARKER, (_m, name: string) =>
                String(name === 'ij' ? i * e.cols + j : name === 'i' ? i : name === 'j' ? j : u),
              ),
            );
          }
        }
      }
      return out;
    })
    .join('\n');
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, k) => k);
}
