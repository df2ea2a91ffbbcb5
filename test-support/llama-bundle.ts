/** The tests' way to llama.cpp's release source (bench/llama-source.ts checks it out once). */
export { LLAMA_BUNDLE, llamaPath, llamaReleaseTag, llamaSource } from '../bench/llama-source.ts';
