import { existsSync, readFileSync } from 'node:fs'
import { describe, expect, it, vi } from 'vitest'
import type { AnySessionEvent } from '@deepseek-ai/dsh-session'
import { addTextTurn, logBuilder, mount, sid, tempDir } from './helpers'

const text = (events: readonly AnySessionEvent[]) => events.map((event) => JSON.stringify(event) + '\n').join('')

function chunks(from: number, count: number): AnySessionEvent[] {
  return Array.from({ length: count }, (_, i) => ({
    type: 'assistant/chunk',
    seq: from + i,
    time: 5,
    data: { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: `t${i}` } },
  })) as AnySessionEvent[]
}

describe('write-behind', () => {
  it('keeps appended events in memory until flush, which writes them all', async () => {
    const dir = tempDir()
    const { backend } = await mount(dir, 60_000)
    const log = logBuilder()
    addTextTurn(log, 1)
    const file = backend.fileOf(sid('s'))

    await backend.append(sid('s'), log.events.slice(0, 4))
    expect(existsSync(file)).toBe(false)
    await backend.flush(sid('s'))
    expect(readFileSync(file, 'utf8')).toBe(text(log.events.slice(0, 4)))

    await backend.append(sid('s'), log.events.slice(4))
    expect(readFileSync(file, 'utf8')).toBe(text(log.events.slice(0, 4)))
    await backend.flush(sid('s'))
    expect(readFileSync(file, 'utf8')).toBe(text(log.events))
  })

  it('writes on the timer without a flush', async () => {
    const dir = tempDir()
    const { backend } = await mount(dir, 5)
    const log = logBuilder()
    addTextTurn(log, 1)
    await backend.append(sid('s'), log.events)
    await vi.waitFor(() => expect(readFileSync(backend.fileOf(sid('s')), 'utf8')).toBe(text(log.events)), { timeout: 20_000 })
  })

  it('writes a full batch at once instead of waiting for the timer', async () => {
    const dir = tempDir()
    const { backend } = await mount(dir, 60_000)
    const events = [...logBuilder().events, ...chunks(1, 5000)]
    await backend.append(sid('s'), events)
    // More than one batch (4096 lines) is queued: the writer drains it without a flush and without the (long) timer.
    await vi.waitFor(() => expect(readFileSync(backend.fileOf(sid('s')), 'utf8')).toBe(text(events)), { timeout: 20_000 })
  })

  it('a flush covers what was appended before it, also while later appends keep coming', async () => {
    const dir = tempDir()
    const { backend } = await mount(dir, 60_000)
    const first = [...logBuilder().events, ...chunks(1, 9000)]
    await backend.append(sid('s'), first)
    const flushed = backend.flush(sid('s'))
    let next = first.length
    // Appends that keep arriving while the flush is in progress do not hold it back.
    const appending = (async () => {
      for (let i = 0; i < 20; i++) {
        await backend.append(sid('s'), chunks(next, 1000))
        next += 1000
        await new Promise((resolve) => setImmediate(resolve))
      }
    })()
    await flushed
    expect(readFileSync(backend.fileOf(sid('s')), 'utf8').startsWith(text(first))).toBe(true)
    await appending
    await backend.flush(sid('s'))
    expect(readFileSync(backend.fileOf(sid('s')), 'utf8').split('\n')).toHaveLength(next + 1)
  })

  it('flush of an id with nothing pending resolves', async () => {
    const { backend } = await mount(tempDir())
    await expect(backend.flush(sid('idle'))).resolves.toBeUndefined()
  })
})
