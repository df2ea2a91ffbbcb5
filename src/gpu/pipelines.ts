import { GpuValidationError } from '../errors.ts';
import { assertAlive, type Gpu } from './device.ts';

export type OverrideConstants = Record<string, number>;

/**
 * Compiles each shader module once and each (module, entry point, override constants) pipeline once.
 * Both are keyed by the shader's code, not its label: composed shaders differ by what was spliced
 * in, two shaders may share a label by mistake, and the same code under two labels is one module.
 * Override constants are how tile and workgroup sizes reach WGSL, so they are part of the pipeline
 * key: two tilings are two pipelines. Compilation time is recorded so it can be reported as cold
 * start, apart from run time.
 */
export class PipelineCache {
  private readonly modules = new Map<string, Promise<GPUShaderModule>>();
  private readonly pipelines = new Map<string, Promise<GPUComputePipeline>>();
  /** Milliseconds spent creating modules and pipelines, summed: the cold-start cost. */
  compileMs = 0;

  constructor(private readonly gpu: Gpu) {}

  /** `label` names the module and pipeline (the first label a code is seen under names its module). */
  get(
    label: string,
    code: string,
    constants: OverrideConstants = {},
    entryPoint = 'main',
  ): Promise<GPUComputePipeline> {
    // The code ends the key so that no constant name or entry point can run into it.
    const key = `${entryPoint}|${JSON.stringify(Object.entries(constants).sort())}|${code}`;
    let pipeline = this.pipelines.get(key);
    if (!pipeline) {
      pipeline = this.compile(label, code, constants, entryPoint);
      this.pipelines.set(key, pipeline);
      // A failed compile must not poison the cache for a later retry with other constants.
      pipeline.catch(() => this.pipelines.delete(key));
    }
    return pipeline;
  }

  private module(label: string, code: string): Promise<GPUShaderModule> {
    let module = this.modules.get(code);
    if (!module) {
      module = this.createModule(label, code);
      this.modules.set(code, module);
      module.catch(() => this.modules.delete(code));
    }
    return module;
  }

  private async createModule(label: string, code: string): Promise<GPUShaderModule> {
    const t0 = performance.now();
    try {
      const module = this.gpu.device.createShaderModule({ label, code });
      const info = await module.getCompilationInfo();
      const errors = info.messages.filter((m) => m.type === 'error');
      if (errors.length > 0) {
        // Line numbers are those of the composed code (after includes), so quote the line itself.
        const lines = code.split('\n');
        const text = errors
          .map((m) => `${label}:${m.lineNum}:${m.linePos}: ${m.message}\n  ${lines[m.lineNum - 1]?.trim()}`)
          .join('\n');
        throw new GpuValidationError(`WGSL compilation failed:\n${text}`);
      }
      return module;
    } finally {
      this.compileMs += performance.now() - t0;
    }
  }

  private async compile(label: string, code: string, constants: OverrideConstants, entryPoint: string) {
    assertAlive(this.gpu);
    const module = await this.module(label, code);
    const t0 = performance.now();
    try {
      return await this.gpu.device.createComputePipelineAsync({
        label: `${label}${Object.keys(constants).length ? ` ${JSON.stringify(constants)}` : ''}`,
        layout: 'auto',
        compute: { module, entryPoint, constants },
      });
    } catch (e) {
      throw new GpuValidationError(
        `Pipeline ${label} ${JSON.stringify(constants)} failed: ${(e as Error).message}`,
      );
    } finally {
      this.compileMs += performance.now() - t0;
    }
  }
}
