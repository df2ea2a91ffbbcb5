import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { installAssetReader } from '../../model/assets.ts';

/**
 * The shipped files for the Node hosts (the presets' vocabularies, the trained model): the files the
 * build put in dist/, beside dist-node/ where the hosts run from. Where they are not (the kit), a
 * preset runs without text and a trained preset says it needs the build.
 */
export function installDiskAssetReader(): void {
  const dir = join(import.meta.dirname, '..', 'dist');
  installAssetReader(async (path) => {
    try {
      return new Uint8Array(await readFile(join(dir, path)));
    } catch {
      return undefined;
    }
  });
}
