/**
 * The text a model generated: the prompt, then each token's text as it is read back (from a run's
 * generation after its workloads, or from Generate), then its latency on the engine's wall clock
 * and the token ids. Everything is set as text: a result opened from History or imported is
 * untrusted, and generated text may hold anything.
 */
import type { GenerateEvent, Generation } from '../runtime/api.ts';
import { decodeTokensPerS } from '../spec/prompt.ts';
import { h } from './dom.ts';
import { formatMs } from './format.ts';

export class GenerationView {
  readonly element: HTMLElement;
  private readonly status = h('p', { className: 'muted small', testId: 'generation-status' });
  private readonly prompt = h('span', { className: 'generated-prompt', testId: 'generated-prompt' });
  private readonly output = h('span', { className: 'generated-output', testId: 'generated-text' });
  private readonly stats = h('p', { className: 'summary-line muted', testId: 'generation-stats' });
  private readonly ids = h('p', { className: 'generated-ids', testId: 'generated-ids' });
  private readonly idsBox = h('details', { className: 'generated-ids-box', attrs: { hidden: true } }, [
    h('summary', { text: 'Token ids' }),
    this.ids,
  ]);

  constructor() {
    this.element = h(
      'section',
      { className: 'card generation', testId: 'generation', attrs: { hidden: true } },
      [
        h('h2', { text: 'Generated text' }),
        this.status,
        h('p', { className: 'generated' }, [this.prompt, this.output]),
        this.stats,
        this.idsBox,
      ],
    );
  }

  /** A generation begins: the prompt, and an empty text that the tokens fill. */
  start(prompt: string, where: string): void {
    this.element.hidden = false;
    this.prompt.textContent = prompt;
    this.output.textContent = '';
    this.stats.textContent = '';
    this.ids.textContent = '';
    this.idsBox.hidden = true;
    this.status.textContent = where;
  }

  /** A step before the first token, or a token's text, as the engine streams them. */
  event(e: GenerateEvent): void {
    if (e.type === 'status') this.status.textContent = `${e.message}…`;
    else {
      if (e.type === 'token' && e.index === 0) this.status.textContent = 'Generating…';
      this.output.append(e.text);
    }
  }

  /** The finished generation (the text as the engine joined it replaces the streamed pieces). */
  finish(g: Generation, where: string): void {
    this.start(g.prompt, where);
    this.output.textContent = g.text;
    const tps = decodeTokensPerS(g);
    const stop = g.stop === 'eog' ? 'stopped at an end-of-generation token' : 'stopped at the token limit';
    this.stats.textContent = [
      `${g.tokens.length} tokens after a ${g.promptTokens.length}-token prompt, ${stop}`,
      `TTFT ${formatMs(g.ttftMs)} ms`,
      ...(g.tpotMs === null ? [] : [`TPOT ${formatMs(g.tpotMs)} ms`]),
      ...(tps === null ? [] : [`${tps.toFixed(1)} tokens/s (decode, 1000 ÷ TPOT)`]),
      g.clock,
    ].join(' · ');
    this.ids.textContent = g.tokens.join(', ');
    this.idsBox.hidden = false;
  }

  fail(message: string): void {
    this.element.hidden = false;
    this.status.textContent = message.startsWith('No text') ? message : `No text: ${message}`;
  }

  /**
   * A finished run's generation; or why it made none when it was asked for one (the run's warning
   * says, src/run/run.ts); or nothing.
   */
  show(g: Generation | undefined, warnings: readonly string[]): void {
    const why = warnings.find((w) => w.startsWith('No text was generated'));
    if (g) this.finish(g, 'Generated greedily on the run’s model after its workloads.');
    else if (why) {
      this.start('', '');
      this.fail(why);
    } else this.element.hidden = true;
  }
}
