// A listener's return that passes the loop's checks but that the log's data check refuses (a field
// JSON drops, say) is that plugin's bug: it fails the turn with INVALID_DECISION (R-ERR-1), and the
// agent goes on taking work. It used to fail the agent for good (APPEND_REFUSED): the person had to
// dispose it and resume the session.
import { describe, expect, it } from 'vitest'
import type { Agent } from '@deepseek-ai/dsh-agent'
import { createUserMessage, type AssistantMessage } from '@deepseek-ai/dsh-llm'
import { spine, trace } from '@deepseek-ai/dsh-testkit'

async function world() {
  const s = await spine({ model: { script: ['first', 'second'] } })
  const a = await s.agent()
  const errors: string[] = []
  s.root.on('agent/error', (_agent, turn, step, error) => errors.push(`${turn}.${step} ${(error as { code?: string }).code}: ${(error as Error).message}`))
  return { ...s, a, errors }
}

/** The second turn, answered (`header`: its request is the first, so it logs the initial header). */
function secondTurn(answer: string, header: boolean): string[] {
  return [
    'inbox/enqueue next-turn "again"',
    'inbox/dequeue',
    'turn/start 2 prompt',
    'step/start 2.1',
    'user/message "again"',
    ...(header ? ['request/header initial scripted/test-model'] : []),
    'assistant/chunk ×3',
    `assistant/message "${answer}" stop`,
    'step/end 2.1',
    'turn/end 2 completed',
  ]
}

/** The person's two prompts, each awaited: the first meets the spoiling listener, the second shows the agent goes on. */
async function goThenAgain(a: Agent): Promise<void> {
  a.followup('go')
  await a.whenIdle()
  a.followup('again')
  await a.whenIdle()
}

/** The trace of a first turn ended by a listener's value before the model was called, then the second turn. */
const refusedBeforeTheModel = [
  'inbox/enqueue next-turn "go"',
  'inbox/dequeue',
  'turn/start 1 prompt',
  'step/start 1.1',
  'step/end 1.1',
  'turn/end 1 error INVALID_DECISION',
  // The first turn never called the model: the second gets its first answer.
  ...secondTurn('first', true),
]

describe('a listener value the log refuses fails the turn, not the agent (R-ERR-1)', () => {
  const call = { type: 'tool-call' as const, id: 'call_1', name: 'look', arguments: '{}' }
  it.each([
    [
      'a field JSON drops',
      (message: AssistantMessage) => ({ ...message, note: undefined }),
      'assistant/message data.message.note is undefined, which JSON drops (omit the key, or use null)',
    ],
    [
      'one tool call named twice',
      (message: AssistantMessage) => ({ ...message, content: [call, { ...call, arguments: '{"again":true}' }] }),
      'content[1] repeats the tool call id "call_1" of content[0]',
    ],
  ])('agent/step-result: a message with %s ends the turn INVALID_DECISION after an empty anchor, and the agent goes on', async (_what, spoil, problem) => {
    const { root, a, errors } = await world()
    let once = true
    root.on('agent/step-result', async (_agent, _turn, _step, _message, _signal, next) => {
      const message = await next()
      if (!once) return message
      once = false
      return spoil(message) as never
    })
    await goThenAgain(a)
    expect(trace(a.session)).toEqual([
      'inbox/enqueue next-turn "go"',
      'inbox/dequeue',
      'turn/start 1 prompt',
      'step/start 1.1',
      'user/message "go"',
      'request/header initial scripted/test-model',
      'assistant/chunk ×3',
      'assistant/message "" stop',
      'step/end 1.1',
      'turn/end 1 error INVALID_DECISION',
      ...secondTurn('second', false),
    ])
    expect(errors).toEqual([`1.1 INVALID_DECISION: agent/step-result: a listener returned a malformed value (${problem})`])
  })

  it('agent/pre-step: an entered message with a function field ends the turn INVALID_DECISION, nothing of it logged', async () => {
    const { root, a, errors } = await world()
    let once = true
    root.on('agent/pre-step', () => {
      if (!once) return
      once = false
      return { kind: 'enter', messages: [{ ...createUserMessage('mine'), render: () => 'x' } as never] }
    })
    await goThenAgain(a)
    expect(trace(a.session)).toEqual(refusedBeforeTheModel)
    expect(errors).toEqual([
      '1.1 INVALID_DECISION: agent/pre-step: a listener returned a malformed value (user/message data.message.render is a function, which JSON drops)',
    ])
  })

  it('agent/prompt-submit: content that is not lossless JSON ends the turn INVALID_DECISION, never logged', async () => {
    const { root, a, errors } = await world()
    let once = true
    root.on('agent/prompt-submit', async (_agent, _content, _source, _signal, next) => {
      const decision = await next()
      if (!once || decision.kind !== 'allow') return decision
      once = false
      return { ...decision, content: [{ type: 'text', text: 'hi', score: Number.NaN } as never] }
    })
    await goThenAgain(a)
    expect(trace(a.session)).toEqual(refusedBeforeTheModel)
    expect(errors).toEqual([
      '1.1 INVALID_DECISION: agent/prompt-submit: a listener returned a malformed value (user/message data.message.content[0].score is NaN, which JSON cannot represent (use a finite number or null))',
    ])
  })
})
