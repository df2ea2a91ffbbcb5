/**
 * Reading result files the user picked or dropped. They are untrusted: each is size-checked before
 * it is read (50 MB), then parsed and validated with the result schema. Picked files are all or
 * nothing, so one bad file leaves the comparison exactly as it was; a folder keeps its valid files
 * and lists the others with their error.
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

/** A folder's *.json files: the valid ones, and each other one with its error (never half-read). */
export async function readResultFolder(
  files: readonly File[],
): Promise<{ files: ComparedFile[]; skipped: { file: string; error: string }[] }> {
  const out: ComparedFile[] = [];
  const skipped: { file: string; error: string }[] = [];
  for (const file of files) {
    const name = file.webkitRelativePath || file.name;
    if (!name.endsWith('.json')) continue;
    try {
      const [one] = await readResultFiles([file]);
      out.push({ name, result: one.result });
    } catch (e) {
      const message = (e as Error).message;
      skipped.push({
        file: name,
        error: message.startsWith(`${file.name}: `) ? message.slice(file.name.length + 2) : message,
      });
    }
  }
  return { files: out, skipped };
}
