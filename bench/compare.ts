// npm run compare -- A.json B.json [C.json ...] [--max-regression PCT] [--format md|csv]
// Joins the points of saved results and prints their times side by side; with --max-regression,
// exits 1 when the second file is slower than the first by more than PCT percent on any point.
// npm run compare -- DIR [...] | --rank FILES: a device leaderboard (md, csv or html).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { formatMs } from '../src/markdown.ts';
import {
  type ComparedFile,
  checkResultFileSize,
  compareResults,
  comparisonToCsv,
  comparisonToMarkdown,
  findRegressions,
  formatPointKey,
  parseResultFile,
  ResultFileError,
} from '../src/results/compare.ts';
import {
  type BoardFile,
  buildLeaderboard,
  leaderboardToCsv,
  leaderboardToHtml,
  leaderboardToMarkdown,
  type SkippedFile,
} from '../src/results/leaderboard.ts';

/** How the comparison can be printed. */
const OUTPUT_FORMATS = {
  md: comparisonToMarkdown,
  csv: comparisonToCsv,
} as const;
type OutputFormat = keyof typeof OUTPUT_FORMATS;

const HELP = `Usage: npm run compare -- A.json B.json [C.json ...] [options]
       npm run compare -- DIR [DIR|FILE ...] [--format md|csv|html]     (a device leaderboard)
       npm run compare -- --rank FILE [FILE ...] [--format md|csv|html]

Joins the measured points of two or more result files (saved from the page or the bench CLI) on
(preset, pass, L or depth, batch) and prints each file's median time per point, with the speed-up
of every file against the first: above 1 means faster than the first file.

  --max-regression PCT   regression gate, for exactly two files (baseline first, candidate second):
                         exit 1 if any point of the candidate is more than PCT percent slower than
                         the same point of the baseline (exactly PCT passes)
  --format md|csv|html   how to print it (default md; html: the leaderboard as one self-contained file)
  --rank                 rank the files as a device leaderboard (implied when a folder is given)

The leaderboard ranks every file's device at the same model, weight format and pass, at the shape
(prompt length or decode depth, batch 1) the most files measured: tok/s, ms, the share of the device's
own roof, its measured roofs, the runtime and browser, and llama.cpp's figure at that point where the
run had a peer. A folder contributes its *.json files. Files that do not validate are listed with
their error on stderr (and in the html) and left out.
  -h, --help             this text

The comparison goes to stdout; warnings and the gate's verdict go to stderr.

Exit codes: 0 compared (no regression), 1 regression, 2 bad arguments or an unreadable or invalid file.`;

function fail(message: string, code: number): never {
  console.error(`compare: ${message}`);
  process.exit(code);
}

