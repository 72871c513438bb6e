import { appendFileSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CallId, MessageId } from '@deepseek-ai/dsh-llm'
import type { AnySessionEvent } from '@deepseek-ai/dsh-session'
import { JsonlPersistenceError } from '@deepseek-ai/dsh-session-jsonl'
import { addCrashedToolTurn, addTextTurn, logBuilder, mount, sid, tempDir } from './helpers'

/** Writes a session file by hand, one JSON line per event. */
function writeLog(dir: string, id: string, events: readonly object[], tail = ''): string {
  mkdirSync(dir, { recursive: true })
  const file = join(dir, `${id}.jsonl`)
  writeFileSync(file, events.map((event) => JSON.stringify(event) + '\n').join('') + tail)
  return file
}

function closedLog() {
  const log = logBuilder()
  addTextTurn(log, 1)
  addTextTurn(log, 2)
  return log.events
}

async function rejection(promise: Promise<unknown>): Promise<JsonlPersistenceError> {
  try {
    await promise
  } catch (error) {
    expect(error).toBeInstanceOf(JsonlPersistenceError)
    return error as JsonlPersistenceError
  }
  throw new Error('expected a rejection')
}

describe('load: round trip', () => {
  it('returns exactly the appended events, with no repairs or warnings for a closed log', async () => {
    const dir = tempDir()
    const events = closedLog()
    const { backend } = await mount(dir)
    await backend.append(sid('s'), events)
    await backend.flush(sid('s'))
    expect(await backend.load(sid('s'))).toEqual({ id: 's', events, repairs: [], warnings: [] })
  })

  it('rejects a missing id with SESSION_NOT_FOUND', async () => {
    const { backend } = await mount(tempDir())
    const error = await rejection(backend.load(sid('nope')))
    expect(error.code).toBe('SESSION_NOT_FOUND')
  })

  it('treats a file without one complete line as not found (its writer died before the first flush)', async () => {
    const dir = tempDir()
    writeLog(dir, 's', [], '{"type":"session/me')
    const { backend } = await mount(dir)
    expect((await rejection(backend.load(sid('s')))).code).toBe('SESSION_NOT_FOUND')
    expect(await backend.exists(sid('s'))).toBe(false)
  })
})

/** The sidecar files next to `file` (`<file>.torn-…`), by name. */
const sidecars = (dir: string) => readdirSync(dir).filter((name) => name.includes('.jsonl.torn-')).sort()

