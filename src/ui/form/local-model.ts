/**
 * A local model: a Hugging Face one (config.json plus one .safetensors file) or a llama.cpp .gguf
 * file (its config inside), picked as files or as the folder holding them. The Blobs go to the
 * worker as they are; nothing is uploaded.
 */
import type { BenchSpec } from '../../spec/schema.ts';
import { h } from '../dom.ts';

type LocalModel = Extract<BenchSpec['model'], { kind: 'files' }>;

const PICK_HINT =
  'Pick config.json and model.safetensors (f32, f16 or bf16), or a .gguf file of a Llama, Qwen2 or Qwen3 model (F32, F16, BF16, the legacy Q4/Q5/Q8 types, the K-quants, Q4_K_M), or the folder holding them.';

export class LocalModelPicker {
  readonly element: HTMLElement;
  /** A model picked from disk; when set it replaces the preset. */
  private picked: LocalModel | undefined;

  /** `onChange` runs after each pick (or return to the preset), once `model` says what it is. */
  constructor(onChange: () => void = () => {}) {
    const pickFiles = h('input', {
      attrs: { id: 'local-model', type: 'file', accept: '.safetensors,.json,.gguf', multiple: true },
    });
    const pickFolder = h('input', { attrs: { id: 'local-folder', type: 'file', webkitdirectory: '' } });
    const localNote = h('p', { className: 'hint', text: PICK_HINT });
    const localError = h('p', { className: 'field-error', attrs: { role: 'alert' } });
    const clearLocal = h('button', { text: 'Use the preset', attrs: { type: 'button', hidden: '' } });
    const onPick = (input: HTMLInputElement) => () => {
      const files = [...(input.files ?? [])];
      const config = files.find((f) => f.name === 'config.json');
      const weights = files.find((f) => f.name.endsWith('.safetensors'));
      const gguf = files.find((f) => f.name.toLowerCase().endsWith('.gguf'));
      localError.textContent = '';
      if (gguf) {
        this.picked = { kind: 'files', weights: gguf, name: gguf.name };
        localNote.textContent = `Using ${gguf.name} (${(gguf.size / 2 ** 20).toFixed(1)} MiB) instead of the preset.`;
      } else if (!config || !weights) {
        this.picked = undefined;
        localError.textContent = `Need config.json and a .safetensors file, or a .gguf file; got ${files.map((f) => f.name).join(', ') || 'nothing'}.`;
      } else {
        this.picked = { kind: 'files', config, weights, name: weights.name };
        localNote.textContent = `Using ${weights.name} (${(weights.size / 2 ** 20).toFixed(1)} MiB) with its config.json instead of the preset.`;
      }
      clearLocal.hidden = !this.picked;
      onChange();
    };
    pickFiles.addEventListener('change', onPick(pickFiles));
    pickFolder.addEventListener('change', onPick(pickFolder));
    clearLocal.addEventListener('click', () => {
      this.picked = undefined;
      pickFiles.value = '';
      pickFolder.value = '';
      clearLocal.hidden = true;
      localNote.textContent = PICK_HINT;
      onChange();
    });
    this.element = h('div', { className: 'field field-local' }, [
      h('label', { text: 'Or a local safetensors or GGUF model', attrs: { for: 'local-model' } }),
      pickFiles,
      h('label', { text: 'or a folder', attrs: { for: 'local-folder' } }),
      pickFolder,
      clearLocal,
      localNote,
      localError,
    ]);
  }

  /** The picked model, or undefined for the preset. */
  get model(): LocalModel | undefined {
    return this.picked;
  }
}
