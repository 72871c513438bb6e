// Cancelling at awkward moments: while agent/step-result is pending, during the claim, and from a
// listener of the closing turn's requeue. The turn still ends aborted with a valid log.
import { describe, expect, it } from 'vitest'
import { spine, trace } from '@deepseek-ai/dsh-testkit'

const noChunks = (lines: string[]) => lines.filter((line) => !line.startsWith('assistant/chunk'))

describe('cancel at awkward moments (R-CAN-1…4)', () => {
  it('a cancel while agent/step-result is pending keeps the answer in an interrupted anchor', async () => {
    const { agent, root } = await spine({ model: { script: ['the whole answer'] } })
    const a = await agent()
    root.on('agent/step-result', async (_a, _t, _s, _message, signal) => {
      a.cancel({ kind: 'user' })
      throw signal.reason
    })
    a.followup('go')
    await a.whenIdle()
    expect(noChunks(trace(a.session)).slice(-3)).toEqual(['assistant/message "the whole answer" aborted interrupted', 'step/end 1.1', 'turn/end 1 aborted'])
  })

  it('a cancel during the claim means no prompt policy runs', async () => {
    const { agent, root } = await spine()
    const a = await agent()
    let policies = 0
    root.on('agent/prompt-submit', async (_a, _c, _s, _signal, next) => {
      policies++
      return next()
    })
    root.on('session/event', (_s, event) => void (event.type === 'inbox/dequeue' && a.cancel({ kind: 'user' })))
    a.followup('go')
    await a.whenIdle()
    expect(policies).toBe(0)
    expect(trace(a.session).at(-1)).toBe('turn/end 1 aborted')
  })

  it('a cancel from a listener of the closing turn\'s requeue still ends it aborted', async () => {
    const { agent, root } = await spine({ model: { script: ['x', 'y'] } })
    const a = await agent()
    root.on('agent/prompt-submit', async (_a, content, _s, _signal, next) => {
      if ((content[0] as { text: string }).text !== 'first') return next()
      a.steer('leftover')
      return { kind: 'block', reason: 'no' }
    })
    root.on('session/event', (_s, event) => void (event.type === 'inbox/requeue' && a.cancel({ kind: 'user' }, { keepInbox: true })))
    a.followup('first')
    await a.whenIdle()
    expect(trace(a.session).filter((line) => line.startsWith('turn/end'))[0]).toBe('turn/end 1 aborted')
  })
})
