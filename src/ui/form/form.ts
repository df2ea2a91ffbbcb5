/**
 * The run configuration form. It builds a BenchSpec and validates it with the same zod schema the
 * CLI and the engine use (BenchSpecSchema); each zod issue is shown at the field its path names.
 * The fields are laid out in layout.ts; which of them a suite shows, and what they mean in it, is
 * the suite table's (suites.ts). The speculative suite has fields of its own (drafters, K, adaptive
 * K, verify sizes); there the depths and the tokens to generate are the verify-K curve's depths and
 * the tokens per prompt, as in buildSpec. The load test (serve) has its own too (rate, requests,
 * batching, prefix cache, SLOs, scheduler limits, sweep) and none of the sweep's; the B-scaling
 * suite (batch) takes one depth, the tokens and the repetitions. The weights field picks the linear
 * layers' format; with the format sweep (formats) it becomes a list of the formats to sweep, and
 * the sweep fields name its one prompt length and one decode depth.
 */

import type { KvDtype } from '../../kv/format.ts';
import { isPresetName, PRESETS, presetConfig, presetFiles } from '../../model/config.ts';
import { PRESET_VOCABS } from '../../model/preset-vocab.ts';
import { isGgufName } from '../../model/source.ts';
import { parameterCount } from '../../model/weights.ts';
import { parseSlo } from '../../serve/metrics.ts';
import { fitToModel, workloadModelErrors } from '../../spec/fit.ts';
import { buildSpec, type SpecOptions } from '../../spec/options.ts';
import type { GenerateRequest } from '../../spec/prompt.ts';
import type { BenchSpec } from '../../spec/schema.ts';
import { SPEC_DEFAULTS } from '../../spec/suites.ts';
import { windowErrors } from '../../spec/workload.ts';
import { parseDuration } from '../../spec/workloads/sustained.ts';
import { BYTES, type RunWeightFormat, WEIGHT_FORMATS } from '../../weight-format.ts';
import { h } from '../dom.ts';
import { formatCount } from '../format.ts';
import { type FieldName, Fields, isField, parseList, parseNumber } from './fields.ts';
import { layOut } from './layout.ts';
import { LocalModelPicker } from './local-model.ts';
import { PromptBox } from './prompt-box.ts';
import {
  FIELD_DEFAULTS,
  PAGE_SUITES,
  type PageSuite,
  SWEEP_FIELDS,
  shows,
  suiteForm,
  TOGGLED,
  type Toggled,
} from './suites.ts';

/**
 * The formats to sweep as typed, comma- or space-separated. The names go to the spec schema as
 * they are (as drafter names do): it is the one that knows the formats and rejects a stranger.
 */
function parseFormats(text: string): RunWeightFormat[] {
  return text.split(/[\s,;]+/).filter(Boolean) as RunWeightFormat[];
}

/** A request rate as typed: empty for the calibrated rate, `inf` for all at once, else requests/s. */
function parseRate(text: string): { ok: true; value: number | undefined } | { ok: false; message: string } {
  const t = text.trim().toLowerCase();
  if (t === '') return { ok: true, value: undefined };
  if (t === 'inf' || t === '∞') return { ok: true, value: Number.POSITIVE_INFINITY };
  const v = Number(t);
  return Number.isNaN(v)
    ? { ok: false, message: 'Enter req/s (e.g. 2.5), inf, or nothing' }
    : { ok: true, value: v };
}

/** Drafter names, comma- or space-separated; each is validated by the spec schema. */
function parseDrafters(text: string): string[] {
  return text.split(/[\s,;]+/).filter(Boolean);
}

/** The form field a spec option fills: the same name, except the model source (preset and seed). */
function fieldOfOption(option: keyof SpecOptions | 'model' | null, message: string): FieldName | null {
  if (option === 'model') return message.startsWith('seed') ? 'seed' : 'preset';
  // Options the page has no field for (the capacity probe's pool, the load test's traffic) are CLI options.
  return isField(option) ? option : null;
}

