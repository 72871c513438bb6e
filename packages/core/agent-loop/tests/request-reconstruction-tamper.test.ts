import { describe, expect, it } from 'vitest'
import RequestReconstruction, { REQUEST_RECONSTRUCTION, type RequestDifference } from '@deepseek-ai/dsh-agent-loop/invariant'
import Invariants, { InvariantError, type InvariantPolicy } from '@deepseek-ai/dsh-invariants'
import { MessageId, createUserMessage, type LlmRequest, type LoopRequestMeta } from '@deepseek-ai/dsh-llm'
import type { Session } from '@deepseek-ai/dsh-session'
import type { ToolDefinition } from '@deepseek-ai/dsh-tools'
import { spine } from '@deepseek-ai/dsh-testkit'

declare module '@deepseek-ai/dsh-session' {
  interface SessionEventMap {
    'invariant-test/summary': { text: string }
  }
}

/** The smallest tool: a plain JSON-Schema definition whose body ignores its arguments. */
const ping: ToolDefinition = {
  name: 'ping',
  description: 'Answers pong.',
  parameters: { type: 'object' },
  execute: () => 'pong',
}

/**
 * One turn with a tool round (steps 1.1 and 1.2) under the companion. Returns
 * the session, the model's copies of the two requests and their metas.
 */
async function toolRound(policy: InvariantPolicy = 'collect') {
  const harness = await spine({ tools: [ping], model: { script: [{ toolCalls: [{ name: 'ping' }], answer: 'done' }] } })
  const { root, model } = harness
  await root.plugin(Invariants, { policy })
  await root.plugin(RequestReconstruction)
  const agent = await harness.agent()
  agent.followup('use the tool')
  await agent.whenIdle()
  const session = agent.session
  const [first, second] = model.requests as [LlmRequest, LlmRequest]
  const metas = [meta(session, 1, 1, first), meta(session, 1, 2, second)] as const
  return { ...harness, session, first, second, metas }
}

function meta(session: Session, turn: number, step: number, request: LlmRequest): LoopRequestMeta {
  return { sessionId: session.id, turn, step, lastSeq: requestSeq(session, turn, step), messageCount: request.messages.length }
}

/** The seq of the last event before step `turn`.`step`'s model call (what the loop records as `lastSeq`). */
function requestSeq(session: Session, turn: number, step: number): number {
  const answer = session.events.find(
    (event) => (event.type === 'assistant/chunk' || event.type === 'assistant/message') && event.data.turn === turn && event.data.step === step,
  )
  return answer!.seq - 1
}

function seqOf(session: Session, type: string, nth = 0): number {
  return session.events.filter((event) => event.type === type)[nth]!.seq
}

/** The violation the companion reports for one request with these differences. */
function mismatch(meta: LoopRequestMeta, differences: RequestDifference[]) {
  const shown = differences
    .slice(0, 3)
    .map((d) => `${d.path}: request ${d.request} ≠ log ${d.log}${d.seq === undefined ? '' : ` (seq ${d.seq})`}`)
    .join('; ')
  const more = differences.length > 3 ? `; and ${differences.length - 3} more` : ''
  return {
    invariant: REQUEST_RECONSTRUCTION,
    message:
      `session ${JSON.stringify(meta.sessionId)}, turn ${meta.turn} step ${meta.step} (lastSeq ${meta.lastSeq}, ${meta.messageCount} messages): ` +
      `the request differs from what its log explains: ${shown}${more}`,
    details: { kind: 'mismatch', ...meta, differences, differenceCount: differences.length },
  }
}

/** `JSON.stringify`, abbreviated to 60 characters as differences show values. */
function brief(value: unknown): string {
  const text = JSON.stringify(value)
  return text.length > 60 ? `${text.slice(0, 59)}…` : text
}

