import type { ModelInfo, TokenUsage } from '@deepseek-ai/dsh-llm'
import Schema from 'schemastery'
import type { Context } from './cordis'
import { demoResponder } from './demo-responder'
import { ScriptedModel } from './scripted-model'
import type { ScriptTurn } from './script'

/** A `ModelInfo` as configuration spells it. */
export interface ScriptedModelInfo extends ModelInfo {
  reasoningEfforts?: string[]
}

/** The plugin's options (validated by `Config`). */
export interface ScriptedConfig {
  /** The provider name the model registers under. */
  provider: string
  /** The script (see `ScriptTurn`); checked when the plugin starts. */
  script: ScriptTurn[]
  /** Answer the calls the script does not cover with the demo responder. */
  demo: boolean
  chunkDelayMs: number
  textChunking: 'word' | number
  argumentChunkSize: number
  /** What `resolveModel` reports per model id (reasoning efforts, context window…). */
  models: ScriptedModelInfo[]
  /** Record every request (turn off for long runs: each record copies the history array). */
  record: boolean
  /** The usage of a reply that gives none: `true` an estimate, `false` none, a `TokenUsage` that usage on every call. */
  usage: boolean | TokenUsage
}

export const Config: Schema<Partial<ScriptedConfig>, ScriptedConfig> = Schema.object({
  provider: Schema.string().min(1).default('scripted').description('The provider name to register.'),
  script: Schema.array(Schema.any()).default([]).description('Replies, consumed one model call at a time.'),
  demo: Schema.boolean().default(false).description('Answer unscripted calls with the offline demo responder.'),
  chunkDelayMs: Schema.number().min(0).default(0).description('Delay before each chunk; 0 never touches a timer.'),
  textChunking: Schema.union([Schema.const('word' as const), Schema.natural().min(1)]).default('word').description("'word' or a number of characters per text delta."),
  argumentChunkSize: Schema.natural().min(1).default(8).description('Characters per tool-call argument fragment.'),
  models: Schema.array(
    Schema.object({
      id: Schema.string().min(1).required(),
      reasoningEfforts: Schema.array(Schema.string()),
      defaultReasoningEffort: Schema.string(),
      contextWindow: Schema.natural(),
      maxOutputTokens: Schema.natural(),
    }),
  ).default([]).description('Model capabilities reported by resolveModel.'),
  record: Schema.boolean().default(true).description('Record every request in model.requests.'),
  usage: Schema.union([
    Schema.boolean(),
    Schema.object({
      inputTokens: Schema.natural().required(),
      outputTokens: Schema.natural().required(),
      cacheReadTokens: Schema.natural(),
      cacheWriteTokens: Schema.natural(),
      reasoningTokens: Schema.natural(),
    }),
  ]).default(true).description('Usage when a reply gives none: true an estimate, false none, or a fixed TokenUsage reported on every call.'),
})

/**
 * The plugin: registers one `ScriptedModel` under `config.provider` on
 * `ctx.llm`, for the life of the plugin. A bad script fails the plugin's
 * start with `INVALID_SCRIPT`.
 */
export const ScriptedPlugin = {
  name: 'dsh-llm-scripted',
  inject: ['llm'],
  Config,
  apply: (ctx: Context, config: ScriptedConfig): void => {
    const model = new ScriptedModel({
      script: config.script,
      respond: config.demo ? demoResponder : undefined,
      chunkDelayMs: config.chunkDelayMs,
      textChunking: config.textChunking,
      argumentChunkSize: config.argumentChunkSize,
      models: config.models,
      record: config.record,
      usage: config.usage,
    })
    ctx.llm.registerAdapter([config.provider], model)
  },
}