describe('load: torn last line (R-PER-2)', () => {
  it('cuts a last line without newline into a sidecar, reports it, and truncates it so later appends are clean', async () => {
    const dir = tempDir()
    const events = closedLog()
    const tail = '{"type":"turn/start","seq":15,"ti'
    const file = writeLog(dir, 's', events, tail)
    const { backend } = await mount(dir)

    const loaded = await backend.load(sid('s'))
    expect(loaded.events).toEqual(events)
    expect(loaded.repairs).toEqual([])
    const [sidecar] = sidecars(dir)
    expect(sidecar).toMatch(/^s\.jsonl\.torn-\d+$/)
    expect(loaded.warnings).toEqual([
      {
        code: 'TORN_TAIL',
        message: `Dropped a torn last line (line 16, 33 bytes without a final newline) of ${file}: its writer stopped mid-write, after its last flush. The bytes were copied to ${join(dir, sidecar!)}; the file now ends at the last complete event.`,
        file,
        line: 16,
        sidecar: join(dir, sidecar!),
      },
    ])
    // The cut bytes are kept, exactly; the log file ends at the last complete event.
    expect(readFileSync(join(dir, sidecar!), 'utf8')).toBe(tail)
    expect(readFileSync(file, 'utf8')).toBe(events.map((event) => JSON.stringify(event) + '\n').join(''))

    const next = logBuilder()
    addTextTurn(next, 3)
    const more = next.events.slice(1).map((event, i) => ({ ...event, seq: events.length + i })) as AnySessionEvent[]
    await backend.append(sid('s'), more)
    await backend.release(sid('s'))
    expect(await backend.load(sid('s'))).toEqual({ id: 's', events: [...events, ...more], repairs: [], warnings: [] })
  })

  it('cuts a zero-filled tail without newline (what a power cut can leave) like any torn tail', async () => {
    const dir = tempDir()
    const events = closedLog()
    writeLog(dir, 's', events, '\0'.repeat(4096))
    const { backend } = await mount(dir)
    const loaded = await backend.load(sid('s'))
    expect(loaded.events).toEqual(events)
    expect(loaded.warnings.map(({ code, line }) => ({ code, line }))).toEqual([{ code: 'TORN_TAIL', line: 16 }])
    expect(readFileSync(join(dir, sidecars(dir)[0]!))).toEqual(Buffer.alloc(4096))
  })

  it('refuses a complete last line that does not parse (a hand edit): CORRUPT_SESSION naming the line, the file untouched', async () => {
    const dir = tempDir()
    const events = closedLog()
    const lines = events.map((event) => JSON.stringify(event))
    lines[lines.length - 1] = lines.at(-1)!.slice(0, -2) // the last record, cut short but newline-terminated
    const file = join(dir, 's.jsonl')
    writeFileSync(file, lines.join('\n') + '\n')
    const before = readFileSync(file)
    const { backend } = await mount(dir)
    const error = await rejection(backend.load(sid('s')))
    expect({ code: error.code, file: error.file, line: error.line }).toEqual({ code: 'CORRUPT_SESSION', file, line: 15 })
    expect(readFileSync(file)).toEqual(before)
    expect(sidecars(dir)).toEqual([])
  })

  it('refuses a complete line of NUL bytes at the end: only bytes after the last newline count as torn', async () => {
    const dir = tempDir()
    const events = closedLog()
    const file = writeLog(dir, 's', events, '\0\0\0\0\0\0\n')
    const { backend } = await mount(dir)
    const error = await rejection(backend.load(sid('s')))
    expect({ code: error.code, line: error.line }).toEqual({ code: 'CORRUPT_SESSION', line: 16 })
    expect(readFileSync(file, 'utf8').endsWith('\0\n')).toBe(true)
  })

  it('refuses a line with invalid UTF-8, naming the line, instead of decoding it to U+FFFD', async () => {
    const dir = tempDir()
    const events = closedLog()
    const lines = events.map((event) => Buffer.from(JSON.stringify(event) + '\n'))
    // "question 1" with its "q" replaced by a lone continuation byte, in line 4 (a user/message).
    const bad = Buffer.from(lines[3]!)
    bad[bad.indexOf('question')] = 0x80
    const file = join(dir, 's.jsonl')
    writeFileSync(file, Buffer.concat([...lines.slice(0, 3), bad, ...lines.slice(4)]))
    const { backend } = await mount(dir)
    const error = await rejection(backend.load(sid('s')))
    expect({ code: error.code, file: error.file, line: error.line }).toEqual({ code: 'CORRUPT_SESSION', file, line: 4 })
    expect(error.message).toContain('not valid UTF-8')
  })

  it('refuses invalid UTF-8 in a chunk line too (the packed fast path), also past the first read', async () => {
    const dir = tempDir()
    const log = logBuilder()
    log.add('turn/start', { turn: 1, trigger: { kind: 'prompt' } })
    log.add('step/start', { turn: 1, step: 1 })
    for (let i = 0; i < 20_000; i++) log.add('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: `é${i}` } })
    const bytes = Buffer.from(log.events.map((event) => JSON.stringify(event) + '\n').join(''))
    // The é (0xC3 0xA9) of the chunk on line 15,003 loses its second byte's continuation bits.
    let at = 0
    for (let line = 1; line < 15_003; line++) at = bytes.indexOf(0x0a, at) + 1
    bytes[bytes.indexOf(0xc3, at) + 1] = 0x41
    writeFileSync(join(dir, 's.jsonl'), bytes)
    const { backend } = await mount(dir)
    const error = await rejection(backend.load(sid('s')))
    expect({ code: error.code, line: error.line }).toEqual({ code: 'CORRUPT_SESSION', line: 15_003 })
  })

  it('keeps a multi-byte character cut by the torn tail: the tail goes to the sidecar whole', async () => {
    const dir = tempDir()
    const events = closedLog()
    const tail = Buffer.from('{"type":"turn/start","data":"漢')
    const file = writeLog(dir, 's', events)
    appendFileSync(file, tail.subarray(0, tail.length - 1)) // the last character without its last byte
    const { backend } = await mount(dir)
    const loaded = await backend.load(sid('s'))
    expect(loaded.events).toEqual(events)
    expect(readFileSync(loaded.warnings[0]!.sidecar!)).toEqual(tail.subarray(0, tail.length - 1))
  })
})

describe('load: corruption in the middle (R-PER-2)', () => {
  it('rejects with CORRUPT_SESSION naming the file and the 1-based line', async () => {
    const dir = tempDir()
    const events = closedLog()
    const lines = events.map((event) => JSON.stringify(event))
    lines[4] = lines[4]!.slice(0, -1) // a record cut short by a bad edit or a disk error
    const file = join(dir, 's.jsonl')
    writeFileSync(file, lines.join('\n') + '\n')
    const before = readFileSync(file)
    const { backend } = await mount(dir)

    const error = await rejection(backend.load(sid('s')))
    expect({ code: error.code, file: error.file, line: error.line }).toEqual({ code: 'CORRUPT_SESSION', file, line: 5 })
    expect(error.message).toContain(`${file}, line 5`)
    expect(readFileSync(file)).toEqual(before)
  })

  it('rejects a line whose seq is not its index', async () => {
    const dir = tempDir()
    const events = closedLog().map((event) => (event.seq === 7 ? { ...event, seq: 9 } : event))
    writeLog(dir, 's', events)
    const { backend } = await mount(dir)
    const error = await rejection(backend.load(sid('s')))
    expect([error.code, error.line]).toEqual(['CORRUPT_SESSION', 8])
    expect(error.message).toContain('has seq 9 where 7 was expected')
  })

  it('rejects a file whose first line is not session/meta', async () => {
    const dir = tempDir()
    writeLog(dir, 's', closedLog().slice(1).map((event, seq) => ({ ...event, seq })))
    const { backend } = await mount(dir)
    const error = await rejection(backend.load(sid('s')))
    expect([error.code, error.line]).toEqual(['CORRUPT_SESSION', 1])
  })

  it('rejects an empty line in the middle', async () => {
    const dir = tempDir()
    const events = closedLog()
    const lines = events.map((event) => JSON.stringify(event))
    lines.splice(3, 0, '')
    writeFileSync(join(dir, 's.jsonl'), lines.join('\n') + '\n')
    const { backend } = await mount(dir)
    const error = await rejection(backend.load(sid('s')))
    expect([error.code, error.line]).toEqual(['CORRUPT_SESSION', 4])
  })
})

describe('load: event types and versions (R-PER-4)', () => {
  it('refuses an unknown type that its writer did not mark ignorable, naming file, line and type', async () => {
    const dir = tempDir()
    const log = logBuilder()
    addTextTurn(log, 1)
    const file = writeLog(dir, 's', [...log.events, { type: 'goal/change', seq: log.events.length, time: 1, data: { goal: 'x' } }])
    const { backend } = await mount(dir)
    const error = await rejection(backend.load(sid('s')))
    expect({ code: error.code, file: error.file, line: error.line }).toEqual({ code: 'UNKNOWN_TYPE', file, line: 9 })
    expect(error.message).toContain('"goal/change"')
  })

  it('accepts an unknown type marked ignorable, keeping the mark', async () => {
    const dir = tempDir()
    const log = logBuilder()
    addTextTurn(log, 1)
    const marked = { type: 'goal/change', seq: log.events.length, time: 1, data: { goal: 'x' }, ignorable: true }
    writeLog(dir, 's', [...log.events, marked])
    const { backend } = await mount(dir)
    const loaded = await backend.load(sid('s'))
    expect(loaded.events).toEqual([...log.events, marked])
  })

  it('writes the ignorable mark of an event and reads it back', async () => {
    const dir = tempDir()
    const log = logBuilder()
    const marked = { type: 'goal/change', seq: 1, time: 2, data: { goal: 'x' }, ignorable: true } as unknown as AnySessionEvent
    const { backend } = await mount(dir)
    await backend.append(sid('s'), [...log.events, marked])
    await backend.flush(sid('s'))
    expect(readFileSync(backend.fileOf(sid('s')), 'utf8').split('\n')[1]).toBe(
      '{"type":"goal/change","seq":1,"time":2,"data":{"goal":"x"},"ignorable":true}',
    )
    expect((await backend.load(sid('s'))).events).toEqual([...log.events, marked])
  })

  it('refuses a file of a newer format version and leaves it untouched', async () => {
    const dir = tempDir()
    const events = closedLog()
    const meta = { ...events[0]!, data: { ...events[0]!.data, version: 2 } }
    const file = writeLog(dir, 's', [meta, ...events.slice(1)], '{"torn')
    const before = readFileSync(file)
    const { backend } = await mount(dir)
    const error = await rejection(backend.load(sid('s')))
    expect({ code: error.code, file: error.file, line: error.line }).toEqual({ code: 'UNSUPPORTED_VERSION', file, line: 1 })
    expect(error.message).toContain('format version 2')
    expect(readFileSync(file)).toEqual(before)
  })

  it('refuses a meta without an integer version as corrupt', async () => {
    const dir = tempDir()
    const events = closedLog()
    writeLog(dir, 's', [{ ...events[0]!, data: { createdAt: 1 } }, ...events.slice(1)])
    const { backend } = await mount(dir)
    const error = await rejection(backend.load(sid('s')))
    expect([error.code, error.line]).toEqual(['CORRUPT_SESSION', 1])
  })
})

describe('load: crash repair (R-PER-3)', () => {
  it('appends the repairs after the existing lines, fsyncs them, and reports them', async () => {
    const dir = tempDir()
    const log = logBuilder()
    addTextTurn(log, 1)
    addCrashedToolTurn(log, 2)
    const file = writeLog(dir, 's', log.events)
    const before = readFileSync(file, 'utf8')
    const { backend } = await mount(dir)

    const loaded = await backend.load(sid('s'))
    const n = log.events.length
    expect(loaded.events.slice(0, n)).toEqual(log.events)
    expect(loaded.events.slice(n).map((event) => [event.seq, event.type])).toEqual([
      [n, 'tool/call'],
      [n + 1, 'tool/result'],
      [n + 2, 'step/end'],
      [n + 3, 'turn/end'],
    ])
    expect(loaded.events[n]!.data).toEqual({ turn: 2, step: 1, callId: CallId('call_b'), name: 'echo', arguments: '{}' })
    expect(loaded.events[n + 1]!.data).toMatchObject({ turn: 2, step: 1, error: { code: 'INTERRUPTED' } })
    expect(loaded.events[n + 3]!.data).toEqual({ turn: 2, reason: { kind: 'interrupted' } })
    expect(loaded.repairs.map((repair) => [repair.seq, repair.type])).toEqual([
      [n, 'tool/call'],
      [n + 1, 'tool/result'],
      [n + 2, 'step/end'],
      [n + 3, 'turn/end'],
    ])
    // Earlier lines are never rewritten: the file is the old bytes plus the repair lines.
    const after = readFileSync(file, 'utf8')
    expect(after.startsWith(before)).toBe(true)
    expect(after.slice(before.length).trimEnd().split('\n').map((line) => JSON.parse(line))).toEqual(loaded.events.slice(n))

    // Loading again finds nothing left to repair.
    expect(await backend.load(sid('s'))).toEqual({ id: 's', events: loaded.events, repairs: [], warnings: [] })
  })

  it('closes an open turn that has no open step', async () => {
    const dir = tempDir()
    const log = logBuilder()
    log.add('turn/start', { turn: 1, trigger: { kind: 'injection' } })
    log.add('user/message', { message: { id: MessageId('u'), role: 'user', content: [], source: { kind: 'user' } } })
    writeLog(dir, 's', log.events)
    const { backend } = await mount(dir)
    const loaded = await backend.load(sid('s'))
    expect(loaded.repairs.map((repair) => repair.type)).toEqual(['turn/end'])
    expect(loaded.events.at(-1)).toMatchObject({ type: 'turn/end', seq: 3, data: { turn: 1, reason: { kind: 'interrupted' } } })
  })

  it('refuses a damaged record of the open turn (one crash repair reads) with CORRUPT_SESSION naming file and line, appending nothing', async () => {
    const dir = tempDir()
    const log = logBuilder()
    addTextTurn(log, 1)
    addCrashedToolTurn(log, 2)
    const message = log.events.findIndex((event) => event.type === 'assistant/message' && (event.data as { turn: number }).turn === 2)
    const turnStart = log.events.findIndex((event) => event.type === 'turn/start' && (event.data as { turn: number }).turn === 2)
    const { backend } = await mount(dir)
    for (const [seq, data, problem] of [
      [message, {}, 'data.turn must be an integer ≥ 1'],
      [turnStart, { trigger: { kind: 'prompt' } }, 'data.turn must be an integer ≥ 1'],
    ] as const) {
      const file = writeLog(dir, 's', log.events.map((event) => (event.seq === seq ? { ...event, data } : event)))
      const before = readFileSync(file)
      const error = await rejection(backend.load(sid('s')))
      expect({ code: error.code, file: error.file, line: error.line }).toEqual({ code: 'CORRUPT_SESSION', file, line: seq + 1 })
      expect(error.message).toContain(`${file}, line ${seq + 1}`)
      expect(error.message).toContain(problem)
      // Nothing was planned from the damaged record, so nothing was appended after it.
      expect(readFileSync(file)).toEqual(before)
    }
  })

  it('refuses a line with a field outside the envelope (type, seq, time, data, ignorable) as CORRUPT_SESSION naming it, appending nothing', async () => {
    const dir = tempDir()
    const log = logBuilder()
    addCrashedToolTurn(log, 1)
    const file = writeLog(dir, 's', log.events.map((event) => (event.seq === 2 ? { ...event, note: 'hand edit' } : event)))
    const before = readFileSync(file)
    const { backend } = await mount(dir)
    const error = await rejection(backend.load(sid('s')))
    expect({ code: error.code, file: error.file, line: error.line }).toEqual({ code: 'CORRUPT_SESSION', file, line: 3 })
    expect(error.message).toContain('has a field "note" outside type, seq, time, data and ignorable')
    expect(readFileSync(file)).toEqual(before)
  })

  it('drops a torn line before repairing, so the repairs follow the last complete event', async () => {
    const dir = tempDir()
    const log = logBuilder()
    addCrashedToolTurn(log, 1)
    const file = writeLog(dir, 's', log.events, '{"type":"tool/call","se')
    const { backend } = await mount(dir)
    const loaded = await backend.load(sid('s'))
    expect(loaded.warnings.map((warning) => warning.code)).toEqual(['TORN_TAIL'])
    expect(loaded.repairs.map((repair) => repair.seq)).toEqual([7, 8, 9, 10])
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n')
    expect(lines.map((line) => JSON.parse(line).seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
  })
})

describe('load: streaming', () => {
  it('reads lines that straddle read chunks and multi-byte characters intact', async () => {
    const dir = tempDir()
    const log = logBuilder()
    log.add('turn/start', { turn: 1, trigger: { kind: 'prompt' } })
    log.add('step/start', { turn: 1, step: 1 })
    // Longer than one 1 MiB read, full of multi-byte characters that a chunk boundary can split.
    const text = '漢字🙂\n'.repeat(200_000)
    log.add('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text } })
    for (let i = 0; i < 2000; i++) log.add('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: `é${i}` } })
    const { backend } = await mount(dir)
    await backend.append(sid('s'), log.events)
    await backend.release(sid('s'))
    const loaded = await backend.load(sid('s'))
    expect(loaded.events.slice(0, log.events.length)).toEqual(log.events)
  })
})

it('appends to a file another tool created with a trailing partial line only after load truncated it', async () => {
  const dir = tempDir()
  const events = closedLog()
  const file = writeLog(dir, 's', events)
  appendFileSync(file, '{"partial')
  const { backend } = await mount(dir)
  // Not loaded in this process: continuing it blind could bury the partial line.
  const error = await rejection(backend.append(sid('s'), [{ ...events[1]!, seq: events.length }]))
  expect(error.code).toBe('SESSION_EXISTS')
})