describe('dsh-agent-loop/invariant finds each tampered request (R-INV-1)', () => {
  it('faithful copies of the loop requests, marked with their real metas, pass', async () => {
    const { root, first, second, metas } = await toolRound()
    root.llm.markLoopRequest({ ...first }, metas[0])
    root.llm.markLoopRequest({ ...second }, metas[1])
    expect(await root.invariants.check()).toEqual([])
  })

  it('a message whose text differs from the log', async () => {
    const { root, session, first, metas } = await toolRound()
    const [prompt] = first.messages
    const request = { ...first, messages: [{ ...prompt!, content: [{ type: 'text' as const, text: 'use the other tool' }] }] }
    root.llm.markLoopRequest(request, metas[0])
    expect(await root.invariants.check()).toEqual([
      mismatch(metas[0], [
        { path: 'messages[0].content[0].text', request: '"use the other tool"', log: '"use the tool"', seq: seqOf(session, 'user/message') },
      ]),
    ])
  })

  it('a message with the same text under another id', async () => {
    const { root, session, first, metas } = await toolRound()
    const impostor = createUserMessage('use the tool', { id: MessageId('msg_impostor') })
    root.llm.markLoopRequest({ ...first, messages: [impostor] }, metas[0])
    expect(await root.invariants.check()).toEqual([
      mismatch(metas[0], [{ path: 'messages[0].id', request: '"msg_impostor"', log: brief(first.messages[0]!.id), seq: seqOf(session, 'user/message') }]),
    ])
  })

  it('a message the log has and the request dropped', async () => {
    const { root, session, second, metas } = await toolRound()
    const shortened = { ...second, messages: second.messages.slice(0, 2) }
    const shortMeta = { ...metas[1], messageCount: 2 }
    root.llm.markLoopRequest(shortened, shortMeta)
    expect(await root.invariants.check()).toEqual([
      mismatch(shortMeta, [
        { path: 'messages.length', request: '2', log: '3' },
        { path: 'messages[2]', request: '(none)', log: brief(second.messages[2]), seq: seqOf(session, 'tool/result') },
      ]),
    ])
  })

  it('a meta naming a step that is not the one open at lastSeq', async () => {
    const { root, session, second, metas } = await toolRound()
    const wrongStep = { ...metas[1], step: 3 }
    root.llm.markLoopRequest({ ...second }, wrongStep)
    expect(await root.invariants.check()).toEqual([
      mismatch(wrongStep, [{ path: 'step', request: '1.3', log: '1.2 is open', seq: seqOf(session, 'step/start', 1) }]),
    ])
  })

  it('a meta whose lastSeq is too early: the step and every message past it differ', async () => {
    const { root, session, second, metas } = await toolRound()
    const early = { ...metas[1], lastSeq: metas[0].lastSeq }
    root.llm.markLoopRequest({ ...second }, early)
    expect(await root.invariants.check()).toEqual([
      mismatch(early, [
        { path: 'step', request: '1.2', log: '1.1 is open', seq: seqOf(session, 'step/start') },
        { path: 'messages.length', request: '3', log: '1' },
        { path: 'messages[1]', request: brief(second.messages[1]), log: '(none)' },
        { path: 'messages[2]', request: brief(second.messages[2]), log: '(none)' },
      ]),
    ])
  })

  it('a meta whose lastSeq lies past the end of the log', async () => {
    const { root, session, second, metas } = await toolRound()
    const end = session.events.length - 1
    const beyond = { ...metas[1], lastSeq: end + 5 }
    root.llm.markLoopRequest({ ...second }, beyond)
    expect(await root.invariants.check()).toEqual([
      mismatch(beyond, [
        { path: 'lastSeq', request: String(end + 5), log: `the log ends at seq ${end}` },
        { path: 'step', request: '1.2', log: 'no step is open' },
        { path: 'messages.length', request: '3', log: '4' },
        { path: 'messages[3]', request: '(none)', log: brief(session.deriveMessages()[3]), seq: seqOf(session, 'assistant/message', 1) },
      ]),
    ])
  })

  it('header fields the log does not explain: model, effort, system text, tools', async () => {
    const { root, session, first, metas } = await toolRound()
    const header = seqOf(session, 'request/header')
    const tools = [{ ...first.tools![0]!, description: 'Answers loudly.' }]
    root.llm.markLoopRequest({ ...first, model: 'other-model', reasoningEffort: 'high', system: 'You are someone else.', tools }, metas[0])
    expect(await root.invariants.check()).toEqual([
      mismatch(metas[0], [
        { path: 'header.model', request: '"other-model"', log: '"test-model"', seq: header },
        { path: 'header.reasoningEffort', request: '"high"', log: '(none)', seq: header },
        { path: 'header.system', request: '"You are someone else."', log: brief(first.system), seq: header },
        { path: 'header.tools[0].description', request: '"Answers loudly."', log: '"Answers pong."', seq: header },
      ]),
    ])
  })

  it('sampling settings the header does not explain: max tokens, temperature', async () => {
    const { root, session, first, metas } = await toolRound()
    const header = seqOf(session, 'request/header')
    root.llm.markLoopRequest({ ...first, maxTokens: 64, temperature: 1.5 }, metas[0])
    expect(await root.invariants.check()).toEqual([
      mismatch(metas[0], [
        { path: 'header.maxTokens', request: '64', log: '(none)', seq: header },
        { path: 'header.temperature', request: '1.5', log: '(none)', seq: header },
      ]),
    ])
  })

  it('a request of another session id than its meta', async () => {
    const { root, first, metas } = await toolRound()
    root.llm.markLoopRequest({ ...first, sessionId: 'b' as never }, metas[0])
    expect(await root.invariants.check()).toEqual([mismatch(metas[0], [{ path: 'sessionId', request: '"b"', log: '"a"' }])])
  })

  it('each request is verified once: a second check() does not report it again', async () => {
    const { root, first, metas } = await toolRound()
    root.llm.markLoopRequest({ ...first, model: 'other-model' }, metas[0])
    expect(await root.invariants.check()).toHaveLength(1)
    expect(await root.invariants.check()).toEqual([])
    expect(root.invariants.violations).toHaveLength(1)
  })

  it('under the throw policy, check() rejects with every violation found', async () => {
    const { root, session, first, metas } = await toolRound('throw')
    root.llm.markLoopRequest({ ...first, model: 'other-model' }, metas[0])
    const error = await root.invariants.check().then(
      () => undefined,
      (reason: unknown) => reason,
    )
    expect(error).toBeInstanceOf(InvariantError)
    expect((error as InvariantError).violations).toEqual([
      mismatch(metas[0], [{ path: 'header.model', request: '"other-model"', log: '"test-model"', seq: seqOf(session, 'request/header') }]),
    ])
  })

  it('under the throw policy, what an event found eagerly is held for the next check()', async () => {
    const { root, model } = await toolRound('throw')
    const a = root.agents.get('a')!
    let marked: LlmRequest | undefined
    root.on('agent/post-step', (subject, turn, step) => {
      const session = subject.session
      marked = { ...model.requests.at(-1)!, model: 'other-model' }
      root.llm.markLoopRequest(marked, { sessionId: session.id, turn, step, lastSeq: requestSeq(session, turn, step), messageCount: marked.messages.length })
    })
    model.enqueue('again')
    a.followup('once more')
    await a.whenIdle()
    expect(root.invariants.violations).toEqual([])
    const error = await root.invariants.check().then(
      () => undefined,
      (reason: unknown) => reason as InvariantError,
    )
    expect(error?.violations.map((violation) => violation.message)).toEqual([
      expect.stringMatching(/^session "a", turn 2 step 1 .*: header\.model: request "other-model" ≠ log "test-model" \(seq \d+\)$/),
    ])
    expect(marked).toBeDefined()
  })
})

