/**
 * A model for the capacity estimator from a file the user picked: a Hugging Face config.json, or
 * a GGUF file, of which only the header is read (in growing slices of the Blob) so that a model of
 * many gigabytes is never loaded into the page.
 */
import {
  type CapacityModel,
  capacityModelFromGguf,
  capacityModelFromHfConfig,
} from '../../capacity/model.ts';
import { InputError } from '../../errors.ts';
import { readGgufHeader } from '../../model/gguf.ts';

/**
 * A config.json is a few kilobytes. Anything past this is some other file picked by mistake (the
 * weights, a tokenizer), and reading it whole as text would only stall the page.
 */
const CONFIG_MAX_BYTES = 4 << 20;

/** "GGUF" as the file's first four bytes. */
const GGUF_MAGIC = 'GGUF';

async function sliceBytes(file: Blob, length: number): Promise<Uint8Array> {
  return new Uint8Array(await file.slice(0, length).arrayBuffer());
}

/** Parses the file by its content (the GGUF magic), so a renamed file is still read as what it is. */
export async function capacityModelFromFile(file: File): Promise<CapacityModel> {
  const magic = new TextDecoder().decode(await sliceBytes(file, 4));
  if (magic === GGUF_MAGIC || /\.gguf$/i.test(file.name)) {
    // readGgufHeader rejects a .gguf without the magic as "not a GGUF file".
    const header = await readGgufHeader((length) => sliceBytes(file, length), file.name);
    return capacityModelFromGguf(header, file.name);
  }
  if (file.size > CONFIG_MAX_BYTES) {
    throw new InputError(
      `${file.name} is ${(file.size / 2 ** 20).toFixed(1)} MiB: too large for a config.json. Pick the model's config.json or a .gguf file.`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(await file.text());
  } catch (e) {
    throw new InputError(`${file.name} is not valid JSON (${(e as Error).message})`);
  }
  return capacityModelFromHfConfig(json, file.name);
}