export class ConfigForm {
  readonly element: HTMLFormElement;
  private readonly fields = new Fields();
  private readonly fieldset: HTMLFieldSetElement;
  private readonly specFields: HTMLFieldSetElement;
  private readonly serveFields: HTMLFieldSetElement;
  private readonly sustainedFields: HTMLFieldSetElement;
  private readonly formError = h('p', {
    className: 'field-error form-error',
    attrs: { role: 'alert', hidden: true },
  });
  private readonly presetInfo = h('p', { className: 'hint' });
  private readonly localModel = new LocalModelPicker(() => this.updatePromptBox());
  private readonly promptBox: PromptBox;

  /** `onGenerate`: the Prompt box's Generate, once its prompt and token count read well. */
  constructor(
    private readonly onSubmit: () => void,
    onGenerate: () => void,
  ) {
    this.promptBox = new PromptBox(onGenerate);
    const layout = layOut(this.fields, {
      presetInfo: this.presetInfo,
      localModel: this.localModel.element,
      promptBox: this.promptBox.element,
      formError: this.formError,
    });
    this.fieldset = layout.fieldset;
    this.specFields = layout.specFields;
    this.serveFields = layout.serveFields;
    this.sustainedFields = layout.sustainedFields;
    this.element = h(
      'form',
      { className: 'config-form', attrs: { novalidate: true, 'aria-label': 'Benchmark configuration' } },
      [this.fieldset],
    );
    this.element.addEventListener('submit', (ev) => {
      ev.preventDefault();
      this.onSubmit();
    });

    for (const [name, value] of Object.entries(FIELD_DEFAULTS))
      this.fields.setValue(name as FieldName, value);
    this.applySuite(SPEC_DEFAULTS.suite);

    this.fields.control('suite').addEventListener('change', () => {
      this.applySuite(this.suite());
      this.validate();
    });
    for (const name of SWEEP_FIELDS) {
      this.fields.control(name).addEventListener('input', () => {
        // The speculative, B-scaling and format suites' sweep values are their own to set; typing a
        // sweep's makes it the named suite they match, or custom.
        if (suiteForm(this.suite()).sweep.kind !== 'own') this.fields.setValue('suite', this.matchingSuite());
      });
    }
    this.fields.control('preset').addEventListener('change', () => {
      this.updatePresetInfo();
      this.updatePromptBox();
    });
    this.element.addEventListener('input', () => this.validate());
    this.element.addEventListener('change', () => this.validate());
    this.updatePresetInfo();
    this.updatePromptBox();
  }

  /**
   * Chooses a suite: fills the sweep fields it shows with its values, and shows its fields. The
   * speculative and B-scaling suites keep the prefill lengths as they were (they have none, and
   * hide them) and their own fields as last set; the load test has no sweep fields at all and
   * leaves them be, and custom keeps what they hold.
   */
  applySuite(suite: PageSuite): void {
    const { sweep } = suiteForm(suite);
    this.fields.setValue('suite', suite);
    if ('values' in sweep) {
      for (const name of SWEEP_FIELDS) {
        const value = sweep.values[name];
        if (shows(suite, name))
          this.fields.setValue(name, typeof value === 'number' ? value : value.join(', '));
      }
    }
    this.showSuiteFields();
  }

  setPreset(name: string): void {
    if (!isPresetName(name)) return;
    this.fields.setValue('preset', name);
    this.updatePresetInfo();
    this.updatePromptBox();
  }

  setDisabled(disabled: boolean): void {
    this.fieldset.disabled = disabled;
  }

  /** The validated spec, or null with every problem shown at its field. */
  read(): BenchSpec | null {
    return this.validate();
  }

