import Schema from 'schemastery'

/** dsh-compaction's config. Shares are fractions of the model's context window. */
export interface CompactionConfig {
  /** Compact when the next request is estimated above `threshold × (window − reserved output)`. Default 0.8. */
  threshold?: number
  /** The context window in tokens; default: the adapter's `contextWindow` for the agent's model. */
  window?: number
  /** Tokens kept free for the answer; default: the agent's `maxTokens` or the model's `maxOutputTokens`, at most a quarter of the window. */
  reservedOutputTokens?: number
  /** The protected tail: the newest messages within this share of the window stay verbatim. Default 0.2. */
  tailShare?: number
  /** The budget for the user's messages kept verbatim in a summary. Default 0.1. */
  userMessagesShare?: number
  /** The budget for the last assistant conclusion kept in a summary. Default 0.05. */
  conclusionShare?: number
  /** The summary's `maxTokens`; default a tenth of the window, between 256 and 4,096 (and at most the model's output limit). */
  summaryMaxTokens?: number
  /** Tool results at least this large (tokens) are pruned; default 2% of the window, at least 100. */
  pruneMinTokens?: number
  /** Pruning alone is enough when it brings the estimate to this share of the usable window. Default 0.5. */
  pruneTarget?: number
  /** The model that writes summaries; default: the agent's own route. */
  summaryProvider?: string
  summaryModel?: string
  /** Compact on pressure (the threshold). Default true. */
  auto?: boolean
  /** Compact and retry once on `CONTEXT_OVERFLOW`. Default true. */
  overflow?: boolean
}

const share = (fallback: number, description: string) => Schema.number().min(0).max(1).default(fallback).description(description)

export const CompactionConfig: Schema<CompactionConfig> = Schema.object({
  threshold: share(0.8, 'Compact when the next request is estimated above this share of the usable window (window minus reserved output).'),
  window: Schema.natural().description("The context window in tokens (default: the adapter's contextWindow for the agent's model)."),
  reservedOutputTokens: Schema.natural().description("Tokens kept free for the answer (default: the agent's maxTokens or the model's maxOutputTokens, at most a quarter of the window)."),
  tailShare: share(0.2, 'The newest messages within this share of the window stay verbatim (the protected tail).'),
  userMessagesShare: share(0.1, "Budget for the user's messages kept verbatim in a summary."),
  conclusionShare: share(0.05, 'Budget for the last assistant conclusion kept in a summary.'),
  summaryMaxTokens: Schema.natural().description('maxTokens of a summary (default: a tenth of the window, 256 to 4,096).'),
  pruneMinTokens: Schema.natural().description('Tool results at least this large (tokens) are pruned (default: 2% of the window, at least 100).'),
  pruneTarget: share(0.5, 'Pruning alone is enough when it brings the estimate to this share of the usable window.'),
  summaryProvider: Schema.string().description("Provider of the model that writes summaries (default: the agent's own)."),
  summaryModel: Schema.string().description("Model that writes summaries (default: the agent's own)."),
  auto: Schema.boolean().default(true).description('Compact on pressure.'),
  overflow: Schema.boolean().default(true).description('Compact and retry once when the provider answers CONTEXT_OVERFLOW.'),
})
