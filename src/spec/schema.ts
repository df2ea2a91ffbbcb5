import { z } from 'zod';
import { SpecError } from '../errors.ts';
import { KV_DTYPES } from '../kv/format.ts';
import { ModelSourceSchema } from '../model/source.ts';
import { WEIGHT_FORMATS } from '../weight-format.ts';
import { GenerateSettingsSchema, PromptTextSchema } from './prompt.ts';
import { SUITE_NAMES } from './suites.ts';
import { kvWindow, pageSize } from './workload.ts';
import { WorkloadSchema } from './workloads/index.ts';

/**
 * What to measure: a model, the engine settings every workload shares (KV layout, kernel search),
 * and a list of workloads, each with its own settings. Built by the CLI from flags and by the page
 * from its form (both through `specFromOptions`, so the defaults live in one place), validated by
 * this one schema on both sides, and recorded in the result.
 *
 * A workload's settings are its descriptor's (spec/workloads/); its runner is one file in
 * src/workloads/. Nothing under spec/ imports engine code, so the CLI can validate a spec in Node.
 */
export const BenchSpecSchema = z
  .object({
    model: ModelSourceSchema,
    /** The preset the workload list came from ('custom' when sweep values were given). */
    suite: z.enum(SUITE_NAMES),
    kv: z
      .object({
        /** 'paged' (pages of pageSize tokens) or 'contiguous' (maxSeqLen per sequence, the A/B baseline). */
        mode: z.enum(['paged', 'contiguous']),
        pageSize,
        /**
         * How the cache stores K and V (`--kv-dtype`): f32; f16 (pairs packed in u32); int8 (one f32
         * scale per token and KV head). Absent in files from before KV types: f32.
         */
        dtype: z.enum(KV_DTYPES).default('f32'),
        /**
         * Sliding-window attention, tokens (`--window`): position p attends to max(0, p − W + 1)…p,
         * and pages wholly out of every sequence's window return to the pool. null: full attention
         * (and in files from before windows).
         */
        window: kvWindow.nullable().default(null),
      })
      .strict(),
    /** Search the kernel families for this device before measuring (false: the GPU-oriented defaults). */
    autotune: z.boolean(),
    /**
     * The format of the linear layers and LM head, quantized on load (`--weights`). A quantized GGUF
     * keeps its own tensors' types whatever this says.
     */
    weights: z.enum(WEIGHT_FORMATS).default('f32'),
    /**
     * Build the run's model on the fused graph where the chosen kernel families take it (false,
     * `--no-fuse`: the unfused graph, the reference). The fusion workload measures both whatever this says.
     */
    fuse: z.boolean().default(true),
    workloads: z.array(WorkloadSchema).min(1, 'nothing to measure: the workload list is empty').max(16),
    /**
     * The text the prefill and decode sweeps cut their prompt tokens from (`--prompt`,
     * `--prompt-file`), tokenized with the model's own tokenizer; absent: deterministic stand-in
     * tokens (src/workloads/prompts.ts).
     */
    prompt: PromptTextSchema.optional(),
    /** Generate text greedily on the run's model once its workloads are done (the page's Prompt box). */
    generate: GenerateSettingsSchema.optional(),
  })
  .strict();
export type BenchSpec = z.infer<typeof BenchSpecSchema>;

export function parseBenchSpec(input: unknown): BenchSpec {
  const r = BenchSpecSchema.safeParse(input);
  if (r.success) return r.data;
  throw new SpecError(`Invalid benchmark spec: ${issuesText(r.error.issues)}`);
}

function issuesText(issues: readonly z.core.$ZodIssue[]): string {
  return issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
}
