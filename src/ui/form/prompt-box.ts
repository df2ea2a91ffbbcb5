/**
 * The Prompt box: a text to generate from greedily with the model's own tokenizer, after the run's
 * workloads (it travels in the spec as `generate`) or at once with Generate. A GGUF file carries a
 * tokenizer, and a laptop preset takes its family's vocabulary (src/model/preset-vocab.ts, whose
 * output the box calls gibberish), and a trained preset its own (it opens with a demo prompt); for
 * ci-tiny or a safetensors model the box is disabled and says why.
 */
import { type GenerateSettings, MAX_GENERATE_TOKENS } from '../../spec/prompt.ts';
import { button, h, uniqueId } from '../dom.ts';

/** Tokens asked for by default: llama.cpp's llama-simple's. */
const DEFAULT_TOKENS = 32;

/** What the chosen model is, as far as the page knows before loading it. */
export type PromptModel = 'preset' | 'presetVocab' | 'trained' | 'safetensors' | 'gguf';

/**
 * The prompt a trained preset starts with, so that Run shows text at once: a JSON object of the
 * corpus's grammar to complete, the task it does best (docs/trained-model.md).
 */
export const TRAINED_DEMO_PROMPT = 'JSON: {"city": "oslo",';

const NOTES: Record<PromptModel, string> = {
  preset:
    'Unavailable: this preset has seeded random weights and no vocabulary, so there is no text to read or write. Pick a .gguf file that carries its tokenizer, or a preset with its family’s vocabulary.',
  presetVocab:
    'The prompt is tokenized with the vocabulary of the family this preset copies the shape of, but the weights are seeded random, not trained: what it writes is that vocabulary’s tokens at random, gibberish. A .gguf file of a trained model writes text.',
  safetensors:
    'Unavailable: the page reads no tokenizer for a safetensors model. A .gguf file carries its own.',
  gguf: 'Greedy, with the file’s own tokenizer: generated after the run’s workloads (on the model the run timed), or now with Generate.',
  trained:
    'Greedy, with the model’s own tokenizer: a 4M-parameter model trained here on Debian’s files and generated tasks (JSON objects, arithmetic, a passkey, copying, man pages and Python). It adds two-digit numbers, recalls a passkey up to 512 tokens back and writes JSON-like and man-page-like text; longer sums and everything else are mostly wrong (docs/trained-model.md). Generated after the run’s workloads, or now with Generate.',
};

/** Models whose text the box can read and write. */
const OPEN: ReadonlySet<PromptModel> = new Set(['gguf', 'presetVocab', 'trained']);

export class PromptBox {
  readonly element: HTMLElement;
  private readonly text: HTMLTextAreaElement;
  private readonly tokens: HTMLInputElement;
  private readonly note: HTMLElement;
  private readonly error: HTMLElement;
  private readonly generateButton: HTMLButtonElement;
  private model: PromptModel = 'preset';

  constructor(onGenerate: () => void) {
    const textId = uniqueId('prompt');
    const tokensId = uniqueId('prompt-tokens');
    const noteId = `${textId}-note`;
    this.text = h('textarea', {
      testId: 'prompt',
      attrs: { id: textId, rows: 3, spellcheck: 'false', placeholder: 'Hello', 'aria-describedby': noteId },
    });
    this.tokens = h('input', {
      testId: 'prompt-tokens',
      attrs: {
        id: tokensId,
        type: 'number',
        inputmode: 'numeric',
        min: 1,
        max: MAX_GENERATE_TOKENS,
        step: 1,
      },
    });
    this.tokens.value = String(DEFAULT_TOKENS);
    this.note = h('p', { className: 'hint', testId: 'prompt-note', attrs: { id: noteId } });
    this.error = h('p', { className: 'field-error', attrs: { role: 'alert', hidden: true } });
    this.generateButton = button(
      'Generate',
      () => {
        if (this.readRequest()) onGenerate();
      },
      {
        className: 'btn',
        testId: 'generate',
      },
    );
    this.element = h('div', { className: 'field field-prompt' }, [
      h('label', { text: 'Prompt', attrs: { for: textId } }),
      this.text,
      h('div', { className: 'prompt-row' }, [
        h('label', { text: 'Tokens', attrs: { for: tokensId } }),
        this.tokens,
        this.generateButton,
      ]),
      this.note,
      this.error,
    ]);
    this.setModel('preset');
  }

  /** Enables the box for a GGUF file, or disables it and says why. */
  setModel(model: PromptModel): void {
    const was = this.model;
    this.model = model;
    const off = !OPEN.has(model);
    // A trained preset opens with its demo prompt; leaving it takes the demo away, not what was typed.
    if (model === 'trained' && this.text.value === '') this.text.value = TRAINED_DEMO_PROMPT;
    else if (was === 'trained' && model !== 'trained' && this.text.value === TRAINED_DEMO_PROMPT)
      this.text.value = '';
    this.text.disabled = off;
    this.tokens.disabled = off;
    this.generateButton.disabled = off;
    this.note.textContent = NOTES[model];
    this.element.classList.toggle('unavailable', off);
    if (off) this.showError('');
  }

  /**
   * The generation the run should do after its workloads: undefined when the box is unavailable or
   * empty; null (with the error shown) when the token count is not one.
   */
  settings(): GenerateSettings | undefined | null {
    if (!OPEN.has(this.model) || this.text.value === '') {
      this.showError('');
      return undefined;
    }
    return this.readRequest();
  }

  /** The box's prompt and token count, or null with the error shown. */
  private readRequest(): GenerateSettings | null {
    const n = Number(this.tokens.value);
    if (!Number.isInteger(n) || n < 1 || n > MAX_GENERATE_TOKENS) {
      this.showError(`Tokens: a whole number in 1…${MAX_GENERATE_TOKENS}`);
      return null;
    }
    if (this.text.value === '') {
      this.showError('Type a prompt to generate from.');
      return null;
    }
    this.showError('');
    return { prompt: this.text.value, maxTokens: n, ignoreEos: false };
  }

  private showError(message: string): void {
    this.error.textContent = message;
    this.error.hidden = message === '';
    this.tokens.toggleAttribute('aria-invalid', message.startsWith('Tokens'));
  }
}
