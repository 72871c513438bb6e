import { defineTool } from '@deepseek-ai/dsh-tools'
import { trace } from '@deepseek-ai/dsh-testkit'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { Session, SessionEvent, SessionEventMap } from '@deepseek-ai/dsh-session'
import { SUMMARY_SYSTEM_PROMPT } from '../src'
import { chars, compactionEvents, harness, texts, turn } from './helpers'

/** A tool that writes the agent's todo list to the log, as a todo plugin does. */
const todo = defineTool({
  name: 'todo',
  description: 'Writes the todo list.',
  parameters: z.object({ items: z.array(z.object({ content: z.string(), status: z.enum(['pending', 'in_progress', 'completed']) })) }),
  execute: ({ items }, run) => {
    run.agent.session.append('todo/write', { todos: items.map((item, i) => ({ id: `t${i + 1}`, ...item })) })
    return 'saved'
  },
})

/** A tool whose result is a large file. */
const cat = defineTool({
  name: 'cat',
  description: 'Prints a file.',
  parameters: z.object({ path: z.string() }),
  isConcurrencySafe: () => true,
  execute: () => chars(1_200, 'f'),
})

/** The data of the `index`-th `compaction/summary` of a log. */
function summaryData(session: Session, index: number): SessionEventMap['compaction/summary'] {
  const found = session.events.filter((event): event is SessionEvent<'compaction/summary'> => event.type === 'compaction/summary')[index]
  if (!found) throw new Error(`no compaction/summary #${index}`)
  return found.data
}

