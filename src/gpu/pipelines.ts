import { GpuValidationError } from '../errors.ts';
import { assertAlive, type Gpu } from './device.ts';

export type OverrideConstants = Record<string, number>;

/**
 * Compiles each (shader, entry point, override constants) once. Override constants are how tile
 * and workgroup sizes reach WGSL, so they are part of the key: two tilings are two pipelines.
 * Compilation time is recorded so it can be reported as cold start, apart from run time.
 */
export class PipelineCache {
  private readonly modules = new Map<string, GPUShaderModule>();
  private readonly pipelines = new Map<string, Promise<GPUComputePipeline>>();
  /** Milliseconds spent creating pipelines, summed: the cold-start cost. */
  compileMs = 0;

  constructor(private readonly gpu: Gpu) {}

  get(
    label: string,
    code: string,
    constants: OverrideConstants = {},
    entryPoint = 'main',
  ): Promise<GPUComputePipeline> {
    const key = `${label}|${entryPoint}|${JSON.stringify(Object.entries(constants).sort())}`;
    let pipeline = this.pipelines.get(key);
    if (!pipeline) {
      pipeline = this.compile(label, code, constants, entryPoint);
      this.pipelines.set(key, pipeline);
      // A failed compile must not poison the cache for a later retry with other constants.
      pipeline.catch(() => this.pipelines.delete(key));
    }
    return pipeline;
  }

  private async compile(label: string, code: string, constants: OverrideConstants, entryPoint: string) {
    assertAlive(this.gpu);
    const t0 = performance.now();
    let module = this.modules.get(label);
    if (!module) {
      module = this.gpu.device.createShaderModule({ label, code });
      const info = await module.getCompilationInfo();
      const errors = info.messages.filter((m) => m.type === 'error');
      if (errors.length > 0) {
        const text = errors.map((m) => `${label}.wgsl:${m.lineNum}:${m.linePos}: ${m.message}`).join('\n');
        throw new GpuValidationError(`WGSL compilation failed:\n${text}`);
      }
      this.modules.set(label, module);
    }
    try {
      const pipeline = await this.gpu.device.createComputePipelineAsync({
        label: `${label}${Object.keys(constants).length ? ` ${JSON.stringify(constants)}` : ''}`,
        layout: 'auto',
        compute: { module, entryPoint, constants },
      });
      return pipeline;
    } catch (e) {
      throw new GpuValidationError(
        `Pipeline ${label} ${JSON.stringify(constants)} failed: ${(e as Error).message}`,
      );
    } finally {
      this.compileMs += performance.now() - t0;
    }
  }
}
