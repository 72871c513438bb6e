import { describe, expect, it } from 'vitest'
import { spine, trace } from '@deepseek-ai/dsh-testkit'

describe('a cancel while the step is entered (R-CAN-2)', () => {
  it('from a listener of step/start: nothing of the request is assembled or prepared, and the step closes empty', async () => {
    const { agent, root, model } = await spine({ model: { script: ['never said'] } })
    const a = await agent()
    const assembled: number[] = []
    root.on('system-prompt/assemble', (_agent, _vars, next) => {
      assembled.push(a.session.events.length)
      return next()
    })
    root.on('session/event', (session, event) => {
      if (session === a.session && event.type === 'step/start') a.cancel({ kind: 'user' })
    })
    a.followup('go')
    await a.whenIdle()
    expect(assembled).toEqual([])
    expect(model.requests).toEqual([])
    expect(trace(a.session)).toEqual([
      'inbox/enqueue next-turn "go"',
      'inbox/dequeue',
      'turn/start 1 prompt',
      'step/start 1.1',
      'user/message "go"',
      'step/end 1.1',
      'turn/end 1 aborted',
    ])
  })
})
