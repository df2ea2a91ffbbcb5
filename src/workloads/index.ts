import type { WorkloadKind } from '../spec/workloads/index.ts';
import { capacityEngine } from './capacity.ts';
import { caseEngine } from './case.ts';
import { decodeEngine } from './decode.ts';
import { formatsEngine } from './formats.ts';
import { fusionEngine } from './fusion.ts';
import { kernelsEngine } from './kernels.ts';
import { kvEngine } from './kv.ts';
import { prefillEngine } from './prefill.ts';
import { serveEngine } from './serve.ts';
import { specEngine } from './spec.ts';
import { sustainedEngine } from './sustained.ts';
import { tasksEngine } from './tasks.ts';
import type { WorkloadEngine } from './workload.ts';

/**
 * The engine side of every workload, by the kind its descriptor (spec/workloads/) names. The type
 * is over the registry's kinds, so a descriptor without its engine here fails to compile.
 */
export const ENGINES: { [K in WorkloadKind]: WorkloadEngine<K, { type: string }> } = {
  prefill: prefillEngine,
  decode: decodeEngine,
  kernels: kernelsEngine,
  capacity: capacityEngine,
  spec: specEngine,
  serve: serveEngine,
  case: caseEngine,
  formats: formatsEngine,
  fusion: fusionEngine,
  sustained: sustainedEngine,
  kv: kvEngine,
  tasks: tasksEngine,
};
