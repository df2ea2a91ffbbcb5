// A peer engine's own process: llama.cpp (through node-llama-cpp) loads the run's GGUF file here,
// is timed on the run's prompt lengths and depths, and returns its next-token log-probabilities.
// Started by bench/peers.ts for one job; a crash or abort in llama.cpp's native code ends this
// process only, and the CLI records it as the peer's error.

import type { PeerJob, PeerJobResult } from '../../peers/job.ts';
import { openLlamaCpp } from '../../peers/llama-cpp.ts';
import { measurePeer } from '../../peers/measure.ts';
import { serveIpc } from './ipc-server.ts';

serveIpc<{ type: 'call'; id: number; job: PeerJob }>(
  async ({ job }): Promise<PeerJobResult> => {
    const session = await openLlamaCpp(job.file, job.backend, job.contextSize, job.plan.vocabSize);
    try {
      const points = await measurePeer(session, job.plan);
      const logprobs = await session.logprobs(job.prompt);
      return { info: session.info, points, logprobs };
    } finally {
      await session.close();
    }
  },
  () => undefined,
);
process.send?.({ type: 'ready' });
