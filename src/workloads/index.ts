import type { WorkloadKind } from '../spec/workloads/index.ts';
import { capacityProbe } from './capacity.ts';
import { decodeSweep } from './decode.ts';
import { formatSweep } from './formats.ts';
import { fusionCompare } from './fusion.ts';
import { kernelSuite } from './kernels.ts';
import { prefillSweep } from './prefill.ts';
import { serveLoad } from './serve.ts';
import { specDecoding } from './spec.ts';
import type { WorkloadRunner } from './workload.ts';

/**
 * Every workload, by the `kind` its spec section names. A new workload is one file here, one
 * entry in this table and one section in measure/spec.ts; the type makes a missing entry an error.
 */
export const WORKLOADS: { [K in WorkloadKind]: WorkloadRunner<K> } = {
  prefill: prefillSweep,
  decode: decodeSweep,
  kernels: kernelSuite,
  capacity: capacityProbe,
  spec: specDecoding,
  serve: serveLoad,
  formats: formatSweep,
  fusion: fusionCompare,
};