describe('dsh-agent-loop/invariant and merged projected types', () => {
  /** A compaction-like projector: a summary that replaces every earlier message. */
  const summarize = (event: { seq: number; data: { text: string } }) => ({
    messages: [createUserMessage(`summary: ${event.data.text}`, { id: MessageId(`summary-${event.seq}`) })],
    shadow: { from: 0, to: event.seq },
  })

  async function compacted(exposeProjector: boolean) {
    const harness = await toolRound()
    const { root } = harness
    root.sessions.projector('invariant-test/summary', summarize)
    if (!exposeProjector) {
      // Stands for a session store that does not expose registered projectors through typeInfo().
      const store = root.sessions as unknown as { typeInfo(type: string): unknown }
      const typeInfo = store.typeInfo.bind(store)
      store.typeInfo = (type: string) => {
        const info = typeInfo(type) as { projector?: unknown } | undefined
        if (!info?.projector) return info
        const { projector: _hidden, ...rest } = info
        return rest
      }
    }
    const a = root.agents.get('a')!
    await a.runMaintenance(async () => void a.session.append('invariant-test/summary', { text: 'they used ping' }))
    harness.model.enqueue({ toolCalls: [{ name: 'ping' }], answer: 'done again' })
    a.followup('go on')
    await a.whenIdle()
    return { ...harness, a }
  }

  it('with the projector out of reach, the session is reported not checkable once, naming the event', async () => {
    const { root, a } = await compacted(false)
    const session = a.session
    const summary = seqOf(session, 'invariant-test/summary')
    const lastSeq = requestSeq(session, 2, 1)
    const reason = 'invariant-test/summary has a projector that ctx.sessions does not expose (typeInfo(type).projector)'
    expect(root.invariants.violations).toEqual([
      {
        invariant: REQUEST_RECONSTRUCTION,
        message:
          `session "a", turn 2 step 1 (lastSeq ${lastSeq}, 2 messages): the messages of this and later requests cannot be rebuilt from the log: ` +
          `event ${summary}: ${reason}; their header and step are still checked`,
        details: {
          kind: 'not-checkable',
          sessionId: 'a',
          turn: 2,
          step: 1,
          lastSeq,
          messageCount: 2,
          event: { seq: summary, type: 'invariant-test/summary' },
          reason,
        },
      },
    ])
    expect(await root.invariants.check()).toEqual([])
  })

  it('with the projector exposed, it is replayed: the shadowed history checks out, and a tamper after it is found', async () => {
    const { root, a, model } = await compacted(true)
    const session = a.session
    expect(model.requests.at(-1)!.messages.map((message) => message.id)).toEqual([
      'summary-' + seqOf(session, 'invariant-test/summary'),
      expect.any(String),
      expect.any(String),
      expect.any(String),
    ])
    expect(root.invariants.violations).toEqual([])
    const last = model.requests.at(-1)!
    const lastMeta = meta(session, 2, 2, last)
    const tampered = { ...last, messages: [createUserMessage('summary: something else', { id: last.messages[0]!.id }), ...last.messages.slice(1)] }
    root.llm.markLoopRequest(tampered, lastMeta)
    expect(await root.invariants.check()).toEqual([
      mismatch(lastMeta, [
        {
          path: 'messages[0].content[0].text',
          request: '"summary: something else"',
          log: '"summary: they used ping"',
          seq: seqOf(session, 'invariant-test/summary'),
        },
      ]),
    ])
  })

  it('a projector that reads the log by type replays the same: typeAt shows it the log before its event', async () => {
    const { root, model } = await toolRound()
    const seen: string[] = []
    root.sessions.projector('invariant-test/note', (event, session) => {
      const line = `after ${session.typeAt(event.seq - 1)}, at ${String(session.typeAt(event.seq))}`
      seen.push(line)
      return { messages: [createUserMessage(line, { id: MessageId(`note-${event.seq}`) })] }
    })
    const a = root.agents.get('a')!
    await a.runMaintenance(async () => void a.session.append('invariant-test/note' as never, { text: 'x' } as never))
    model.enqueue({ answer: 'noted' })
    a.followup('go on')
    await a.whenIdle()
    const note = 'after turn/end, at undefined'
    expect(model.requests.at(-1)!.messages.map((message) => message.content[0])).toContainEqual({ type: 'text', text: note })
    expect(await root.invariants.check()).toEqual([])
    // Once as appended, once as the companion replayed it.
    expect(seen).toEqual([note, note])
  })

  it('a merged type no longer registered (and not ignorable) makes later requests not checkable', async () => {
    const { root, model } = await toolRound()
    const a = root.agents.get('a')!
    const unregister = root.sessions.projector('invariant-test/summary', summarize)
    await a.runMaintenance(async () => void a.session.append('invariant-test/summary', { text: 'gone' }))
    unregister()
    model.enqueue('after')
    a.followup('next')
    await a.whenIdle()
    expect(root.invariants.violations.map((violation) => (violation.details as { reason: string }).reason)).toEqual([
      'invariant-test/summary is no longer registered, so what it projected is unknown',
    ])
  })
})
