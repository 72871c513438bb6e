import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import RegistryPairing from '@deepseek-ai/dsh-agent/invariant'
import RequestReconstruction, { REQUEST_RECONSTRUCTION } from '@deepseek-ai/dsh-agent-loop/invariant'
import Invariants, { type InvariantPolicy } from '@deepseek-ai/dsh-invariants'
import { createUserMessage, type LlmRequest } from '@deepseek-ai/dsh-llm'
import LlmRetry from '@deepseek-ai/dsh-llm-retry'
import type { ScriptTurn } from '@deepseek-ai/dsh-llm-scripted'
import { memoryPersistence, SessionId, type AnySessionEvent, type Session } from '@deepseek-ai/dsh-session'
import LogStructure from '@deepseek-ai/dsh-session/invariant'
import { defineTool } from '@deepseek-ai/dsh-tools'
import { echo, spine, trace, transcript, type SpineOptions } from '@deepseek-ai/dsh-testkit'

const shout = defineTool({
  name: 'shout',
  description: 'Shouts its text.',
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => text.toUpperCase(),
})

/**
 * The spine with `ctx.invariants` and the request-reconstruction companion
 * mounted; with `all`, also memory persistence and the dsh-session and
 * dsh-agent companions.
 */
async function checkedSpine(options: SpineOptions, policy: InvariantPolicy = 'throw', all = false) {
  const harness = await spine(options)
  const { root } = harness
  await root.plugin(Invariants, { policy })
  if (all) {
    await root.plugin(memoryPersistence)
    await root.plugin(LogStructure)
    await root.plugin(RegistryPairing)
  }
  await root.plugin(RequestReconstruction)
  return harness
}

/** The last `request/header` of a session's log. */
function lastHeader(session: Session) {
  const headers = session.events.filter((event): event is AnySessionEvent & { type: 'request/header' } => event.type === 'request/header')
  return headers[headers.length - 1]!.data
}

/** A request built by hand that matches `session`'s log right now, except for `messages`. */
function handRequest(session: Session, messages: LlmRequest['messages']): LlmRequest {
  const { provider, model, system, tools } = lastHeader(session)
  return { provider, model, system, tools, messages, sessionId: session.id }
}

