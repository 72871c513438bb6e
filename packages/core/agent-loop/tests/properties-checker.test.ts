import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { AnySessionEvent, Session } from '@deepseek-ai/dsh-session'
import { asHeardProblems } from './property/as-heard'
import { settle, drainScheduler } from './property/driver'
import { checkWorld, project, requestProblems } from './property/invariants'
import { buildWorld, type World } from './property/world'

/**
 * The property tests are only as good as their checker: these tests run one
 * known program, confirm the checker accepts its log, then tamper with a copy
 * of the log (or the observations) the way a loop bug would, and require the
 * checker to name exactly that violation.
 */
async function tooledRun(options: { injectOnToolCall?: boolean } = {}): Promise<World> {
  const s = fc.sample(fc.scheduler(), { seed: 7, numRuns: 1 })[0]!
  const world = await buildWorld(s, {
    replies: [{ kind: 'tools', text: true, calls: ['ok', 'fail', 'exclusive'] }, { kind: 'text', words: 2, reasoning: false }],
    maxParallelToolCalls: 10,
    retries: 0,
  })
  if (options.injectOnToolCall) {
    // An injection made inside step 1.1's batch: deferred to after its last result.
    world.reactions.push({
      on: 'tool/call',
      action: () => {
        const logLength = world.session.events.length
        const id = world.agent.inject('note')
        world.admissions.push({ kind: 'inject', id, text: 'note', shape: 'plain', logLength, where: 'in-step', turn: 1, step: 1 })
      },
    })
  }
  const id = world.agent.followup('use the tools')
  world.admissions.push({ kind: 'followup', id, text: 'use the tools', shape: 'plain', logLength: 1, where: 'idle', turn: undefined, step: undefined })
  await settle(s, world.agent.whenIdle(), 'whenIdle()')
  await drainScheduler(s)
  return world
}

/** The world as seen through a tampered copy of its log. */
function withEvents(world: World, edit: (events: AnySessionEvent[]) => AnySessionEvent[]): World {
  const events = edit([...(world.session.events as AnySessionEvent[])])
  const session = { ...world.session, events, deriveMessages: () => project(events, events.length) } as unknown as Session
  return { ...world, session }
}

function indexOf(events: readonly AnySessionEvent[], type: string, nth = 0): number {
  const found = events.map((event, i) => (event.type === type ? i : -1)).filter((i) => i >= 0)
  return found[nth]!
}

/** Blanks out event `index` (a log-only `todo/write` takes its place), so every other seq stays put. */
function blank(events: AnySessionEvent[], index: number): AnySessionEvent[] {
  events[index] = { ...events[index]!, type: 'todo/write', data: { todos: [] } } as AnySessionEvent
  return events
}

