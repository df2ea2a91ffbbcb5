/**
 * Files the build ships beside the page (dist/): the presets' vocabularies under vocab/ and the
 * trained model files under models/. Each runtime says how it reads them (the page's worker by a
 * fetch beside its chunk, the Node hosts from the disk) by installing a reader at start; a runtime
 * without one (`npm run dev`, the kit) has none of them, and whoever asks says what that costs.
 */

/** Reads the bytes at `path` under dist/ (for example `vocab/ggml-vocab-qwen2.gguf`), undefined where it is not. */
export type AssetReader = (path: string) => Promise<Uint8Array | undefined>;

let reader: AssetReader | undefined;

/** The runtime's way to the shipped files (the page's worker and the Node hosts install one at start). */
export function installAssetReader(read: AssetReader): void {
  reader = read;
}

/** The bytes of a shipped file, or undefined where this runtime has no reader or no such file. */
export async function readAsset(path: string): Promise<Uint8Array | undefined> {
  return reader?.(path);
}