describe('dsh-agent-loop/invariant on healthy runs (R-INV-1)', () => {
  it('finds nothing over turns with tools, steering, injections, a retry, a cancel and header changes (all companions)', async () => {
    const { root, agent, model } = await checkedSpine({
      tools: [echo],
      model: {
        models: [{ id: 'test-model', reasoningEfforts: ['low', 'high'] }],
        script: [
          { toolCalls: [{ name: 'echo', arguments: { text: 'x' } }], answer: 'done' },
          'first answer',
          'second answer',
          { error: { code: 'RATE_LIMIT', message: 'slow down' } },
          'recovered',
          'never finished',
          { reasoning: 'Think.', toolCalls: [{ name: 'shout', arguments: { text: 'hey' } }], answer: 'fine' },
        ],
      },
    }, 'throw', true)
    await root.plugin(LlmRetry, { baseDelayMs: 0, maxDelayMs: 0 })
    const a = await agent()

    // A tool round.
    a.followup('use the tool')
    await a.whenIdle()

    // Steering and an injection while the model streams.
    const held = model.control()
    a.followup('steer me')
    await held.started
    a.steer('and also this')
    a.inject('a note from a plugin')
    await held.release()
    await a.whenIdle()

    // A provider failure, retried in a new step.
    a.followup('flaky')
    await a.whenIdle()

    // An injection with no open turn: a one-shot injection turn.
    a.inject('between turns')

    // A cancel mid-stream.
    const cut = model.control()
    a.followup('cancel me')
    await cut.started
    await cut.text('partial')
    a.cancel({ kind: 'user' })
    await a.whenIdle()

    // A new tool and a reasoning effort: the header changes.
    root.tools.register(shout)
    root.on('agent/request', async (_agent, _turn, _step, _config, _signal, next) => ({ ...(await next()), reasoningEffort: 'high', maxTokens: 512, temperature: 0.25 }))
    a.followup('shout')
    await a.whenIdle()

    expect(trace(a.session).filter((line) => /^(turn\/end|request\/header|llm\/retry|steering)/.test(line))).toEqual([
      'request/header initial scripted/test-model',
      'turn/end 1 completed',
      'steering/message "and also this"',
      'turn/end 2 completed',
      'llm/retry',
      'turn/end 3 completed',
      'turn/end 4 completed',
      'turn/end 5 aborted',
      'request/header change scripted/test-model high',
      'turn/end 6 completed',
    ])
    expect(model.calls).toBe(9)
    // The sampling settings sent are logged with the header they went out under.
    expect(lastHeader(a.session)).toMatchObject({ reasoningEffort: 'high', maxTokens: 512, temperature: 0.25 })
    expect(model.requests.at(-1)).toMatchObject({ reasoningEffort: 'high', maxTokens: 512, temperature: 0.25 })
    expect(await root.invariants.check()).toEqual([])
    expect(root.invariants.violations).toEqual([])
  })

  it('finds nothing after a session is disposed and resumed under the same id', async () => {
    const { root, agent, model, handles } = await checkedSpine({ model: { script: ['one', 'two'] } })
    await root.plugin(memoryPersistence)
    const a = await agent('kept')
    a.followup('first')
    await a.whenIdle()
    await handles[0]!.dispose()
    const resumed = await root.agents.resume({ resumeSessionId: SessionId('kept'), agentOptions: { provider: 'scripted', model: 'test-model' } })
    resumed.agent.followup('second')
    await resumed.agent.whenIdle()
    expect(trace(resumed.agent.session).filter((line) => /^(turn\/end|request\/header)/.test(line))).toEqual([
      'request/header initial scripted/test-model',
      'turn/end 1 completed',
      'turn/end 2 completed',
    ])
    expect(transcript(model.requests[1]!.messages)).toEqual(['user: first', 'assistant: one', 'user: second'])
    expect(await root.invariants.check()).toEqual([])
    await resumed.dispose()
  })
})