  /** What the Prompt box's Generate asks for: the chosen model and the box's text, or null (the box says why). */
  generateRequest(): GenerateRequest | null {
    const settings = this.promptBox.settings();
    if (!settings) return null;
    // A picked file, or the chosen preset (a trained one's file, or seeded weights with its
    // family's vocabulary): the Prompt box is open only where one of them has a tokenizer.
    const seed = parseNumber(this.fields.value('seed'));
    const model = this.localModel.model ?? {
      kind: 'preset' as const,
      preset: this.fields.value('preset'),
      seed: seed !== null && Number.isInteger(seed) && seed >= 0 ? seed : 0,
    };
    return { model, ...settings };
  }

  /** Whether llama.cpp (wllama) should run beside the run, on the same weights. */
  peerRequested(): boolean {
    return this.fields.checked('peer');
  }

  /** The chosen suite: the select offers the page's suites alone. */
  private suite(): PageSuite {
    return this.fields.value('suite') as PageSuite;
  }

  private toggled(name: Toggled): HTMLElement {
    if (name === 'specFields') return this.specFields;
    if (name === 'serveFields') return this.serveFields;
    if (name === 'sustainedFields') return this.sustainedFields;
    return this.fields.get(name).wrapper;
  }

  /** Shows the fields the chosen suite uses, labelled for what they mean in it. */
  private showSuiteFields(): void {
    const suite = this.suite();
    for (const name of TOGGLED) this.toggled(name).hidden = !shows(suite, name);
    const { text } = suiteForm(suite);
    for (const name of SWEEP_FIELDS) {
      const t = text[name];
      if (t) this.fields.setText(name, t.label, t.hint);
    }
  }

  /** The named suite (quick, full) whose values the sweep fields hold exactly, else 'custom'. */
  private matchingSuite(): PageSuite {
    const prefill = parseList(this.fields.value('prefill'));
    const depths = parseList(this.fields.value('depths'));
    for (const suite of PAGE_SUITES) {
      const { sweep } = suiteForm(suite);
      if (
        sweep.kind === 'named' &&
        prefill.ok &&
        depths.ok &&
        prefill.values.join() === sweep.values.prefill.join() &&
        depths.values.join() === sweep.values.depths.join() &&
        parseNumber(this.fields.value('gen')) === sweep.values.gen &&
        parseNumber(this.fields.value('reps')) === sweep.values.reps
      ) {
        return suite;
      }
    }
    return 'custom';
  }

  /** The Prompt box is open to a GGUF file (its own tokenizer) and to a preset with its family’s vocabulary. */
  private updatePromptBox(): void {
    const picked = this.localModel.model;
    const preset = this.fields.value('preset');
    const vocab = isPresetName(preset) && PRESET_VOCABS[preset] !== undefined;
    const trained = presetFiles(preset).file !== undefined;
    this.promptBox.setModel(
      !picked
        ? trained
          ? 'trained'
          : vocab
            ? 'presetVocab'
            : 'preset'
        : isGgufName(picked.name)
          ? 'gguf'
          : 'safetensors',
    );
  }

  private updatePresetInfo(): void {
    const name = this.fields.value('preset');
    if (!isPresetName(name)) return;
    const config = presetConfig(name);
    const params = parameterCount(config);
    this.presetInfo.textContent = `${PRESETS[name].description}. ${formatCount(params)} parameters, ${(
      (params * BYTES.f32) / 2 ** 20
    ).toFixed(0)} MiB of f32 weights, up to ${config.maxSeqLen} tokens.`;
  }

