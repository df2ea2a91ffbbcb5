import { z } from 'zod';
import { TENSOR_FORMATS } from '../weight-format.ts';

export const finite = z.number().finite();

export const nonNegative = finite.nonnegative();
/** A count: a non-negative integer. */
export const count = z.number().int().nonnegative();

/** Percentiles of a latency distribution, in milliseconds. */
export const PercentilesSchema = z.object({ p50: nonNegative, p95: nonNegative, p99: nonNegative }).strict();

export const BoundSchema = z.enum(['compute', 'bandwidth', 'overhead']);

export type Bound = z.infer<typeof BoundSchema>;

/**
 * The clock that placed a point on the roofline: 'gpu' (timestamp-query spans, what the kernels
 * cost) where the adapter has timestamps, they are not quantized and every span was positive;
 * 'wall' (performance.now() in the engine worker: submit, GPU work and readback) otherwise.
 */
export const TimebaseSchema = z.enum(['gpu', 'wall']);

export type Timebase = z.infer<typeof TimebaseSchema>;

/** A model's weight format; "mixed" when its linear layers differ (a GGUF file may mix types). */
export const WeightFormatSchema = z.enum([...TENSOR_FORMATS, 'mixed']);

/** A model's graph: the fused one (6 dispatches per layer) or the unfused reference (16). */
export const GraphSchema = z.enum(['fused', 'unfused']);
