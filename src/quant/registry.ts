import { InputError } from '../errors.ts';
import { Q2_K } from './q2_k.ts';
import { Q3_K } from './q3_k.ts';
import { Q4_0 } from './q4_0.ts';
import { Q4_1 } from './q4_1.ts';
import { Q4_K } from './q4_k.ts';
import { Q5_0 } from './q5_0.ts';
import { Q5_1 } from './q5_1.ts';
import { Q5_K } from './q5_k.ts';
import { Q6_K } from './q6_k.ts';
import { Q8_0 } from './q8_0.ts';
import type { QuantType } from './types.ts';

/** Every ggml block type this engine reads; a new type is its module and one line here. */
export const QUANT_TYPES: readonly QuantType[] = [Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K];

const byCode = new Map(QUANT_TYPES.map((t) => [t.ggml, t]));
const byName = new Map(QUANT_TYPES.map((t) => [t.name, t]));

/** The block type of a GGUF tensor-info type code, or undefined when this engine does not read it. */
export function quantTypeByCode(code: number): QuantType | undefined {
  return byCode.get(code);
}

/** The block type named as llama.cpp prints it ('Q4_K'), or undefined. */
export function quantTypeByName(name: string): QuantType | undefined {
  return byName.get(name);
}

/** Bytes of one block's quants on the GPU: its `quants` ranges laid end to end. */
export function blockQuantBytes(type: QuantType): number {
  let bytes = 0;
  for (const [from, to] of type.quants) bytes += to - from;
  return bytes;
}

/** Where a weight of N rows of K lives in the file and on the GPU, in bytes. */
export interface QuantLayout {
  /** Blocks along one row: K / blockElems. */
  readonly blocksPerRow: number;
  /** The quants buffer: every block's quant bytes, N · blocksPerRow blocks. */
  readonly quantBytes: number;
  /** The headers buffer: headerWords u32 words per block. */
  readonly headerBytes: number;
  /** quantBytes + headerBytes. */
  readonly gpuBytes: number;
  /** The tensor's bytes in the file: N · blocksPerRow · blockBytes. */
  readonly fileBytes: number;
}

/** The sizes of a [N, K] weight in `type`; a row that is not a whole number of blocks is refused. */
export function quantLayout(type: QuantType, N: number, K: number, name = 'tensor'): QuantLayout {
  if (!Number.isInteger(N) || N < 0 || !Number.isInteger(K) || K < 0) {
    throw new InputError(`${name}: [${N}, ${K}] is not a shape`);
  }
  if (K % type.blockElems !== 0) {
    throw new InputError(
      `${name}: rows of ${K} weights are not a whole number of ${type.name} blocks (${type.blockElems} weights each)`,
    );
  }
  const blocksPerRow = K / type.blockElems;
  const blocks = N * blocksPerRow;
  const quantBytes = blocks * blockQuantBytes(type);
  const headerBytes = blocks * type.headerWords * 4;
  return {
    blocksPerRow,
    quantBytes,
    headerBytes,
    gpuBytes: quantBytes + headerBytes,
    fileBytes: blocks * type.blockBytes,
  };
}
