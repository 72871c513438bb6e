import { describe, expect, it } from 'vitest'
import type { AnySessionEvent } from '@deepseek-ai/dsh-session'
import { CostMeter, costLines } from '../src/cli/cost-meter'
import { PriceTable, callCost, formatMoney } from '../src/cli/prices'

const header = (provider: string, model: string) => ({ type: 'request/header', data: { provider, model } }) as unknown as AnySessionEvent
const message = (usage: object | undefined) => ({ type: 'assistant/message', data: { usage } }) as unknown as AnySessionEvent

describe('prices', () => {
  it('prices cache reads and writes apart, and reasoning as output', () => {
    const price = { input: 2, cacheRead: 0.5, cacheWrite: 2.5, output: 8 }
    expect(callCost({ inputTokens: 1_000_000, cacheReadTokens: 2_000_000, cacheWriteTokens: 1_000_000, outputTokens: 500_000, reasoningTokens: 500_000 }, price)).toBe(2 + 1 + 2.5 + 8)
    // Without cache prices, the cache counts at the input price.
    expect(callCost({ inputTokens: 0, cacheReadTokens: 1_000_000, outputTokens: 0 }, { input: 3, output: 1 })).toBe(3)
    expect([0, 0.00042, 0.0137, 0.5, 12.4].map(formatMoney)).toEqual(['$0.00', '$0.0004', '$0.014', '$0.500', '$12.40'])
  })

  it('knows the preset models, and the config file overrides and adds', () => {
    const table = new PriceTable({ 'deepseek/deepseek-chat': { input: 1, output: 1 }, 'scripted/demo': { input: 0, output: 0 } })
    expect([table.get('deepseek', 'deepseek-chat'), table.get('deepseek', 'deepseek-reasoner'), table.get('scripted', 'demo'), table.get('ollama', 'qwen3:8b')]).toEqual([
      { input: 1, output: 1 },
      { input: 0.28, cacheRead: 0.028, output: 0.42 },
      { input: 0, output: 0 },
      undefined,
    ])
  })
})

describe('CostMeter', () => {
  it('prices each call at the model of the header before it, and reports each turn and the session', () => {
    const meter = new CostMeter(new PriceTable({ 'x/cheap': { input: 1, cacheRead: 0.1, output: 2 } }))
    const events: AnySessionEvent[] = [
      header('x', 'cheap'),
      message({ inputTokens: 1_000_000, cacheReadTokens: 1_000_000, outputTokens: 100_000 }),
      message(undefined),
    ]
    meter.update(events)
    expect(meter.turnCost()).toBe('$1.30 (session $1.30)')
    events.push(header('x', 'unknown'), message({ inputTokens: 10, outputTokens: 1 }), header('x', 'cheap'), message({ inputTokens: 500_000, outputTokens: 0 }))
    meter.update(events)
    expect(meter.turnCost()).toBe('$0.500 (session $1.80 + unpriced calls)')
    expect(costLines(meter)).toEqual([
      'x/cheap: 2 calls · 1,500,000 in · 1,000,000 cache read · 0 cache write · 100,000 out · $1.80',
      'x/unknown: 1 call · 10 in · 0 cache read · 0 cache write · 1 out · no price known (prices in the config file adds one)',
      'session total $1.80 (calls without a price are not counted)',
    ])
  })

  it("counts compaction's summary calls at the model that wrote the summary, used or not", () => {
    const meter = new CostMeter(new PriceTable({ 'x/main': { input: 1, output: 2 }, 'x/small': { input: 0.5, output: 1 } }))
    const route = { provider: 'x', model: 'small' }
    const events = [
      header('x', 'main'),
      message({ inputTokens: 1_000_000, outputTokens: 0 }),
      { type: 'compaction/summary', data: { route, calls: 2, usage: { inputTokens: 2_000_000, outputTokens: 500_000 } } },
      { type: 'compaction/failed', data: { code: 'NOT_SMALLER', message: 'nothing to gain', route, calls: 1, usage: { inputTokens: 1_000_000, outputTokens: 0 } } },
      { type: 'compaction/failed', data: { code: 'SUMMARY_FAILED', message: 'the summary call failed' } },
      message({ inputTokens: 0, outputTokens: 1_000_000 }),
    ] as unknown as AnySessionEvent[]
    meter.update(events)
    expect(costLines(meter)).toEqual([
      'x/main: 2 calls · 1,000,000 in · 0 cache read · 0 cache write · 1,000,000 out · $3.00',
      'x/small: 3 calls · 3,000,000 in · 0 cache read · 0 cache write · 500,000 out · $2.00',
      'session total $5.00',
    ])
  })

  it('says nothing about money when no model of the session has a price', () => {
    const meter = new CostMeter(new PriceTable())
    meter.update([header('scripted', 'demo'), message({ inputTokens: 5, outputTokens: 5 })])
    expect(meter.turnCost()).toBeUndefined()
    expect(costLines(new CostMeter(new PriceTable()))).toEqual(['no model calls in this session yet'])
  })
})