describe('summary (R-CMP-4, R-CMP-5)', () => {
  it('sends the range and the instructions to the summarizer, and replaces the range with the summary, the user messages, the todo list and the conclusion', async () => {
    const replies = [
      { toolCalls: [{ id: 'c1', name: 'todo', arguments: { items: [{ content: 'write the parser', status: 'in_progress' }, { content: 'add tests', status: 'pending' }] } }], usage: false as const },
      { text: 'The plan is saved.', usage: false as const },
      { toolCalls: [{ id: 'c2', name: 'cat', arguments: { path: 'config.txt' } }], usage: false as const },
      { text: 'The parser reads key = value lines; tests pass.', usage: false as const },
      { text: 'Renamed.', usage: false as const },
      { text: 'After.', usage: false as const },
    ]
    const h = await harness({
      window: 4_000,
      tools: [todo, cat],
      respond: (_request, call) => replies[call]!,
      summary: () => ({ text: 'Goal: a config parser. State: parser done, tests pass.', usage: { inputTokens: 321, outputTokens: 12 } }),
    })
    const agent = await h.agent()
    await turn(agent, 'Build a parser for the config files. Use no dependencies.')
    await turn(agent, 'Now write it.')
    await turn(agent, `Rename it to parse-config.ts. ${chars(350, 'r')}`)

    const result = await h.root.compaction.compact(agent, { instructions: 'Keep the file names.' })
    expect(result).toMatchObject({ kind: 'summary', reason: 'manual' })

    // One summary request: the summarizer's system text, and one user message with the range and the instructions.
    expect(h.summaryRequests).toHaveLength(1)
    const request = h.summaryRequests[0]!
    expect(request.system).toBe(SUMMARY_SYSTEM_PROMPT)
    expect(request.tools).toBeUndefined()
    expect(texts(request.messages)).toEqual([
      [
        'user: Here is the conversation to summarize:',
        '',
        '<conversation>',
        '[User]',
        'Build a parser for the config files. Use no dependencies.',
        '',
        '[Assistant called todo (call c1) with {"items":[{"content":"write the parser","status":"in_progress"},{"content":"add tests","status":"pending"}]}]',
        '',
        '[Result of todo (call c1)]',
        'saved',
        '',
        '[Assistant]',
        'The plan is saved.',
        '',
        '[User]',
        'Now write it.',
        '',
        '[Assistant called cat (call c2) with {"path":"config.txt"}]',
        '',
        '[Result of cat (call c2)]',
        chars(1_200, 'f'),
        '</conversation>',
        '',
        'Additional instructions for this summary:',
        'Keep the file names.',
        '',
        'Write the summary now.',
      ].join('\n'),
    ])

    // The log: start (manual, with the instructions), then the summary with its usage and route.
    const [start, summary] = compactionEvents(agent.session)
    expect(start!.data).toMatchObject({ reason: 'manual', instructions: 'Keep the file names.', why: 'requested by compact() with instructions' })
    expect(summary!.data).toMatchObject({
      summary: 'Goal: a config parser. State: parser done, tests pass.',
      usage: { inputTokens: 321, outputTokens: 12 },
      calls: 1,
      route: { provider: 'scripted', model: 'test-model' },
      userMessages: { kept: ['Build a parser for the config files. Use no dependencies.', 'Now write it.'], omitted: 0, omittedTokens: 0 },
    })

    // What the model sees from now on: the replacement, then the protected tail verbatim: it starts
    // inside turn 2, at the step of its answer (800 tokens hold that step and turn 3, not the file).
    await turn(agent, 'Thanks.')
    const messages = h.agentRequests.at(-1)!.messages
    expect(messages[0]!.source).toEqual({ kind: 'plugin', plugin: 'compaction' })
    expect(texts(messages)).toEqual([
      [
        "user: This conversation was compacted to fit the model's context window: 7 earlier messages (about 1,422 tokens) were replaced by this summary. The most recent messages follow it verbatim. Continue the work from where it stands.",
        '',
        '## Summary',
        '',
        'Goal: a config parser. State: parser done, tests pass.',
        '',
        '## What the user wrote, verbatim',
        '',
        "The user's messages in the compacted part, oldest first:",
        '',
        '[1]',
        'Build a parser for the config files. Use no dependencies.',
        '',
        '[2]',
        'Now write it.',
        '',
        '## Latest todo list',
        '',
        '- [in progress] write the parser',
        '- [pending] add tests',
        '',
        '## Your last conclusion before the compaction',
        '',
        'The plan is saved.',
      ].join('\n'),
      'assistant: The parser reads key = value lines; tests pass.',
      `user: Rename it to parse-config.ts. ${chars(350, 'r')}`,
      'assistant: Renamed.',
      'user: Thanks.',
    ])
    // The summarizer's request and answer are not in the agent's log as messages: only the agent's own are.
    expect(trace(agent.session).filter((line) => /^(user|assistant\/message|tool\/result|compaction)/.test(line))).toEqual([
      'user/message "Build a parser for the config files. Use no dependencies."',
      'assistant/message "[tool-call]" tool-calls',
      'tool/result ok "saved"',
      'assistant/message "The plan is saved." stop',
      'user/message "Now write it."',
      'assistant/message "[tool-call]" tool-calls',
      `tool/result ok "${chars(1_200, 'f')}"`,
      'assistant/message "The parser reads key = value lines; tests pass." stop',
      `user/message "Rename it to parse-config.ts. ${chars(350, 'r')}"`,
      'assistant/message "Renamed." stop',
      'compaction/start',
      'compaction/summary',
      'user/message "Thanks."',
      'assistant/message "After." stop',
    ])
    await h.expectClean()
  })

  it("keeps the person's messages newest first within their budget, says how many were left out, and carries them into the next summary", async () => {
    // Budgets of 500 tokens for the user's messages and for the protected tail (one 402-token turn).
    const h = await harness({ window: 10_000, maxOutput: 2_000, config: { auto: false, userMessagesShare: 0.05, tailShare: 0.05 }, respond: () => ({ text: 'ok', usage: false }) })
    const agent = await h.agent()
    const prompt = (i: number) => chars(400, String(i))
    for (let i = 0; i < 6; i++) await turn(agent, prompt(i))
    await h.root.compaction.compact(agent)
    const first = summaryData(agent.session, 0)
    expect(first.userMessages).toEqual({ kept: [prompt(4)], omitted: 4, omittedTokens: 1_600 })
    expect(texts(first.messages)[0]).toContain(`[1]\n${prompt(4)}\n\n(4 older messages from the user, about 1,600 tokens, were left out to save space; the summary covers them.)`)

    // The next summary counts the kept message as the oldest candidate, and adds what it omits to what was omitted.
    for (let i = 6; i < 9; i++) await turn(agent, prompt(i))
    await h.root.compaction.compact(agent)
    expect(summaryData(agent.session, 1).userMessages).toEqual({ kept: [prompt(7)], omitted: 7, omittedTokens: 2_800 })
    await h.expectClean()
  })

  it('never drops the latest instruction whole: one larger than the budget is kept cut in the middle', async () => {
    const h = await harness({ window: 10_000, maxOutput: 2_000, config: { auto: false, userMessagesShare: 0.05, tailShare: 0.05 }, respond: () => ({ text: 'ok', usage: false }) })
    const agent = await h.agent()
    const long = `${chars(1_500, 'h')}${chars(1_500, 't')}`
    await turn(agent, 'first')
    await turn(agent, long)
    await turn(agent, chars(400, 'z'))
    await h.root.compaction.compact(agent)
    expect(summaryData(agent.session, 0).userMessages).toEqual({
      kept: [`${chars(220, 'h')}\n[… 2,560 characters cut …]\n${chars(220, 't')}`],
      omitted: 1,
      omittedTokens: 5,
    })
    await h.expectClean()
  })
})

