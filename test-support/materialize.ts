import { type ModelWeights, TensorStore } from '../src/model/weights.ts';
import type { PackedTensor } from '../src/weight-format.ts';

/**
 * A loaded file's weights read whole into memory, for tests that look at what the GPU will hold:
 * every file tensor's rows as its packed tensor (or, f32, into `tensors`), the same object under
 * both names of a tied head; `tensors` keeps answering each with its dequantization.
 */
export async function materialized(w: ModelWeights): Promise<ModelWeights> {
  const packed = new Map(w.packed ?? []);
  const eager = new Map(w.tensors instanceof TensorStore ? w.tensors.eager : w.tensors);
  const seen = new Map<object, PackedTensor>();
  for (const [name, f] of w.files ?? []) {
    const chunk = await f.rows(0, f.N);
    if ('f32' in chunk) {
      eager.set(name, chunk.f32);
      continue;
    }
    const p = seen.get(f) ?? ({ format: f.format, N: f.N, K: f.K, ...chunk } as PackedTensor);
    seen.set(f, p);
    packed.set(name, p);
  }
  const tensors = w.tensors instanceof TensorStore ? new TensorStore(eager, w.files ?? new Map()) : eager;
  return { config: w.config, tensors, packed };
}