function parse() {
  try {
    return parseArgs({
      options: {
        'max-regression': { type: 'string' },
        format: { type: 'string', default: 'md' },
        rank: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: true,
    });
  } catch (e) {
    fail(`${(e as Error).message}\n\n${HELP}`, 2);
  }
}

function isOutputFormat(format: string): format is OutputFormat {
  return Object.hasOwn(OUTPUT_FORMATS, format);
}

/** Reads and validates one file; any failure becomes a ResultFileError naming it. */
function readResult(path: string): ComparedFile {
  let text: string;
  try {
    // Checked before reading, so a huge file is never loaded.
    checkResultFileSize(statSync(path).size, path);
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if (e instanceof ResultFileError) throw e;
    throw new ResultFileError(`${path}: cannot read the file: ${(e as Error).message}`);
  }
  return { name: path, result: parseResultFile(text, path) };
}

const { values: args, positionals: paths } = parse();
if (args.help) {
  console.log(HELP);
  process.exit(0);
}
const isDir = (path: string) => {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
};
if (args.rank || paths.some(isDir)) leaderboard(paths);
if (paths.length < 2) fail(`give at least two result files, got ${paths.length}\n\n${HELP}`, 2);
const format = args.format;
if (!isOutputFormat(format)) fail(`--format must be md or csv, got "${format}"\n\n${HELP}`, 2);
let maxRegressionPct: number | undefined;
if (args['max-regression'] !== undefined) {
  const text = args['max-regression'];
  maxRegressionPct = Number(text);
  if (text.trim() === '' || !Number.isFinite(maxRegressionPct) || maxRegressionPct < 0) {
    fail(`--max-regression must be a non-negative number of percent, got "${text}"\n\n${HELP}`, 2);
  }
  if (paths.length !== 2) {
    fail(`--max-regression compares exactly two files (baseline, candidate), got ${paths.length}`, 2);
  }
}

let files: ComparedFile[];
try {
  files = paths.map(readResult);
} catch (e) {
  fail(e instanceof ResultFileError ? e.message : String(e), 2);
}

const comparison = compareResults(files);
process.stdout.write(OUTPUT_FORMATS[format](comparison));
for (const w of comparison.warnings) console.error(`compare: warning: ${w}`);
for (const { name, result } of files) {
  if (result.status !== 'complete') console.error(`compare: warning: ${name}: the run is ${result.status}`);
  if (result.env.adapter.isFallbackAdapter)
    console.error(`compare: warning: ${name}: fallback/software adapter`);
}

if (maxRegressionPct !== undefined) {
  const matched = comparison.rows.filter((r) => r.medianMs.every((ms) => ms !== null)).length;
  // A gate that matched nothing would pass anything, so it fails as a usage error instead.
  if (matched === 0) fail(`${paths[0]} and ${paths[1]} have no point in common; nothing to gate on`, 2);
  const unmatched = comparison.rows.length - matched;
  if (unmatched > 0)
    console.error(`compare: warning: ${unmatched} point(s) are in only one file and were not judged`);
  const regressions = findRegressions(comparison, maxRegressionPct);
  for (const r of regressions) {
    console.error(
      `regression: ${formatPointKey(r.key)}: ${formatMs(r.baselineMs)} ms -> ${formatMs(r.candidateMs)} ms (+${r.slowdownPct.toFixed(1)}%, limit ${maxRegressionPct}%)`,
    );
  }
  if (regressions.length > 0) {
    console.error(`${regressions.length} of ${matched} points regressed by more than ${maxRegressionPct}%`);
    process.exit(1);
  }
  console.error(`no regression over ${maxRegressionPct}% (${matched} points compared)`);
}

/** The leaderboard: folders expand to their *.json files; invalid files are listed and left out. */
function leaderboard(inputs: string[]): never {
  if (inputs.length === 0) fail(`give a folder or result files to rank\n\n${HELP}`, 2);
  if (args['max-regression'] !== undefined) fail('--max-regression gates two files, not a leaderboard', 2);
  const format = args.format;
  if (format !== 'md' && format !== 'csv' && format !== 'html')
    fail(`--format must be md, csv or html, got "${format}"\n\n${HELP}`, 2);
  const paths: string[] = [];
  for (const input of inputs) {
    if (isDir(input)) {
      const names = readdirSync(input)
        .filter((n) => n.endsWith('.json'))
        .sort();
      if (names.length === 0) console.error(`compare: warning: ${input}: no .json files`);
      paths.push(...names.map((n) => join(input, n)));
    } else paths.push(input);
  }
  const files: BoardFile[] = [];
  const skipped: SkippedFile[] = [];
  for (const path of paths) {
    try {
      files.push(readResult(path));
    } catch (e) {
      const message = (e as Error).message;
      skipped.push({
        file: path,
        error: message.startsWith(`${path}: `) ? message.slice(path.length + 2) : message,
      });
    }
  }
  for (const s of skipped) console.error(`compare: left out ${s.file}: ${s.error}`);
  if (files.length === 0) fail(`no valid result file among ${paths.length}`, 2);
  const board = buildLeaderboard(files);
  const text =
    format === 'html'
      ? leaderboardToHtml(board, skipped)
      : format === 'csv'
        ? leaderboardToCsv(board)
        : leaderboardToMarkdown(board);
  process.stdout.write(text);
  for (const u of board.unranked) console.error(`compare: ranked nowhere ${u.file}: ${u.why}`);
  const ranked = files.length - board.unranked.length;
  console.error(
    `compare: ranked ${ranked} file(s) in ${board.groups.length} group(s)${board.unranked.length ? `; ${board.unranked.length} ranked nowhere` : ''}${skipped.length ? `; left out ${skipped.length}` : ''}`,
  );
  process.exit(0);
}
