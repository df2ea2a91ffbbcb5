import { z } from 'zod';
import { escapeMarkdown, fixed, MISSING, markdownDelimiter, markdownRow } from '../../markdown.ts';
import { NO_NEEDS, type WorkloadDescriptor } from '../workload.ts';
import { type TaskQuality, TaskQualitySchema, TaskSlicesSchema } from './formats.ts';

/**
 * The run's own model scored on its held-out set, by slice (a trained preset: trained-4m): what it
 * gets right, with each score's 95% interval and the sample it stands on. The quick suite ends with
 * it on such a model, so the page's first run shows what the model can do beside how fast it runs;
 * `--suite formats` and `--suite kv` give the same table against f32, variant by variant.
 */
export const TasksWorkloadSchema = z
  .object({
    kind: z.literal('tasks'),
    /** Prompt tokens of each slice scored, cases in order until the next would pass it (at least one); 0: every case. */
    taskTokens: z.number().int().min(0).max(1_000_000),
    taskSlices: TaskSlicesSchema.optional(),
  })
  .strict();

type TasksWorkload = z.infer<typeof TasksWorkloadSchema>;

/**
 * The quick suite's budget per slice: a sample (the cases column says how big), about ten seconds
 * for the whole table on SwiftShader; `--task-tokens N` sets it, 0 scores every case.
 */
export const TASKS_QUICK_TOKENS = 64;

const section = {
  /** The run's model on its held-out set, one row per slice (the quick suite on a trained preset). */
  tasks: z.array(TaskQualitySchema).optional(),
};

export const TASK_SCORES_DEFINITIONS =
  'score: exact match (every answer token and the newline after it are the greedy choice), valid JSON (a free greedy completion closes the object; its exact match in brackets), or next-token accuracy over a text’s tokens; 95% interval: Wilson’s; cases: the sample scored (a text slice counts tokens).';

const pct = (x: number) => `${fixed(x * 100, 1)}%`;

/** One slice's cells, as the report and the page show them: slice, metric, cases, score, interval, ppl. */
export function taskScoreCells(q: TaskQuality): string[] {
  return [
    q.slice,
    q.metric + (q.exactMatch !== undefined ? ` (exact ${pct(q.exactMatch)})` : ''),
    String(q.cases) + (q.kind === 'text' ? ' tokens' : ''),
    pct(q.score),
    `${pct(q.score95[0])}–${pct(q.score95[1])}`,
    q.perplexity === undefined ? MISSING : fixed(q.perplexity, 2),
  ];
}

export function taskScoresTable(rows: readonly TaskQuality[], preset: string): string[] {
  const format = rows[0]?.format ?? 'f32';
  return [
    `**What the model gets right** (${preset}: a model trained here, its ${format} weights scored on its held-out set, split off before training; a sample of each slice)`,
    '',
    markdownRow(['slice', 'metric', 'cases', 'score', '95% interval', 'ppl']),
    markdownDelimiter('llrrrr'),
    ...rows.map((q) => markdownRow(taskScoreCells(q))),
    '',
    escapeMarkdown(TASK_SCORES_DEFINITIONS),
  ];
}

/** The held-out table of the run's model: no sweep values, so nothing to fit; it builds its own model. */
export const tasks = {
  kind: 'tasks',
  settings: TasksWorkloadSchema,
  unitName: 'tables',
  units: () => 1,
  label: (w) =>
    `task quality on the held-out set (${w.taskTokens === 0 ? 'every case' : `${w.taskTokens} prompt tokens`} a slice)`,
  unfit: () => [],
  fit: (w) => w,
  modelErrors: () => [],
  needs: () => ({ ...NO_NEEDS, model: true, kernels: true }),
  section,
  suite: null,
  report: (s, run) => (s.tasks && s.tasks.length > 0 ? [taskScoresTable(s.tasks, run.preset)] : []),
} satisfies WorkloadDescriptor<TasksWorkload, typeof section>;
