import { describe, expect, it } from 'vitest'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type { ContentBlock } from '@deepseek-ai/dsh-llm'
import type { AnySessionEvent } from '@deepseek-ai/dsh-session'
import { deferred, echo, spine, trace, transcript } from '@deepseek-ai/dsh-testkit'

/**
 * Bugs the property tests found, each reduced to a deterministic test.
 *
 * They share one trigger: a plugin that drives the agent from a synchronous
 * `session/event` listener (a UI, a policy, a budget) runs while the loop is
 * between appending an event and updating its own state. Each test names the
 * property and the reaction (`on(event, action)` in the counterexample) that
 * found it. Fixed in 506b94d unless marked `it.fails`.
 *
 * `it.fails` marks a bug that is still open; its seed replays with its key in
 * `FC_OPEN_BUGS` (see `OPEN_BUGS` in `commands.ts`). Flip it to `it` with the
 * fix, and remove its key from `OPEN_BUGS`.
 */

/** Runs `action` once, inside the publication of the first logged event of `type`. */
function onFirst(root: Awaited<ReturnType<typeof spine>>['root'], type: AnySessionEvent['type'], action: () => void): void {
  let armed = true
  root.on('session/event', (_session, event) => {
    if (!armed || event.type !== type) return
    armed = false
    action()
  })
}

function texts(messages: readonly { readonly content: readonly ContentBlock[] }[]): string[] {
  return messages.map((message) => message.content.map((block) => (block.type === 'text' ? block.text : block.type)).join(''))
}

