import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { installVocabReader } from '../../model/preset-vocab.ts';

/**
 * The presets' vocabularies for the Node hosts: the files the build copied into dist/vocab/, beside
 * dist-node/ where the hosts run from. Where they are not (the kit), a preset runs without text.
 */
export function installDiskVocabReader(): void {
  const dir = join(import.meta.dirname, '..', 'dist', 'vocab');
  installVocabReader(async (file) => {
    try {
      return new Uint8Array(await readFile(join(dir, file)));
    } catch {
      return undefined;
    }
  });
}
