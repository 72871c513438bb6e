import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import type { Context } from 'cordis'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { addCrashedToolTurn, addTextTurn, logBuilder, mount, sid, tempDir } from './helpers'
import { callsAt, clearFaults, holdCall } from './fs-faults'

vi.mock('node:fs/promises', async (original) => (await import('./fs-faults')).faultyFsPromises(await original()))

afterEach(() => clearFaults())

/** A session file whose last turn a crash left open (a load appends repairs), in a fresh directory. */
function crashedSession(id = 's') {
  const dir = tempDir()
  const log = logBuilder()
  addTextTurn(log, 1)
  addCrashedToolTurn(log, 2)
  const file = join(dir, `${id}.jsonl`)
  writeFileSync(file, log.events.map((event) => JSON.stringify(event) + '\n').join(''))
  return { dir, file, lock: `${file}.lock`, events: log.events }
}

/** The strings the backend logs as warnings from now on. */
function collectWarnings(root: Context): string[] {
  const logged: string[] = []
  root.logger.exporter({
    export: (message) => {
      const [first] = message.args
      if (message.type === 'warn' && message.name === 'session-jsonl' && typeof first === 'string') logged.push(first)
    },
  })
  return logged
}

/** A promise that settles after the microtasks and I/O callbacks queued now have run. */
const turnOfTheLoop = () => new Promise<void>((resolve) => setImmediate(resolve))

describe('load(id, { signal }): an abandoned load lets go at once (issue 16)', () => {
  it('an aborted signal rejects with its reason before anything is locked or read', async () => {
    const { dir, file, lock } = crashedSession()
    const { backend } = await mount(dir)
    const before = readFileSync(file)
    const reason = new Error('owner unloaded')
    await expect(backend.load(sid('s'), { signal: AbortSignal.abort(reason) })).rejects.toBe(reason)
    expect(existsSync(lock)).toBe(false)
    expect(readFileSync(file)).toEqual(before)
  })

  it('abandoned while reading: rejects at once, releases the lock and the queue while the read is still under way, and never writes', async () => {
    const { dir, file, lock, events } = crashedSession()
    const { backend } = await mount(dir)
    const read = holdCall(file, 'read')
    const controller = new AbortController()
    const abandoned = backend.load(sid('s'), { signal: controller.signal })
    await read.reached
    expect(existsSync(lock)).toBe(true)

    const reason = new Error('owner unloaded')
    controller.abort(reason)
    await expect(abandoned).rejects.toBe(reason)
    // Released in the abort itself, while the abandoned read still waits.
    expect(existsSync(lock)).toBe(false)
    const next = await backend.load(sid('s'))
    expect(next.events.slice(0, events.length)).toEqual(events)
    expect(next.repairs.map((repair) => repair.type)).toEqual(['tool/call', 'tool/result', 'step/end', 'turn/end'])
    const repaired = readFileSync(file)
    const writes = callsAt(file).writes

    // The abandoned read finishes now: the load stops there, writing nothing (no second repair).
    read.release()
    await read.finished
    await turnOfTheLoop()
    expect(readFileSync(file)).toEqual(repaired)
    expect(callsAt(file).writes).toBe(writes)
    expect(existsSync(lock)).toBe(false)
  })

  it('abandoned while waiting for its turn: rejects at once and never runs; the queue moves on', async () => {
    const { dir, file } = crashedSession()
    const { backend } = await mount(dir)
    const read = holdCall(file, 'read')
    const first = backend.load(sid('s'))
    await read.reached
    const controller = new AbortController()
    const waiting = backend.load(sid('s'), { signal: controller.signal })
    const after = backend.load(sid('s'))
    controller.abort(new Error('gave up'))
    await expect(waiting).rejects.toThrow('gave up')
    read.release()
    const loaded = await first
    expect(loaded.repairs).toHaveLength(4)
    // The load queued after the abandoned one runs once the first is done, and finds the log repaired.
    const again = await after
    expect(again.repairs).toEqual([])
    expect(again.events).toEqual(loaded.events)
  })

  it('abandoned during its repair write: rejects at once; the write completes, then the lock goes', async () => {
    const { dir, file, lock, events } = crashedSession()
    const { backend } = await mount(dir)
    const write = holdCall(file, 'write')
    const controller = new AbortController()
    const abandoned = backend.load(sid('s'), { signal: controller.signal })
    await write.reached
    controller.abort(new Error('owner unloaded'))
    await expect(abandoned).rejects.toThrow('owner unloaded')
    // A write is under way: the lock stays until it is done, so nobody else touches the file meanwhile.
    expect(existsSync(lock)).toBe(true)
    write.release()
    await vi.waitFor(() => expect(existsSync(lock)).toBe(false), { timeout: 20_000, interval: 5 })
    // The repairs it was writing are whole on disk: the next load finds nothing to repair.
    const next = await backend.load(sid('s'))
    expect(next.repairs).toEqual([])
    expect(next.events.slice(0, events.length)).toEqual(events)
    expect(next.events.map((event) => event.type).slice(events.length)).toEqual(['tool/call', 'tool/result', 'step/end', 'turn/end'])
  })

  it('abandoned after it cut a torn tail and appended repairs: the cut and the repairs, which no caller receives, are logged', async () => {
    const { dir, file, events } = crashedSession()
    const tail = '{"type":"tool/call","seq":'
    writeFileSync(file, readFileSync(file, 'utf8') + tail)
    const { root, backend } = await mount(dir)
    const logged = collectWarnings(root)
    const write = holdCall(file, 'write')
    const controller = new AbortController()
    const abandoned = backend.load(sid('s'), { signal: controller.signal })
    await write.reached
    controller.abort(new Error('owner unloaded'))
    await expect(abandoned).rejects.toThrow('owner unloaded')
    write.release()
    await vi.waitFor(() => expect(logged).toHaveLength(2), { timeout: 20_000, interval: 5 })
    const [sidecar] = readdirSync(dir).filter((name) => name.includes('.torn-'))
    expect(logged).toEqual([
      expect.stringMatching(new RegExp(`^Dropped a torn last line \\(line ${events.length + 1}, ${tail.length} bytes without a final newline\\) of ${file}: .*${sidecar}.* The load that cut it was abandoned, so this is the only report of the cut\\.$`)),
      `Appended 4 crash repairs (seq ${events.length} to ${events.length + 3}: tool/call, tool/result, step/end, turn/end) to ${file} for a load that was abandoned; the next load of the session starts from them.`,
    ])
    // Nothing reports them later: the file is clean and repaired.
    const next = await backend.load(sid('s'))
    expect([next.warnings, next.repairs]).toEqual([[], []])
  })

  it('a load that fails after it cut a torn tail (a damaged record the repair reads) logs the cut', async () => {
    const { dir, file, events } = crashedSession()
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n')
    const message = events.findLastIndex((event) => event.type === 'assistant/message')
    lines[message] = JSON.stringify({ ...events[message], data: {} })
    writeFileSync(file, lines.join('\n') + '\n{"type":"tool/call","seq":')
    const { root, backend } = await mount(dir)
    const logged = collectWarnings(root)
    const error = await backend.load(sid('s')).catch((failure: unknown) => failure)
    expect(error).toMatchObject({ code: 'CORRUPT_SESSION', line: message + 1 })
    expect(logged).toEqual([expect.stringMatching(/^Dropped a torn last line .* The load that cut it failed, so this is the only report of the cut\.$/)])
  })
})
