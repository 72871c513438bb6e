import { MemorySessionPersistence } from '@deepseek-ai/dsh-session'
import { deferred } from '@deepseek-ai/dsh-testkit'
import { defineTool } from '@deepseek-ai/dsh-tools'
import { afterEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { harness, seen, spec, textOf, work, type Harness } from './helpers'

let h: Harness | undefined
afterEach(async () => {
  await h?.dispose()
  h = undefined
})

describe("a task that ends while its owner's disposal drains (R-TSK-2)", () => {
  it('its outcome is not lost: the resumed owner reads what it produced, once, not that it was interrupted', async () => {
    const reached = deferred<void>()
    const release = deferred<void>()
    // A tool that finishes its work even when its call is cancelled: the owner's drain waits for it.
    const stubborn = defineTool({
      name: 'stubborn',
      description: 'Finishes what it started.',
      parameters: z.object({}),
      effect: 'read',
      async execute() {
        reached.resolve()
        await release.promise
        return 'finished'
      },
    })
    h = await harness({
      backend: new MemorySessionPersistence(),
      tools: [stubborn],
      respond: (request) => (textOf(request.messages.at(-1)!) === 'Work.' ? { toolCalls: [{ name: 'stubborn', arguments: {} }] } : 'ok'),
    })
    const owner = await h.agent()
    const w = work()
    h.root.tasks.start(spec(owner, w))
    owner.followup('Work.')
    await reached.promise
    const disposed = h.disposeAgent(owner)
    // The owner is draining (its turn cancelled, the tool still running) when the task completes.
    w.finish('the result')
    await h.root.tasks.get('task-1')?.result()
    release.resolve()
    await disposed

    const resumed = await h.resume()
    await resumed.whenIdle()
    resumed.followup('What came?')
    await resumed.whenIdle()
    expect(seen(resumed.session, 'task-1')).toBe(1)
    const texts = h.requestsOf(resumed).at(-1)!.messages.map(textOf)
    expect(texts.filter((text) => text.startsWith('[Background task task-1'))).toEqual(['[Background task task-1 completed] test: job\nthe result'])
    // A second resume delivers nothing more.
    await h.disposeAgent(resumed)
    const again = await h.resume()
    await again.whenIdle()
    expect(seen(again.session, 'task-1')).toBe(1)
    await h.expectClean()
  })
})
