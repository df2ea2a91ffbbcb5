/**
 * Downloads from the page: result files in the CLI's formats and charts as SVG. Everything is built
 * in memory and handed to the browser as a blob: URL, so nothing is sent anywhere.
 */
import { adapterLabel, type ExportFormat, fileSlug, formatFor } from '../results/export.ts';
import type { BenchResult } from '../results/schema.ts';

/** Media types of the files the page writes. */
const MIME = {
  json: 'application/json',
  jsonl: 'application/x-ndjson',
  csv: 'text/csv',
  md: 'text/markdown',
  svg: 'image/svg+xml',
  html: 'text/html',
} as const;
export type DownloadKind = keyof typeof MIME;

/** Keeps the blob URL alive long enough for the browser to start the download. */
const REVOKE_AFTER_MS = 30_000;

/** Saves `text` as a file named `fileName`. */
export function download(fileName: string, text: string, kind: DownloadKind): void {
  const url = URL.createObjectURL(new Blob([text], { type: `${MIME[kind]};charset=utf-8` }));
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  a.rel = 'noopener';
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), REVOKE_AFTER_MS);
}

/** `2026-12-02T10-17-27-google-swiftshader-ci-tiny`, the CLI's naming of result files. */
export function resultFileStem(r: BenchResult): string {
  const when = r.createdAt.slice(0, 19).replace(/:/g, '-');
  return `${fileSlug(when)}-${fileSlug(adapterLabel(r.env.adapter))}-${fileSlug(r.model.preset)}`;
}

export function downloadResult(r: BenchResult, format: ExportFormat): void {
  download(`${resultFileStem(r)}.${format}`, formatFor(r, format), format);
}