describe('dsh-agent-loop/invariant: what it checks, and when', () => {
  it('verifies eagerly: a bad request marked during a turn is reported at that turn, without check()', async () => {
    const { root, agent } = await checkedSpine({ model: { script: ['Hello there'] } }, 'collect')
    let bad: LlmRequest | undefined
    root.on('agent/post-step', (subject, turn, step) => {
      const session = subject.session
      const [prompt, answer] = session.deriveMessages()
      const tampered = { ...prompt!, content: [{ type: 'text' as const, text: 'tampered' }] }
      bad = handRequest(session, [tampered, answer!])
      root.llm.markLoopRequest(bad, { sessionId: session.id, turn, step, lastSeq: session.events.length - 1, messageCount: 2 })
    })
    const a = await agent()
    a.followup('hi')
    await a.whenIdle()
    const promptSeq = a.session.events.find((event) => event.type === 'user/message')!.seq
    const lastSeq = a.session.events.find((event) => event.type === 'assistant/message')!.seq
    expect(root.invariants.violations).toEqual([
      {
        invariant: REQUEST_RECONSTRUCTION,
        message:
          `session "a", turn 1 step 1 (lastSeq ${lastSeq}, 2 messages): the request differs from what its log explains: ` +
          `messages[0].content[0].text: request "tampered" ≠ log "hi" (seq ${promptSeq})`,
        details: {
          kind: 'mismatch',
          sessionId: 'a',
          turn: 1,
          step: 1,
          lastSeq,
          messageCount: 2,
          differences: [{ path: 'messages[0].content[0].text', request: '"tampered"', log: '"hi"', seq: promptSeq }],
          differenceCount: 1,
        },
      },
    ])
    expect(bad).toBeDefined()
    // Verified once: check() does not report it again.
    expect(await root.invariants.check()).toEqual([])
  })

  it('checks only requests of live sessions: retired ones are not compared with a later session of the same id', async () => {
    const { root, agent, handles } = await checkedSpine({ model: { script: ['one', 'other'] } })
    const first = await agent('reused')
    first.followup('first life')
    await first.whenIdle()
    // Valid for the first life, still unverified when that session goes away.
    const old = handRequest(first.session, first.session.deriveMessages())
    // Step 1.1's request was sent right after the first request/header.
    const lastSeq = first.session.events.findIndex((event) => event.type === 'request/header')
    const meta = { sessionId: first.session.id, turn: 1, step: 1, lastSeq, messageCount: 1 }
    root.llm.markLoopRequest(old, meta)
    await handles[0]!.dispose()
    expect(await root.invariants.check()).toEqual([])
    // A request of a session id that is not live is not checked either.
    const ghost = { ...old, sessionId: SessionId('ghost') }
    root.llm.markLoopRequest(ghost, { ...meta, sessionId: SessionId('ghost') })
    expect(await root.invariants.check()).toEqual([])

    const second = await agent('reused')
    second.followup('a different prompt')
    await second.whenIdle()
    expect(await root.invariants.check()).toEqual([])
    // Keeps the dropped requests reachable (the identity set holds requests weakly).
    expect([old, ghost].map((request) => request.messages.length)).toEqual([2, 2])
  })

  it('leaves direct one-shot ctx.llm calls alone, even with a session id attached', async () => {
    const { root, agent } = await checkedSpine({ model: { script: ['loop answer', 'one-shot answer'] } })
    const a = await agent()
    a.followup('hi')
    await a.whenIdle()
    const chunks = []
    for await (const chunk of root.llm.stream({
      provider: 'scripted',
      model: 'test-model',
      messages: [createUserMessage('never logged')],
      sessionId: a.session.id,
    })) {
      chunks.push(chunk.type)
    }
    expect(chunks.at(-1)).toBe('finish')
    expect(await root.invariants.check()).toEqual([])
  })
})


describe('every invariant companion on a real spine', () => {
  it('finds nothing over create, turns, cancel, a vetoed publication, dispose, resume and owner unload', async () => {
    const script: ScriptTurn[] = [
      { toolCalls: [{ name: 'echo', arguments: { text: 'x' } }, { name: 'echo', arguments: { text: 'y' } }], answer: 'one' },
      'cut short',
      'two',
      'three',
    ]
    const { root, agent, model, handles, loop } = await checkedSpine({ tools: [echo], model: { script } }, 'throw', true)
    const a = await agent('a')
    a.followup('first')
    a.steer('steering')
    await a.whenIdle()

    const held = model.control()
    a.followup('cancel me')
    await held.started
    await held.text('partial')
    a.cancel({ kind: 'user' })
    await a.whenIdle()

    // A publication vetoed by a created listener rolls back with paired notifications.
    const veto = root.on('agent/created', (subject) => {
      if (subject.id === 'vetoed') throw new Error('not this one')
    })
    await expect(agent('vetoed')).rejects.toThrow('not this one')
    veto()

    await handles[0]!.dispose()
    const resumed = await root.agents.resume({ resumeSessionId: SessionId('a'), agentOptions: { provider: 'scripted', model: 'test-model' } })
    resumed.agent.followup('again')
    await resumed.agent.whenIdle()

    const b = await agent('b')
    b.followup('in b')
    await b.whenIdle()
    expect(await root.invariants.check()).toEqual([])

    // Unloading the loop disposes every agent it still drives.
    await loop.dispose()
    expect(root.agents.list()).toEqual([])
    expect(await root.invariants.check()).toEqual([])
    expect(root.invariants.violations).toEqual([])
    expect([model.calls, model.remaining]).toEqual([6, 0])
  })
})
