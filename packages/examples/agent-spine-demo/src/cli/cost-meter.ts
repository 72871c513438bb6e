import type {} from '@deepseek-ai/dsh-compaction'
import type { TokenUsage } from '@deepseek-ai/dsh-llm'
import type { AnySessionEvent } from '@deepseek-ai/dsh-session'
import { callCost, formatMoney, type PriceTable } from './prices'

/** Tokens and money of one `provider/model` in a session. */
export interface RouteCost {
  route: string
  calls: number
  /** Uncached prompt tokens. */
  input: number
  cacheRead: number
  cacheWrite: number
  /** Answer and reasoning tokens. */
  output: number
  /** US dollars; undefined when the price table has no price for the route. */
  dollars: number | undefined
}

/**
 * The cost of a session in money, read from its log: each `assistant/message`
 * with `usage` is priced at the route of the `request/header` before it (so a
 * `/model` switch prices each call at its own model), cache reads and writes
 * at their own prices. Compaction's summary calls count too, at the route that
 * wrote the summary (`compaction/summary`, and `compaction/failed` when a
 * summary was written but not used). Reads each event once (`update` continues where it
 * stopped), so calling it after every turn costs only the new events.
 */
export class CostMeter {
  private read = 0
  private route: { provider: string; model: string } | undefined
  private readonly routes = new Map<string, RouteCost>()
  /** The session total at the last `turnCost()`. */
  private reported = 0

  constructor(private readonly prices: PriceTable) {}

  /** Reads the events appended since the last call. */
  update(events: readonly AnySessionEvent[]): void {
    for (; this.read < events.length; this.read++) {
      const event = events[this.read]!
      if (event.type === 'request/header') this.route = { provider: event.data.provider, model: event.data.model }
      else if (event.type === 'assistant/message' && event.data.usage && this.route) this.add(this.route, event.data.usage, 1)
      else if (event.type === 'compaction/summary') this.add(event.data.route, event.data.usage, event.data.calls)
      else if (event.type === 'compaction/failed' && event.data.usage && event.data.route) this.add(event.data.route, event.data.usage, event.data.calls ?? 1)
    }
  }

  /** Every route the session called, in the order first called. */
  byRoute(): RouteCost[] {
    return [...this.routes.values()].map((cost) => ({ ...cost }))
  }

  /** The session's priced total in US dollars, and whether some calls had no price. */
  total(): { dollars: number; unpriced: boolean } {
    let dollars = 0
    let unpriced = false
    for (const cost of this.routes.values()) {
      if (cost.dollars === undefined) unpriced = true
      else dollars += cost.dollars
    }
    return { dollars, unpriced }
  }

  /**
   * For a turn's summary line, after `update`: `$0.0031 (session $0.0124)`,
   * the money spent since the previous call and the session's total; undefined
   * when nothing the session called has a price (the offline model, a local server).
   */
  turnCost(): string | undefined {
    const { dollars, unpriced } = this.total()
    const spent = dollars - this.reported
    this.reported = dollars
    if (![...this.routes.values()].some((cost) => cost.dollars !== undefined)) return undefined
    return `${formatMoney(spent)} (session ${formatMoney(dollars)}${unpriced ? ' + unpriced calls' : ''})`
  }

  /** Adds `calls` calls to `route` whose summed usage is `usage` (a price is linear in tokens, so a sum prices like its parts). */
  private add({ provider, model }: { provider: string; model: string }, usage: TokenUsage, calls: number): void {
    const route = `${provider}/${model}`
    let cost = this.routes.get(route)
    const price = this.prices.get(provider, model)
    if (!cost) this.routes.set(route, (cost = { route, calls: 0, input: 0, cacheRead: 0, cacheWrite: 0, output: 0, dollars: price ? 0 : undefined }))
    cost.calls += calls
    cost.input += usage.inputTokens
    cost.cacheRead += usage.cacheReadTokens ?? 0
    cost.cacheWrite += usage.cacheWriteTokens ?? 0
    cost.output += usage.outputTokens + (usage.reasoningTokens ?? 0)
    if (price) cost.dollars = (cost.dollars ?? 0) + callCost(usage, price)
  }
}

/** `/cost`: one line per route (tokens and money), then the total. */
export function costLines(meter: CostMeter): string[] {
  const routes = meter.byRoute()
  if (routes.length === 0) return ['no model calls in this session yet']
  const n = (value: number) => value.toLocaleString('en-US')
  const lines = routes.map(
    (cost) =>
      `${cost.route}: ${cost.calls} call${cost.calls === 1 ? '' : 's'} · ${n(cost.input)} in · ${n(cost.cacheRead)} cache read · ${n(cost.cacheWrite)} cache write · ${n(cost.output)} out · ${
        cost.dollars === undefined ? 'no price known (prices in the config file adds one)' : formatMoney(cost.dollars)
      }`,
  )
  const { dollars, unpriced } = meter.total()
  lines.push(`session total ${formatMoney(dollars)}${unpriced ? ' (calls without a price are not counted)' : ''}`)
  return lines
}
