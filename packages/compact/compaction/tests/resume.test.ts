import type { LlmRequest } from '@deepseek-ai/dsh-llm'
import { trace } from '@deepseek-ai/dsh-testkit'
import { describe, expect, it } from 'vitest'
import { chars, compactionEvents, harness, isSummaryRequest, turn } from './helpers'

/** The bytes a provider adapter is handed: system, tools, then each message as JSON. */
function requestBytes(request: LlmRequest): string {
  let bytes = JSON.stringify({ system: request.system ?? '', tools: request.tools ?? [] })
  for (const message of request.messages) bytes += `\n${JSON.stringify(message)}`
  return bytes
}

const WINDOW = { window: 10_000, maxOutput: 2_000 }
const answer = () => ({ text: chars(1_000, 'a'), usage: false as const })

describe('resume after compaction (R-CMP-5, R-CMP-6)', () => {
  it('a restarted process rebuilds the compacted history and the next request byte for byte', async () => {
    const first = await harness({ ...WINDOW, respond: answer })
    const agent = await first.agent()
    for (const size of [1_000, 1_000, 1_000, 400, 10]) await turn(agent, chars(size, 'p'))
    expect(compactionEvents(agent.session).map((event) => event.type)).toEqual(['compaction/start', 'compaction/summary'])
    // Requests after the compaction extend each other, as before it.
    await turn(agent, 'six')
    const requests = first.agentRequests
    expect(requestBytes(requests[5]!).startsWith(requestBytes(requests[4]!))).toBe(true)
    expect(requestBytes(requests[4]!).startsWith(requestBytes(requests[3]!))).toBe(false)
    const history = JSON.stringify(agent.session.deriveMessages())
    await first.expectClean()
    await first.dispose()

    // A new app over what was flushed (memory persistence reopened, as after a restart).
    const second = await harness({ ...WINDOW, respond: answer, backend: first.backend.reopen() })
    const resumed = await second.resume()
    expect(JSON.stringify(resumed.session.deriveMessages())).toBe(history)
    await turn(resumed, 'seven')
    // The first request after the resume extends the last one before it, byte for byte.
    expect(requestBytes(second.agentRequests[0]!).startsWith(requestBytes(requests.at(-1)!))).toBe(true)
    expect(second.root.compaction.status(resumed)).toMatchObject({ compactions: 1, last: { kind: 'summary', reason: 'pressure' } })
    await second.expectClean()
    await second.dispose()
  })

  it('a process without dsh-compaction refuses to resume a compacted session, saying which event type it does not know', async () => {
    const first = await harness({ ...WINDOW, respond: answer })
    const agent = await first.agent()
    for (const size of [1_000, 1_000, 1_000, 400, 10]) await turn(agent, chars(size, 'p'))
    await first.dispose()

    const bare = await harness({ ...WINDOW, respond: answer, backend: first.backend.reopen(), compaction: false })
    const error = await bare.resume().catch((reason: unknown) => reason)
    expect(error).toMatchObject({ code: 'UNKNOWN_TYPE' })
    expect((error as Error).message).toMatch(/compaction\/summary is not a known event type: register it with ctx\.sessions\.registerType\("compaction\/summary", …\)/)
    await bare.dispose()
  })

  it('a crash between compaction/start and the summary: the resume says so in the log, shadows nothing, and compacts again later', async () => {
    const first = await harness({ ...WINDOW, respond: answer })
    const agent = await first.agent()
    for (const size of [1_000, 1_000, 1_000, 400]) await turn(agent, chars(size, 'p'))
    const history = JSON.stringify(agent.session.deriveMessages())
    const held = first.model.control()
    agent.followup('go on')
    expect(isSummaryRequest(await held.started)).toBe(true)
    // The process dies here: nothing more is flushed (the first app is abandoned, not disposed).
    const second = await harness({ ...WINDOW, respond: answer, backend: first.backend.reopen() })
    const resumed = await second.resume()
    expect(trace(resumed.session).slice(-4)).toEqual(['turn/start 5 prompt', 'compaction/start', 'turn/end 5 interrupted', 'compaction/failed'])
    expect(compactionEvents(resumed.session).at(-1)!.data).toEqual({
      code: 'INTERRUPTED',
      message: `the compaction started at seq ${compactionEvents(resumed.session)[0]!.seq} (pressure) did not finish: the session stopped before its summary was written; nothing was shadowed`,
    })
    expect(JSON.stringify(resumed.session.deriveMessages())).toBe(history)

    // The pressure is still there: the next turn compacts before its request.
    await turn(resumed, 'again')
    expect(compactionEvents(resumed.session).map((event) => event.type)).toEqual(['compaction/start', 'compaction/failed', 'compaction/start', 'compaction/summary'])
    await second.expectClean()
    await second.dispose()
  })
})
