import { InputError } from '../errors.ts';

/**
 * Every code of ggml's `enum ggml_type` (ggml/include/ggml.h), named as ggml.h and gguf-py spell
 * them, with the block sizes of ggml.c's type_traits: a GGUF file's tensor table can be sized and
 * checked, and a tensor this engine does not read refused by its type's name, whatever its type.
 * Codes ggml has dropped are listed as removed (ggml.c sizes them as 0 and a GGUF file may not use
 * them).
 */
export type GgmlTypeInfo =
  | {
      readonly code: number;
      readonly name: string;
      readonly removed: false;
      /** Elements per block (1 for the plain types F32, F16, BF16, I8 … F64). */
      readonly blockElems: number;
      /** Bytes per block. */
      readonly blockBytes: number;
    }
  | { readonly code: number; readonly name: string; readonly removed: true };

const sized = (code: number, name: string, blockElems: number, blockBytes: number): GgmlTypeInfo => ({
  code,
  name,
  removed: false,
  blockElems,
  blockBytes,
});
const removed = (code: number, name: string): GgmlTypeInfo => ({ code, name, removed: true });

/** Indexed by code: GGML_TYPES[c].code === c for every c < GGML_TYPE_COUNT. */
export const GGML_TYPES: readonly GgmlTypeInfo[] = [
  sized(0, 'F32', 1, 4),
  sized(1, 'F16', 1, 2),
  sized(2, 'Q4_0', 32, 18),
  sized(3, 'Q4_1', 32, 20),
  removed(4, 'Q4_2'),
  removed(5, 'Q4_3'),
  sized(6, 'Q5_0', 32, 22),
  sized(7, 'Q5_1', 32, 24),
  sized(8, 'Q8_0', 32, 34),
  sized(9, 'Q8_1', 32, 36),
  sized(10, 'Q2_K', 256, 84),
  sized(11, 'Q3_K', 256, 110),
  sized(12, 'Q4_K', 256, 144),
  sized(13, 'Q5_K', 256, 176),
  sized(14, 'Q6_K', 256, 210),
  sized(15, 'Q8_K', 256, 292),
  sized(16, 'IQ2_XXS', 256, 66),
  sized(17, 'IQ2_XS', 256, 74),
  sized(18, 'IQ3_XXS', 256, 98),
  sized(19, 'IQ1_S', 256, 50),
  sized(20, 'IQ4_NL', 32, 18),
  sized(21, 'IQ3_S', 256, 110),
  sized(22, 'IQ2_S', 256, 82),
  sized(23, 'IQ4_XS', 256, 136),
  sized(24, 'I8', 1, 1),
  sized(25, 'I16', 1, 2),
  sized(26, 'I32', 1, 4),
  sized(27, 'I64', 1, 8),
  sized(28, 'F64', 1, 8),
  sized(29, 'IQ1_M', 256, 56),
  sized(30, 'BF16', 1, 2),
  // Interleaved Q4_0 layouts: ggml now repacks Q4_0 at load time instead.
  removed(31, 'Q4_0_4_4'),
  removed(32, 'Q4_0_4_8'),
  removed(33, 'Q4_0_8_8'),
  sized(34, 'TQ1_0', 256, 54),
  sized(35, 'TQ2_0', 256, 66),
  // Interleaved IQ4_NL layouts, likewise repacked at load time now.
  removed(36, 'IQ4_NL_4_4'),
  removed(37, 'IQ4_NL_4_8'),
  removed(38, 'IQ4_NL_8_8'),
  sized(39, 'MXFP4', 32, 17),
  sized(40, 'NVFP4', 64, 36),
  sized(41, 'Q1_0', 128, 18),
  sized(42, 'Q2_0', 64, 18),
];

const byName = new Map(GGML_TYPES.map((t) => [t.name, t]));

/** The type of a code, or undefined for a code past the end of ggml's enum. */
export function ggmlType(code: number): GgmlTypeInfo | undefined {
  return GGML_TYPES[code];
}

/** The type named as ggml.h spells it ('IQ4_NL'), or undefined. */
export function ggmlTypeByName(name: string): GgmlTypeInfo | undefined {
  return byName.get(name);
}

/** A type code's name for messages: 'IQ4_NL', or 'unknown type 99'. */
export function ggmlTypeName(code: number): string {
  return ggmlType(code)?.name ?? `unknown type ${code}`;
}

/**
 * Bytes of a tensor of `dims` (GGUF order: dims[0] is the row, the fastest-moving dimension) in
 * type `code`; refused when the type is removed or unknown, or a row is not a whole number of
 * blocks.
 */
export function ggmlTensorBytes(code: number, dims: readonly number[], tensor: string): number {
  const type = ggmlType(code);
  if (!type) throw new InputError(`tensor ${tensor} has type code ${code}, which ggml does not define`);
  if (type.removed) {
    throw new InputError(`tensor ${tensor} has type ${type.name} (code ${code}), which ggml has removed`);
  }
  const row = dims[0] ?? 1;
  if (row % type.blockElems !== 0) {
    throw new InputError(
      `tensor ${tensor}: rows of ${row} elements are not a whole number of ${type.name} blocks (${type.blockElems} each)`,
    );
  }
  let rows = 1;
  for (let i = 1; i < dims.length; i++) rows *= dims[i];
  return (row / type.blockElems) * type.blockBytes * rows;
}

/** The refusal of a tensor in a type this engine does not read, by the type's name. */
export function unsupportedTypeError(tensor: string, code: number): InputError {
  return new InputError(`tensor ${tensor} has type ${ggmlTypeName(code)}, which this engine does not read`);
}
