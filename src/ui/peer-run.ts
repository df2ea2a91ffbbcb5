/**
 * The page's "Compare with llama.cpp": the run's model is written as a GGUF file in the run's
 * weight format (a picked .gguf is used as it is), the engine runs from that file and takes its
 * next-token logits on the agreement prompt from its own model, then wllama (llama.cpp in
 * WebAssembly, loaded only now) runs the same plan on the same file in this page. As `--peer
 * wllama` does in the CLI, with the same plan, prompt and record (peers/record.ts).
 */
import { parseGgufHeader } from '../model/gguf.ts';
import { isGgufName, loadModel } from '../model/source.ts';
import type { AgreementFormat } from '../peers/agreement.ts';
import { ggmlName, peerGguf } from '../peers/gguf-out.ts';
import {
  agreementPrompt,
  failedPeer,
  type PromptSource,
  peerContextSize,
  peerPlan,
  promptsOf,
  WLLAMA_TOP_K,
  wllamaInput,
  wllamaRecord,
} from '../peers/record.ts';
import type { PeerRecord, PeerRequest } from '../peers/schema.ts';
import type { BenchSpec } from '../spec/schema.ts';

/** The peer the page runs: llama.cpp's WebGPU backend where it engages, else its wasm CPU backend. */
const REQUEST: PeerRequest = { engine: 'wllama', backend: 'webgpu' };

/** The GGUF file both engines load, and what the peer needs of the model. */
export interface PagePeerModel {
  file: Blob;
  name: string;
  fileType: string;
  maxSeqLen: number;
  vocabSize: number;
  /** Where its prompts' text comes from: the file's tokenizer (wllama takes text only). */
  prompts: PromptSource;
}

/** Writes (or takes) the GGUF file of the run's model, or says why llama.cpp cannot have it. */
export async function preparePagePeer(spec: BenchSpec): Promise<PagePeerModel | { error: string }> {
  try {
    const source = spec.model;
    const loaded = await loadModel(source);
    const c = loaded.weights.config;
    if (source.kind === 'files' && isGgufName(source.name)) {
      const bytes = new Uint8Array(await source.weights.arrayBuffer());
      const header = parseGgufHeader(bytes, source.name);
      const types = new Set(header.tensors.filter((t) => t.dims.length === 2).map((t) => t.type));
      return {
        file: source.weights,
        name: source.name,
        fileType: types.size === 1 ? ggmlName([...types][0]) : 'mixed',
        maxSeqLen: c.maxSeqLen,
        vocabSize: c.vocabSize,
        prompts: promptsOf(bytes, source.name),
      };
    }
    const base = source.kind === 'preset' ? `${source.preset}-seed${source.seed}` : loaded.name;
    const name = base.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-|-$/g, '') || 'model';
    const gguf = peerGguf(loaded.weights, spec.weights, name);
    return {
      file: new Blob([gguf.bytes]),
      name: gguf.fileName,
      fileType: gguf.fileType,
      maxSeqLen: c.maxSeqLen,
      vocabSize: c.vocabSize,
      prompts: promptsOf(gguf.bytes, gguf.fileName),
    };
  } catch (e) {
    return { error: `llama.cpp cannot take this model in ${spec.weights}: ${(e as Error).message}` };
  }
}

/** The spec the engine runs: the same, loading the peer's file; and the prompt whose logits it keeps. */
export function specBesidePeer(spec: BenchSpec, peer: PagePeerModel): { spec: BenchSpec; probe: number[] } {
  return {
    spec: { ...spec, model: { kind: 'files', weights: peer.file, name: peer.name } },
    probe: agreementPrompt(peer.maxSeqLen, peer.vocabSize, peer.prompts).ids,
  };
}

/**
 * Runs wllama on the file after the engine's run; any failure becomes the record's error. `format`
 * is the one the run's model was in (its result's `model.weightFormat`: a picked Q4_K_M file is
 * "mixed"), which sets the agreement's bound; the form's weight format where the result has none.
 */
export async function runPagePeer(
  spec: BenchSpec,
  peer: PagePeerModel | { error: string },
  engineLogits: number[][] | undefined,
  format: AgreementFormat = spec.weights,
): Promise<PeerRecord> {
  if ('error' in peer) return failedPeer(REQUEST, {}, peer.error);
  const model = { file: peer.name, fileType: peer.fileType };
  try {
    const plan = peerPlan(spec, peer.vocabSize, peer.prompts);
    // The same prompt specBesidePeer gave the engine: both are made from the same file.
    const prompt = agreementPrompt(peer.maxSeqLen, peer.vocabSize, peer.prompts);
    const input = wllamaInput(prompt, peer.prompts);
    const { runWllama } = await import('../peers/wllama.ts');
    const job = await runWllama(
      {
        backend: REQUEST.backend as 'webgpu',
        contextSize: peerContextSize(plan, peer.maxSeqLen, prompt.ids.length),
        plan,
        ...input,
        topK: WLLAMA_TOP_K,
      },
      peer.file,
    );
    return wllamaRecord(REQUEST, model, job, engineLogits, format, input);
  } catch (e) {
    return failedPeer(REQUEST, model, `wllama: ${(e as Error).message}`);
  }
}