  /**
   * The model and the options as typed for the chosen suite: the sweep fields it hides are not
   * sent, and what cannot be read is put in `errors`, at its field.
   */
  private readOptions(
    suite: PageSuite,
    errors: Map<FieldName, string>,
  ): { model: unknown; options: SpecOptions } {
    const list = (name: 'prefill' | 'depths' | 'verifyKs'): number[] => {
      const parsed = parseList(this.fields.value(name));
      if (parsed.ok) return parsed.values;
      errors.set(name, parsed.message);
      return [];
    };
    const number = (name: FieldName): number => {
      const v = parseNumber(this.fields.value(name));
      if (v === null) errors.set(name, 'Enter a number');
      return v ?? 0;
    };
    const model = this.localModel.model ?? {
      kind: 'preset',
      preset: this.fields.value('preset'),
      seed: number('seed'),
    };
    const options: SpecOptions = {
      suite,
      prefill: shows(suite, 'prefill') ? list('prefill') : undefined,
      depths: shows(suite, 'depths') ? list('depths') : undefined,
      gen: shows(suite, 'gen') ? number('gen') : undefined,
      reps: shows(suite, 'reps') ? number('reps') : undefined,
      warmup: number('warmup'),
      pageSize: number('pageSize'),
      kvMode: this.fields.value('kvMode') as SpecOptions['kvMode'],
      // The type's name goes to the spec schema as it is, which rejects a stranger.
      kvDtype: [this.fields.value('kvDtype') as KvDtype],
      window: this.readWindow(errors),
      batch: number('batch'),
      profile: suite === 'formats' ? false : this.fields.checked('profile'),
      autotune: this.fields.checked('autotune'),
      fuse: this.fields.checked('fuse'),
      // The weights option is the list field while the format sweep is chosen, the choice otherwise.
      weights: shows(suite, 'weightsList')
        ? parseFormats(this.fields.value('weightsList'))
        : [this.fields.value('weights') as RunWeightFormat],
    };
    // The Prompt box shows its own error; a box that does not read well sends no generation.
    const generate = this.promptBox.settings();
    if (generate) options.generate = generate;
    if (suite === 'spec') {
      // The speculative suite's own fields; its depths, tokens and repetitions are sent as typed.
      options.drafters = parseDrafters(this.fields.value('drafters'));
      options.k = number('k');
      options.adaptiveK = this.fields.checked('adaptiveK');
      options.verifyKs = list('verifyKs');
      const temperature = this.fields.value('temperature').trim();
      if (temperature !== '') {
        const t = Number(temperature);
        if (Number.isNaN(t))
          errors.set('temperature', 'Enter a temperature (e.g. 0.8), or nothing for greedy');
        else options.temperature = t;
      }
      if (options.depths?.length === 0 && !errors.has('depths')) {
        errors.set('depths', 'the verify-K curve needs at least one depth');
      }
    } else if (suite === 'serve') {
      // The load test's own fields; the sweep fields are hidden and not sent.
      const rate = parseRate(this.fields.value('rate'));
      if (rate.ok) options.rate = rate.value;
      else errors.set('rate', rate.message);
      options.requests = number('requests');
      options.batching = this.fields.value('batching') as SpecOptions['batching'];
      options.prefixCache = this.fields.value('prefixCache') as SpecOptions['prefixCache'];
      options.prefixTokens = number('prefixTokens');
      options.maxBatch = number('maxBatch');
      options.tokenBudget = number('tokenBudget');
      options.sweep = number('sweep');
      const slo = this.fields.value('slo');
      try {
        options.slo = slo.trim() === '' ? {} : parseSlo(slo);
      } catch (e) {
        errors.set('slo', (e as Error).message);
      }
    } else if (suite === 'formats') {
      // The sweep times every format at one prompt length and one depth, sent as typed.
      if (options.weights?.length === 0)
        errors.set('weightsList', `Name a format: ${WEIGHT_FORMATS.join(', ')}`);
      for (const [name, what] of [
        ['prefill', 'prompt length'],
        ['depths', 'depth'],
      ] as const) {
        const values = options[name] ?? [];
        if (errors.has(name)) continue;
        if (values.length !== 1) errors.set(name, `the format sweep times one ${what}; give one`);
      }
    } else if (suite === 'sustained') {
      const duration = parseDuration(this.fields.value('durationS'));
      if (Number.isFinite(duration) && duration > 0) options.durationS = duration;
      else errors.set('durationS', 'Seconds, or a time such as 90s, 5m or 1h');
      options.windowS = number('windowS');
      for (const [name, what] of [
        ['prefill', 'prompt length'],
        ['depths', 'depth'],
      ] as const) {
        if (!errors.has(name) && (options[name] ?? []).length !== 1)
          errors.set(name, `sustained load repeats one ${what}; give one`);
      }
    } else if (suite === 'batch') {
      // B-scaling's depth, tokens and repetitions are sent as typed.
      if (options.depths?.length === 0 && !errors.has('depths')) {
        errors.set('depths', 'B-scaling needs a depth');
      }
    } else if (suiteForm(suite).sweep.kind === 'named') {
      // The page always sends its sweep fields, so a named suite stays named only while they match it.
      options.prefill = undefined;
      options.depths = undefined;
      options.gen = undefined;
      options.reps = undefined;
    }
    return { model, options };
  }

