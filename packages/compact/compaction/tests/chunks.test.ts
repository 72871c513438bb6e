import { defineTool } from '@deepseek-ai/dsh-tools'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { SUMMARY_SYSTEM_PROMPT } from '../src'
import { chars, compactionEvents, harness, turn } from './helpers'

// The agent's model has a 10,000-token window; summaries are written by `summarizer`, whose window
// is 4,000 tokens with 500 for the answer: a range of 4,000 tokens and more cannot go in one of its
// requests. One token per character (the test estimator), so sizes add up by hand.
const SUMMARIZER = { id: 'summarizer', contextWindow: 4_000, maxOutputTokens: 500 }
const config = { auto: false, summaryProvider: 'scripted', summaryModel: 'summarizer' }

/** The user text of a summary request. */
const requestText = (request: { messages: readonly { content: readonly { type: string; text?: string }[] }[] }) => request.messages[0]!.content[0]!.text!

/** Prints `size` copies of `c`. */
const cat = defineTool({
  name: 'cat',
  description: 'Prints a file.',
  parameters: z.object({ size: z.number(), c: z.string() }),
  isConcurrencySafe: () => true,
  execute: ({ size, c }) => chars(size, c),
})

describe("the summarizer's own request fits its window (R-CMP-4)", () => {
  it('a range too large for one request is summarized in chunks, each request carrying the summary so far', async () => {
    const h = await harness({
      window: 10_000,
      maxOutput: 2_000,
      models: [SUMMARIZER],
      config,
      respond: (_request, call) => ({ text: chars(500, String.fromCharCode(97 + call)), usage: false }),
      summary: (_request, call) => ({ text: `Summary after part ${call + 1}.`, usage: { inputTokens: 1_000, outputTokens: 10 } }),
    })
    const agent = await h.agent()
    for (let i = 0; i < 6; i++) await turn(agent, chars(500, String(i)))

    const result = await h.root.compaction.compact(agent)
    expect(result).toMatchObject({ kind: 'summary', reason: 'manual' })
    // About 4,100 tokens of range (turns 1 to 4; the last two turns are the tail), in chunks of at most 1,500.
    const calls = h.summaryRequests.length
    expect(calls).toBe(3)
    h.summaryRequests.forEach((request, i) => {
      const text = requestText(request)
      // Every request fits the summarizer's window with room for its answer.
      expect(SUMMARY_SYSTEM_PROMPT.length + text.length).toBeLessThanOrEqual(SUMMARIZER.contextWindow - SUMMARIZER.maxOutputTokens)
      expect(text).toContain(`Here is part ${i + 1} of ${calls} of the conversation to summarize:`)
      if (i === 0) expect(text).not.toContain('<summary>')
      else expect(text.startsWith(`The summary of the earlier parts of the conversation so far:\n\n<summary>\nSummary after part ${i}.\n</summary>`)).toBe(true)
      expect(text.endsWith(i === 0 ? 'Write the summary now.' : 'Write the summary now, merging the summary so far with this part.')).toBe(true)
    })
    // Every message of the range reached the summarizer, in order, exactly once.
    const sent = h.summaryRequests.map(requestText).join('\n')
    const order = [...sent.matchAll(/\[(User|Assistant)\]\n(.)/g)].map((match) => `${match[1]} ${match[2]}`)
    const summaryEvent = compactionEvents(agent.session)[1]!
    const { to } = compactionEvents(agent.session)[0]!.data as { to: number }
    const range = agent.session.events.filter((event) => event.seq < to && (event.type === 'user/message' || event.type === 'assistant/message'))
    expect(order).toEqual(range.map((event) => `${event.type === 'user/message' ? 'User' : 'Assistant'} ${(event.data as { message: { content: { text: string }[] } }).message.content[0]!.text[0]}`))
    // The summary is the last answer; the usage is the sum of the calls'.
    expect(summaryEvent.data).toMatchObject({ summary: `Summary after part ${calls}.`, calls, usage: { inputTokens: 1_000 * calls, outputTokens: 10 * calls }, route: { provider: 'scripted', model: 'summarizer' } })
    await h.expectClean()
  })

  it('a summary request the provider refuses as too long (its text undercounted: CJK, code) is split smaller and sent again', async () => {
    // The agent's own route writes the summary; its real limit for a summary request is 3,000 characters,
    // well under what the estimate allows (about 7,000): the first request overflows.
    const h = await harness({
      window: 10_000,
      maxOutput: 2_000,
      config: { auto: false },
      respond: (_request, call) => ({ text: chars(500, String.fromCharCode(97 + call)), usage: false }),
      summary: (request, call) =>
        requestText(request).length > 3_000
          ? { error: { code: 'CONTEXT_OVERFLOW', message: 'prompt is too long' } }
          : { text: `Summary after call ${call + 1}.`, usage: { inputTokens: 700, outputTokens: 10 } },
    })
    const agent = await h.agent()
    for (let i = 0; i < 6; i++) await turn(agent, chars(500, String(i)))

    const result = await h.root.compaction.compact(agent)
    expect(result).toMatchObject({ kind: 'summary', reason: 'manual' })
    const lengths = h.summaryRequests.map((request) => requestText(request).length)
    expect(lengths[0]).toBeGreaterThan(3_000)
    expect(lengths.slice(1).every((length) => length <= 3_000)).toBe(true)
    expect(requestText(h.summaryRequests[1]!)).toContain(`Here is part 1 of ${lengths.length - 1} of the conversation to summarize:`)
    // Every call is counted; the usage is what the answered ones reported.
    const calls = lengths.length
    expect(compactionEvents(agent.session)[1]!.data).toMatchObject({ calls, usage: { inputTokens: 700 * (calls - 1), outputTokens: 10 * (calls - 1) } })
    await h.expectClean()
  })

  it('a range that does not fit has its large tool results pruned first, and then fits one request', async () => {
    let call = 0
    const h = await harness({
      window: 10_000,
      maxOutput: 2_000,
      models: [SUMMARIZER],
      tools: [cat],
      config,
      respond: () => (call++ % 2 === 0 ? { toolCalls: [{ id: `c${call}`, name: 'cat', arguments: { size: 1_500, c: 'F' } }], usage: false } : { text: 'Read it.', usage: false }),
    })
    const agent = await h.agent()
    for (let i = 0; i < 4; i++) await turn(agent, `Read file ${i}.`)

    await h.root.compaction.compact(agent)
    expect(h.summaryRequests).toHaveLength(1)
    const text = requestText(h.summaryRequests[0]!)
    expect(SUMMARY_SYSTEM_PROMPT.length + text.length).toBeLessThanOrEqual(SUMMARIZER.contextWindow - SUMMARIZER.maxOutputTokens)
    expect(text.startsWith('Here is the conversation to summarize:')).toBe(true)
    // The file contents gave way to stubs naming the tool, the call and the size; everything else is there.
    expect(text).not.toContain(chars(100, 'F'))
    const stubs = [...text.matchAll(/\[Tool result elided by compaction to save context: cat \(call (c\d+)\) returned 1,500 characters, about 1,500 tokens\. Call the tool again if you need this output\.\]/g)].map((match) => match[1])
    // Turns 1 to 3 are the range (4,500 tokens of files: more than the 1,900 or so one request may hold); turn 4 is the tail.
    expect(stubs).toEqual(['c1', 'c3', 'c5'])
    expect([...text.matchAll(/\[Assistant called cat \(call (c\d+)\)/g)].map((match) => match[1])).toEqual(['c1', 'c3', 'c5'])
    expect([...text.matchAll(/\[User\]\n(Read file \d\.)/g)].map((match) => match[1])).toEqual(['Read file 0.', 'Read file 1.', 'Read file 2.'])
    expect(compactionEvents(agent.session)[1]).toMatchObject({ type: 'compaction/summary', data: { calls: 1 } })
    await h.expectClean()
  })
})
