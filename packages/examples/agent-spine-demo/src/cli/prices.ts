import type { TokenUsage } from '@deepseek-ai/dsh-llm'

/**
 * What a model charges, in US dollars per million tokens. Cache reads and
 * writes default to the input price when a provider does not price them
 * apart; reasoning tokens are billed as output.
 */
export interface ModelPrice {
  input: number
  output: number
  cacheRead?: number
  cacheWrite?: number
}

/**
 * The list prices of the preset models, by `provider/model`, as the providers
 * published them (USD per million tokens; checked 2026-12-01). Prices change:
 * `prices` in the config file overrides or adds entries. A model missing here
 * (a local server, a model with no published price) has no cost shown.
 * DeepSeek bills a cache hit at a tenth of a miss; OpenAI bills cached input
 * at a quarter (gpt-4.1, o4-mini), a half (gpt-4o) or a tenth (gpt-5);
 * Anthropic bills cache reads at a tenth and cache writes at 1.25 times input.
 */
export const PRESET_PRICES: Readonly<Record<string, Readonly<ModelPrice>>> = Object.freeze({
  'deepseek/deepseek-chat': { input: 0.28, cacheRead: 0.028, output: 0.42 },
  'deepseek/deepseek-reasoner': { input: 0.28, cacheRead: 0.028, output: 0.42 },
  'openai/gpt-4.1': { input: 2, cacheRead: 0.5, output: 8 },
  'openai/gpt-4.1-mini': { input: 0.4, cacheRead: 0.1, output: 1.6 },
  'openai/gpt-4o': { input: 2.5, cacheRead: 1.25, output: 10 },
  'openai/gpt-4o-mini': { input: 0.15, cacheRead: 0.075, output: 0.6 },
  'openai/o4-mini': { input: 1.1, cacheRead: 0.275, output: 4.4 },
  'openai/gpt-5': { input: 1.25, cacheRead: 0.125, output: 10 },
  'openai/gpt-5-mini': { input: 0.25, cacheRead: 0.025, output: 2 },
  'anthropic/claude-fable-5-1': { input: 10, cacheRead: 1, cacheWrite: 12.5, output: 50 },
  'anthropic/claude-opus-5-5': { input: 4, cacheRead: 0.4, cacheWrite: 5, output: 20 },
  'anthropic/claude-sonnet-5-5': { input: 2, cacheRead: 0.2, cacheWrite: 2.5, output: 10 },
  'anthropic/claude-opus-5': { input: 5, cacheRead: 0.5, cacheWrite: 6.25, output: 25 },
  'anthropic/claude-sonnet-5': { input: 2, cacheRead: 0.2, cacheWrite: 2.5, output: 10 },
  'anthropic/claude-opus-4-5': { input: 5, cacheRead: 0.5, cacheWrite: 6.25, output: 25 },
  'anthropic/claude-sonnet-4-5': { input: 3, cacheRead: 0.3, cacheWrite: 3.75, output: 15 },
  'anthropic/claude-haiku-4-5': { input: 1, cacheRead: 0.1, cacheWrite: 1.25, output: 5 },
})

/** The price table: the presets', overridden and extended by the config file's `prices`. */
export class PriceTable {
  private readonly table: Record<string, ModelPrice>

  constructor(overrides: Readonly<Record<string, ModelPrice>> = {}) {
    this.table = { ...PRESET_PRICES, ...overrides }
  }

  /** The price of `provider/model`, if known. */
  get(provider: string, model: string): ModelPrice | undefined {
    return this.table[`${provider}/${model}`]
  }
}

/** What one model call cost, in US dollars. */
export function callCost(usage: TokenUsage, price: ModelPrice): number {
  const perToken = (perMillion: number) => perMillion / 1_000_000
  return (
    usage.inputTokens * perToken(price.input) +
    (usage.cacheReadTokens ?? 0) * perToken(price.cacheRead ?? price.input) +
    (usage.cacheWriteTokens ?? 0) * perToken(price.cacheWrite ?? price.input) +
    (usage.outputTokens + (usage.reasoningTokens ?? 0)) * perToken(price.output)
  )
}

/** An amount of US dollars for a person: `$0.00`, `$0.0042`, `$0.137`, `$12.40`. */
export function formatMoney(dollars: number): string {
  if (dollars === 0) return '$0.00'
  if (dollars >= 1) return `$${dollars.toFixed(2)}`
  if (dollars >= 0.01) return `$${dollars.toFixed(3)}`
  return `$${dollars.toFixed(4)}`
}

/** `$0.28 in · $0.028 cache read · $0.42 out per M tokens`. */
export function describePrice(price: ModelPrice): string {
  const parts = [`$${price.input} in`]
  if (price.cacheRead !== undefined) parts.push(`$${price.cacheRead} cache read`)
  if (price.cacheWrite !== undefined) parts.push(`$${price.cacheWrite} cache write`)
  parts.push(`$${price.output} out per M tokens`)
  return parts.join(' · ')
}