describe('regressions found by the property tests', () => {
  // Found by "any program leaves a well-formed log…" with on(turn/start, cancel(…)).
  it('a cancel issued while turn/start is being published aborts that turn (R-CAN-2, R-CAN-3)', async () => {
    const { agent, root, model } = await spine({ model: { script: ['one'] } })
    const a = await agent()
    const requested: string[] = []
    root.on('agent/cancel-requested', (_agent, cause) => void requested.push(cause.kind))
    onFirst(root, 'turn/start', () => a.cancel({ kind: 'user' }))
    a.followup('hi')
    await a.whenIdle()
    expect(trace(a.session)).toEqual(['inbox/enqueue next-turn "hi"', 'inbox/dequeue', 'turn/start 1 prompt', 'turn/end 1 aborted'])
    expect(requested).toEqual(['user'])
    expect(model.calls).toBe(0)
  })

  // Found by "any program leaves a well-formed log…" with on(turn/start, inject()): it threw SessionError INVARIANT.
  it('an inject() while turn/start is being published lands in that turn instead of throwing (R-IN-7)', async () => {
    const { agent, root, model } = await spine({ model: { script: ['one'] } })
    const a = await agent()
    let thrown: unknown
    onFirst(root, 'turn/start', () => {
      try {
        a.inject('context')
      } catch (error) {
        thrown = error
      }
    })
    a.followup('hi')
    await a.whenIdle()
    expect(thrown).toBeUndefined()
    expect(model.requests.map((request) => transcript(request.messages))).toEqual([['user: context', 'user: hi']])
  })

  // Found by "any program leaves a well-formed log…" with on(inbox/dequeue, inject()): runTurn computed the turn
  // number before the claim, the claim's listener wrote a one-shot injection turn, and turn/start then failed.
  it('an inject() while a prompt is being claimed does not lose the prompt (R-LOOP-1)', async () => {
    const { agent, root, model } = await spine({ model: { script: ['one'] } })
    const a = await agent()
    onFirst(root, 'inbox/dequeue', () => a.inject('context'))
    a.followup('hi')
    await a.whenIdle()
    // Whether the injection gets a one-shot turn of its own or lands in the prompt's turn, the prompt is answered.
    const ends = a.session.events.flatMap((event) => (event.type === 'turn/end' ? [event.data.reason.kind] : []))
    expect(new Set(ends)).toEqual(new Set(['completed']))
    expect(model.requests.map((request) => transcript(request.messages))).toEqual([['user: context', 'user: hi']])
  })

  // Found by "dispose at any point…" with on(inbox/enqueue, followup(…)):
  // the inbox logs before it updates its column and announces, so a nested admission overtakes the outer one.
  it('an admission made while another enqueue is being published keeps the FIFO in log order (R-IN-1, durable inbox)', async () => {
    const { agent, root } = await spine()
    const a = await agent()
    const announced: string[] = []
    root.on('agent/inbox/enqueue', (_agent, message) => void announced.push(texts([message])[0]!))
    onFirst(root, 'inbox/enqueue', () => a.queue('second'))
    a.queue('first')
    const logged = a.session.events.flatMap((event) => (event.type === 'inbox/enqueue' ? texts([event.data.message]) : []))
    expect(logged).toEqual(['first', 'second'])
    // What resume would rebuild from the log, what the live inbox holds, and what listeners were told must agree.
    expect(texts(a.inbox.nextTurn)).toEqual(['first', 'second'])
    expect(announced).toEqual(['first', 'second'])
  })

  // Found by "dispose at any point…" with on(inbox/dequeue, followup(…)).
  it('an admission made while a claim is being published is announced after the claim, as logged (agent/inbox/*)', async () => {
    const { agent, root } = await spine({ model: { script: ['one', 'two'] } })
    const a = await agent()
    const announced: string[] = []
    root.on('agent/inbox/enqueue', (_agent, message) => void announced.push(`enqueue ${texts([message])[0]}`))
    root.on('agent/inbox/dequeue', (_agent, message) => void announced.push(`dequeue ${texts([message])[0]}`))
    onFirst(root, 'inbox/dequeue', () => a.queue('late'))
    a.followup('hi')
    await a.whenIdle()
    expect(announced.slice(0, 3)).toEqual(['enqueue hi', 'dequeue hi', 'enqueue late'])
  })

  // Found by "any program leaves a well-formed log…" with on(user/message, inject()) in a one-shot injection turn:
  // it tried to open a second one-shot turn inside the first.
  it('an inject() while a one-shot injection turn is being written is logged too (R-IN-7)', async () => {
    const { agent, root } = await spine()
    const a = await agent()
    let thrown: unknown
    onFirst(root, 'user/message', () => {
      try {
        a.inject('second')
      } catch (error) {
        thrown = error
      }
    })
    a.inject('first')
    await a.whenIdle()
    expect(thrown).toBeUndefined()
    const injected = a.session.events.flatMap((event) => (event.type === 'user/message' ? texts([event.data.message]) : []))
    expect(injected).toEqual(['first', 'second'])
  })

  // Found by "any program leaves a well-formed log…" with on(step/start, inject()): the step's state is set after
  // step/start is logged, so the injection was appended at once, ahead of the step's own batch.
  it('an inject() while step/start is being published is deferred to after the step results (R-IN-7)', async () => {
    const { agent, root } = await spine({ tools: [echo], model: { script: [{ toolCalls: [{ name: 'echo', arguments: { text: 'x' } }], answer: 'done' }] } })
    const a = await agent()
    onFirst(root, 'step/start', () => a.inject('context'))
    a.followup('go')
    await a.whenIdle()
    expect(trace(a.session).slice(3, 12)).toEqual([
      'step/start 1.1',
      'user/message "go"',
      'request/header initial scripted/test-model',
      'assistant/chunk ×4',
      'assistant/message "[tool-call]" tool-calls',
      'tool/call echo',
      'tool/result ok "echo: x"',
      'user/message "context"',
      'step/end 1.1',
    ])
  })

  // Found by "any program leaves a well-formed log…" with on(steering/message, cancel(user)): the checkpoint claims
  // from a snapshot of the steering FIFO and writes every snapshot item, including those the cancel discarded.
  it('steering discarded by a cancel during the steering checkpoint is not written (R-IN-5, R-CAN-2)', async () => {
    const { agent, root, model } = await spine({ model: { script: ['answer'] } })
    const a: Agent = await agent()
    const call = model.control()
    onFirst(root, 'steering/message', () => a.cancel({ kind: 'user' }))
    a.followup('go')
    await call.started
    a.steer('first')
    const second = a.steer('second')
    await call.release()
    await a.whenIdle()
    const written = a.session.events.flatMap((event) => (event.type === 'steering/message' ? [event.data.message.id] : []))
    expect(written).not.toContain(second)
    expect(trace(a.session).slice(-5)).toEqual(['inbox/dequeue', 'steering/message "first"', 'inbox/discard ×1', 'step/end 1.1', 'turn/end 1 aborted'])
  })

  // Found by "any program leaves a well-formed log…" with on(steering/message, inject()): at the steering
  // checkpoint injections are no longer deferred, so one made while the checkpoint writes a steering item's
  // separate context lands between that context and the steering request. Replay, with the generators of the commit
  // that added these lines:
  // FC_OPEN_BUGS="steering/message inject" FC_SEED=-904461363 FC_PATH="455:0:0:0:2:4:3:5:5" FC_REPLAY_PATH="W:B"
  // npx vitest run --project core/agent-loop tests/properties.test.ts -t "any program leaves a well-formed log, a consistent inbox and honest requests when the agent goes idle"
  it('an inject() during the steering checkpoint does not split a steering item from its context (R-IN-3)', async () => {
    const { agent, root, model } = await spine({ model: { script: ['answer', 'next'] } })
    const a = await agent()
    const call = model.control()
    onFirst(root, 'steering/message', () => a.inject('injected'))
    a.followup('go')
    await call.started
    a.steer({ content: 'steer', contexts: [{ label: 'note', content: [{ type: 'text', text: 'context' }] }] })
    await call.release()
    await a.whenIdle()
    const lines = trace(a.session)
    const context = lines.indexOf('steering/message "context"')
    expect(lines.slice(context, context + 2)).toEqual(['steering/message "context"', 'steering/message "steer"'])
    expect(lines).toContain('user/message "injected"')
  })
  // Found by "dispose inside tool rounds…" with on(agent/inbox/discard, cancel(user)) once reactions could be armed on
  // the agent's notifications: dispose's own discard ran the listener before dispose aborted the turn.
  it('a cancel from a listener of dispose\'s discard is not announced: the dispose is the turn\'s end (R-CAN-2, R-CAN-5)', async () => {
    const { agent, root, handles } = await spine({ model: { script: ['never said'] } })
    const a = await agent()
    const heard: string[] = []
    root.on('agent/cancel-requested', (_agent, cause) => void heard.push(`cancel-requested ${cause.kind}`))
    root.on('agent/inbox/discard', () => {
      heard.push('discard')
      a.cancel({ kind: 'user' })
    })
    const entered = deferred<void>()
    const held = deferred<void>()
    root.on('agent/pre-step', async (_agent, turn) => {
      if (turn !== 1) return
      entered.resolve()
      await held.promise
    })
    a.followup('first')
    a.followup('second')
    await entered.promise
    const disposal = handles[0]!.dispose()
    held.resolve()
    await disposal
    expect(heard).toEqual(['discard'])
    expect(trace(a.session)).toEqual([
      'inbox/enqueue next-turn "first"',
      'inbox/enqueue next-turn "second"',
      'inbox/dequeue',
      'turn/start 1 prompt',
      'inbox/discard ×1',
      'turn/end 1 aborted',
    ])
  })
  // Found by "cancels inside tool rounds…" with on(agent/cancel-requested, cancel(…)): the nested cancel announced
  // itself as a second effective cancel of the same turn.
  it('a cancel from a listener of agent/cancel-requested is not announced again: one turn, one cancel (R-CAN-2)', async () => {
    const { agent, root } = await spine({ model: { script: ['never said'] } })
    const a = await agent()
    const heard: string[] = []
    root.on('agent/cancel-requested', (_agent, cause) => {
      heard.push(`cancel-requested ${cause.kind}`)
      a.cancel({ kind: 'parent' })
    })
    const entered = deferred<void>()
    const held = deferred<void>()
    root.on('agent/pre-step', async (_agent, turn) => {
      if (turn !== 1) return
      entered.resolve()
      await held.promise
    })
    a.followup('first')
    a.followup('second')
    await entered.promise
    a.cancel({ kind: 'user' }, { keepInbox: true })
    held.resolve()
    await a.whenIdle()
    expect(heard).toEqual(['cancel-requested user'])
    // The first cancel's keepInbox stands: the queued item was kept, and the woken drain runs it next.
    expect(trace(a.session)).toEqual([
      'inbox/enqueue next-turn "first"',
      'inbox/enqueue next-turn "second"',
      'inbox/dequeue',
      'turn/start 1 prompt',
      'turn/end 1 aborted',
      'inbox/dequeue',
      'turn/start 2 prompt',
      'step/start 2.1',
      'user/message "second"',
      'request/header initial scripted/test-model',
      'assistant/chunk ×4',
      'assistant/message "never said" stop',
      'step/end 2.1',
      'turn/end 2 completed',
    ])
  })
})