describe('the property checker', () => {
  it('accepts the log of a sound run', async () => {
    const world = await tooledRun()
    expect(world.session.events.map((event) => event.type).filter((type) => type !== 'assistant/chunk')).toEqual([
      'session/meta',
      'inbox/enqueue',
      'inbox/dequeue',
      'turn/start',
      'step/start',
      'user/message',
      'request/header',
      'assistant/message',
      'tool/call',
      'tool/call',
      'tool/result',
      'tool/result',
      'tool/call',
      'tool/result',
      'user/message',
      'step/end',
      'step/start',
      'assistant/message',
      'step/end',
      'turn/end',
    ])
    expect(checkWorld(world, 'idle')).toEqual([])
  })

  it('reports a tool call without its result, in the step and in the history', async () => {
    const world = await tooledRun()
    const tampered = withEvents(world, (events) => blank(events, indexOf(events, 'tool/result', 1)))
    expect(checkWorld(tampered, 'idle')).toEqual([
      expect.stringMatching(/step\/end 1\.1: tool\/result ids \["call_0_0","call_0_2"\] ≠ the message's calls \["call_0_0","call_0_1","call_0_2"\]$/),
      "derived history: message 1's tool call call_0_1 is not answered by message 3",
      "derived history: message 1's tool call call_0_2 is not answered by message 4",
      expect.stringMatching(/^model call #1 \(step 1\.2, log length \d+\): the request's messages differ from the log's projection/),
    ])
  })

  it('reports results out of model order', async () => {
    const world = await tooledRun()
    const tampered = withEvents(world, (events) => {
      const first = indexOf(events, 'tool/result', 0)
      const second = indexOf(events, 'tool/result', 1)
      const [a, b] = [events[first]!, events[second]!]
      events[first] = { ...b, seq: a.seq } as AnySessionEvent
      events[second] = { ...a, seq: b.seq } as AnySessionEvent
      return events
    })
    expect(checkWorld(tampered, 'idle')).toEqual([
      expect.stringMatching(/tool\/result ids \["call_0_1","call_0_0","call_0_2"\] ≠ the message's calls \["call_0_0","call_0_1","call_0_2"\]$/),
      "derived history: message 1's tool call call_0_0 is not answered by message 2",
      "derived history: message 1's tool call call_0_1 is not answered by message 3",
      expect.stringMatching(/^model call #1 .*: the request's messages differ from the log's projection/),
    ])
  })

  it('reports a gap in seq, a turn left open and a wrong end reason', async () => {
    const world = await tooledRun()
    const gap = withEvents(world, (events) => {
      const header = indexOf(events, 'request/header')
      events[header] = { ...events[header]!, seq: 99 } as AnySessionEvent
      return events
    })
    expect(checkWorld(gap, 'idle')).toEqual([`event #${indexOf(world.session.events, 'request/header')} (request/header) has seq 99`])

    const open = withEvents(world, (events) => events.slice(0, -1))
    expect(checkWorld(open, 'idle')).toEqual(expect.arrayContaining(['turn 1 is still open at quiescence']))

    const aborted = withEvents(world, (events) => {
      const end = events.at(-1) as AnySessionEvent & { type: 'turn/end' }
      events[events.length - 1] = { ...end, data: { ...end.data, reason: { kind: 'aborted' } } }
      return events
    })
    expect(checkWorld(aborted, 'idle')).toEqual(['turn 1 ended aborted, expected completed'])
  })

  it('reports an inbox transition that was not announced, and a claimed prompt that was never logged', async () => {
    const world = await tooledRun()
    const tampered = withEvents(world, (events) => blank(events, indexOf(events, 'user/message', 0)))
    expect(checkWorld(tampered, 'idle')).toEqual([
      expect.stringMatching(/^followup\(\) msg_\S+ was claimed at #2 but never logged as a message$/),
      'step 1.1 of a prompt turn enters todo/write first, expected user/message',
      "turn 1's claimed item is not entered by its first step",
      expect.stringMatching(/^model call #0 .*: the request's messages differ from the log's projection/),
      expect.stringMatching(/^model call #1 .*: the request's messages differ from the log's projection/),
    ])

    const silent = { ...world, inboxNotices: world.inboxNotices.slice(1) }
    expect(checkWorld(silent, 'idle')).toEqual([expect.stringMatching(/^the agent\/inbox\/\* notifications do not match the log/)])
  })

  it('reports an injection logged inside the batch it should have waited for', async () => {
    const world = await tooledRun({ injectOnToolCall: true })
    expect(checkWorld(world, 'idle')).toEqual([])
    const tampered = withEvents(world, (events) => {
      // Swap the deferred injection with the step's last tool result, keeping every seq in place.
      const note = events.findIndex((event) => event.type === 'user/message' && event.data.message.content[0]?.type === 'text' && event.data.message.content[0].text === 'note')
      const result = indexOf(events, 'tool/result', 2)
      const [a, b] = [events[result]!, events[note]!]
      events[result] = { ...b, seq: a.seq } as AnySessionEvent
      events[note] = { ...a, seq: b.seq } as AnySessionEvent
      return events
    })
    expect(checkWorld(tampered, 'idle')).toEqual([
      expect.stringMatching(/^inject\(plain\) "note" at #\d+: injected inside step 1\.1, but not after its last tool result/),
      "derived history: message 1's tool call call_0_2 is not answered by message 4",
      'derived history: message 6 is a tool result without its call right before it',
      expect.stringMatching(/^model call #1 .*: the request's messages differ from the log's projection/),
    ])
  })

  it('reports a header that is not the first one of its kind, and a turn whose checkpoint flush never ran', async () => {
    const world = await tooledRun()
    const header = withEvents(world, (events) => {
      const at = indexOf(events, 'request/header')
      const event = events[at] as AnySessionEvent & { type: 'request/header' }
      events[at] = { ...event, data: { ...event.data, reason: 'change' } }
      return events
    })
    expect(checkWorld(header, 'idle')).toEqual([expect.stringMatching(/^#\d+ request\/header has reason change, expected initial$/)])

    const unflushed = { ...world, flushes: [] }
    expect(checkWorld(unflushed, 'idle')).toEqual([expect.stringMatching(/^#\d+ turn\/end 1 was not followed by a checkpoint flush$/)])
  })

  it('reports activity after dispose resolved', async () => {
    const world = await tooledRun()
    const late: World = {
      ...world,
      disposeSettled: true,
      logLengthAtDispose: world.session.events.length - 1,
      agentEvents: [...world.agentEvents, { name: 'agent/status', detail: 'running', afterDispose: true }],
    }
    expect(checkWorld(late, 'disposed')).toEqual([
      'agent/status running was dispatched after dispose() resolved',
      `the log grew after dispose() resolved (${world.session.events.length - 1} → ${world.session.events.length} events)`,
    ])
  })

  it('accepts a log that reads back as heard and loads back; reports a chunk read back other than heard, an unfrozen one, and a log that does not resume', async () => {
    const world = await tooledRun()
    expect(asHeardProblems(world)).toEqual([])
    const chunk = indexOf(world.session.events, 'assistant/chunk', 1)
    const heard = world.heard.map((entry) => (entry.seq === chunk ? { ...entry, json: '{}', frozen: false } : entry))
    expect(asHeardProblems({ ...world, heard })).toEqual([
      `#${chunk} reads back as ${JSON.stringify(world.session.events[chunk])}, but its listeners received {}`,
      `#${chunk} was not frozen when its listeners received it`,
    ])
    // The tool results swapped: a log no session accepts (tool/results follow model order).
    const first = indexOf(world.session.events, 'tool/result')
    const swapped = withEvents(world, (events) => {
      const [a, b] = [events[first]!, events[first + 1]!]
      events[first] = { ...b, seq: a.seq } as AnySessionEvent
      events[first + 1] = Object.freeze({ ...a, seq: b.seq }) as AnySessionEvent
      return events
    })
    expect(asHeardProblems({ ...swapped, heard: [] })).toEqual([
      `#${first} (tool/result) is not frozen when read back`,
      expect.stringMatching(/^the loaded log does not resume: .*tool\/results follow model order/),
    ])
  })

  it('knows a valid provider request from an invalid one', () => {
    const call = { type: 'tool-call', id: 'c1', name: 'ok', arguments: '{}' } as const
    const result = (id: string) => ({ id: `r-${id}`, role: 'user', content: [{ type: 'tool-result', toolCallId: id, content: [] }] })
    const assistant = (content: unknown[]) => ({ id: 'a', role: 'assistant', content })
    const user = { id: 'u', role: 'user', content: [{ type: 'text', text: 'hi' }] }
    const check = (messages: unknown[]) => requestProblems(messages as never)
    expect(check([user, assistant([call]), result('c1'), user])).toEqual([])
    expect(check([user, assistant([])])).toEqual(['message 1 is an assistant message with no content'])
    expect(check([user, assistant([call]), user, result('c1')])).toEqual([
      "message 1's tool call c1 is not answered by message 2",
      'message 3 is a tool result without its call right before it',
    ])
  })
})
