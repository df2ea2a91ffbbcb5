/**
 * Reading result files the user picked or dropped. They are untrusted: each is size-checked before
 * it is read (50 MB), then parsed and validated with the result schema. An import is all or
 * nothing, so one bad file leaves the comparison exactly as it was.
 */
import {
  type ComparedFile,
  checkResultFileSize,
  parseResultFile,
  ResultFileError,
} from '../results/compare.ts';

/** The validated files, in order; throws ResultFileError naming the first bad file and its first problem. */
export async function readResultFiles(files: readonly File[]): Promise<ComparedFile[]> {
  const out: ComparedFile[] = [];
  for (const file of files) {
    checkResultFileSize(file.size, file.name);
    let text: string;
    try {
      text = await file.text();
    } catch (e) {
      throw new ResultFileError(`${file.name}: could not be read (${(e as Error).message})`);
    }
    out.push({ name: file.name, result: parseResultFile(text, file.name) });
  }
  return out;
}
