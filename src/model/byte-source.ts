import { InputError } from '../errors.ts';

/**
 * A model file read in slices, never whole: the GGUF loader reads the header and the small tensors
 * when it loads, and each weight only when it is uploaded (and again when the CPU reference needs
 * it), so a gigabyte file picked in the page goes to the GPU a slice at a time.
 */
export interface ByteSource {
  /** Names the file in errors. */
  readonly name: string;
  readonly size: number;
  /** Bytes [offset, offset + length). */
  read(offset: number, length: number): Promise<Uint8Array>;
  /**
   * The same, synchronously: what the loader and the CPU reference read through (in memory, or a
   * File through a worker's FileReaderSync). Absent where the host cannot read a file that way.
   */
  readonly readSync?: (offset: number, length: number) => Uint8Array;
}

function checkRange(name: string, size: number, offset: number, length: number): void {
  if (
    !Number.isInteger(offset) ||
    !Number.isInteger(length) ||
    offset < 0 ||
    length < 0 ||
    offset + length > size
  )
    throw new InputError(`${name}: bytes ${offset}…${offset + length} are outside the ${size}-byte file`);
}

/** A file already in memory. */
export function bytesSource(bytes: Uint8Array, name: string): ByteSource {
  const readSync = (offset: number, length: number) => {
    checkRange(name, bytes.byteLength, offset, length);
    return bytes.subarray(offset, offset + length);
  };
  return { name, size: bytes.byteLength, readSync, read: async (offset, length) => readSync(offset, length) };
}

/** The worker-only synchronous reader of Blobs, where the host has one. */
interface FileReaderSyncLike {
  readAsArrayBuffer(blob: Blob): ArrayBuffer;
}
type FileReaderSyncClass = new () => FileReaderSyncLike;

/**
 * A Blob (a File the page picked) read in slices: Blob.slice then arrayBuffer, or, inside a
 * dedicated worker (where the engine runs in the page), FileReaderSync for the synchronous reads.
 */
export function blobSource(blob: Blob, name: string): ByteSource {
  const Sync = (globalThis as { FileReaderSync?: FileReaderSyncClass }).FileReaderSync;
  const reader = Sync ? new Sync() : undefined;
  return {
    name,
    size: blob.size,
    async read(offset, length) {
      checkRange(name, blob.size, offset, length);
      return new Uint8Array(await blob.slice(offset, offset + length).arrayBuffer());
    },
    readSync: reader
      ? (offset, length) => {
          checkRange(name, blob.size, offset, length);
          return new Uint8Array(reader.readAsArrayBuffer(blob.slice(offset, offset + length)));
        }
      : undefined,
  };
}

/** The synchronous reader of `source`, or an InputError saying the host cannot read it so. */
export function syncReader(source: ByteSource): (offset: number, length: number) => Uint8Array {
  if (!source.readSync)
    throw new InputError(
      `${source.name}: this host cannot read the file synchronously (a File is read so only inside a worker, where the engine runs)`,
    );
  return source.readSync;
}
