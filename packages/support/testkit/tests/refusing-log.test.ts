import { describe, expect, it } from 'vitest'
import type { Agent } from '@deepseek-ai/dsh-agent'
import { SessionError } from '@deepseek-ai/dsh-session'
import { refusingLog } from '@deepseek-ai/dsh-testkit'

/** Just what `refusingLog` touches of an agent: its session's append, and the loop's lifecycle stage. */
function fakeAgent() {
  const appended: string[] = []
  const stages: string[] = []
  const agent = {
    session: { events: [] as unknown[], append: (type: string) => void appended.push(type) },
    lifecycle: { to: (stage: string) => void stages.push(stage) },
  }
  return { agent: agent as unknown as Agent, appended, stages }
}

describe('refusingLog', () => {
  it('refuses the appends the test picks, with the SessionError the log throws, and records every attempt', () => {
    const { agent, appended } = fakeAgent()
    const record = refusingLog(agent, (type) => type === 'tool/result')
    agent.session.append('turn/start' as never, {} as never)
    const refused = (() => {
      try {
        agent.session.append('tool/result' as never, {} as never)
      } catch (error) {
        return error
      }
    })()
    expect({ appended, attempts: record.attempts.map((a) => `${a.type} ${a.refused}`), runaway: record.runaway }).toEqual({
      appended: ['turn/start'],
      attempts: ['turn/start false', 'tool/result true'],
      runaway: false,
    })
    expect(refused).toBeInstanceOf(SessionError)
    expect(refused).toMatchObject({ code: 'INVARIANT', message: 'cannot append tool/result at seq 0: refused by the test' })
  })

  it('stops a runaway loop after the limit: everything is refused, the agent moves to disposing, runaway is set', () => {
    const { agent, appended, stages } = fakeAgent()
    const record = refusingLog(agent, () => false, 2)
    agent.session.append('a' as never, {} as never)
    agent.session.append('b' as never, {} as never)
    expect(() => agent.session.append('c' as never, {} as never)).toThrow('the test stopped a runaway loop after 2 appends')
    expect({ appended, stages, runaway: record.runaway }).toEqual({ appended: ['a', 'b'], stages: ['disposing'], runaway: true })
  })
})