  /** The window field: empty is full attention (no window); else a whole number of tokens. */
  private readWindow(errors: Map<FieldName, string>): [number] | undefined {
    const text = this.fields.value('window').trim();
    if (text === '') return undefined;
    const v = Number(text);
    if (Number.isInteger(v) && v > 0) return [v];
    errors.set('window', 'A whole number of tokens, or empty for full attention');
    return undefined;
  }

  private validate(): BenchSpec | null {
    const errors = new Map<FieldName, string>();
    const formErrors: string[] = [];
    const suite = this.suite();
    const { model, options } = this.readOptions(suite, errors);
    const built = buildSpec(model, options);
    let result: BenchSpec | null = null;
    if (!built.ok) {
      for (const issue of built.issues) {
        const option = fieldOfOption(issue.option, issue.message);
        const field = option === 'weights' && shows(suite, 'weightsList') ? 'weightsList' : option;
        const message =
          issue.index === undefined ? issue.message : `value ${issue.index + 1}: ${issue.message}`;
        if (field === null) formErrors.push(message);
        else if (!errors.has(field)) errors.set(field, message);
      }
    } else {
      result = built.spec;
      if (result.model.kind === 'preset' && isPresetName(result.model.preset)) {
        // The engine rejects typed sweep values beyond the model's length; say so here, at the field.
        // The speculative, B-scaling and format suites' values are always typed here, so what would
        // not fit is an error too.
        const config = presetConfig(result.model.preset);
        const fit = fitToModel(result, config.maxSeqLen);
        for (const u of suiteForm(suite).sweep.kind === 'own' ? fit.dropped : fit.errors) {
          if (isField(u.option) && !errors.has(u.option)) errors.set(u.option, u.message);
        }
        // A window the model cannot take: within one page, or as long as the model.
        const window = windowErrors(result.kv.window, result.kv.pageSize, config.maxSeqLen, 'a window of');
        if (window.length > 0 && !errors.has('window')) errors.set('window', window.join('; '));
        // Drafters this model cannot use (a truncation as deep as the model, another vocabulary).
        const drafters = workloadModelErrors(result, config);
        if (drafters.length > 0 && !errors.has('drafters')) errors.set('drafters', drafters.join('; '));
      }
    }

    // A shared prefix as long as the context would fill every prompt: the generator cuts it to each
    // prompt, so no request would share what was asked for. Said even while other fields are wrong.
    const preset = this.fields.value('preset');
    const prefix = options.prefixTokens ?? 0;
    if (suite === 'serve' && !this.localModel.model && isPresetName(preset) && !errors.has('prefixTokens')) {
      const { maxSeqLen } = presetConfig(preset);
      if (prefix >= maxSeqLen) {
        errors.set(
          'prefixTokens',
          `a ${prefix}-token prefix does not fit the model's maxSeqLen of ${maxSeqLen}`,
        );
      }
    }

    this.fields.showErrors(errors);
    this.formError.textContent = formErrors.map((m) => m.charAt(0).toUpperCase() + m.slice(1)).join('. ');
    this.formError.hidden = formErrors.length === 0;
    const promptOk = this.promptBox.settings() !== null;
    return result !== null && errors.size === 0 && promptOk ? result : null;
  }
}
