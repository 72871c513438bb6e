import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from 'cordis'
import { afterEach } from 'vitest'
import { CallId, MessageId, createAssistantMessage, createToolResultMessage, createUserMessage } from '@deepseek-ai/dsh-llm'
import { SessionId, type AnySessionEvent, type SessionEventMap, type SessionEventType } from '@deepseek-ai/dsh-session'
import JsonlSessionPersistence from '@deepseek-ai/dsh-session-jsonl'

const cleanups: Array<() => Promise<void> | void> = []

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** A fresh temporary directory, removed after the test. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-jsonl-'))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** Mounts the backend in a fresh Cordis app; disposed after the test (unless the test disposes it). */
export async function mount(directory: string, flushIntervalMs = 60_000) {
  const root = new Context()
  const fiber = root.plugin(JsonlSessionPersistence, { directory, flushIntervalMs })
  await fiber
  let disposed = false
  const dispose = async () => {
    if (disposed) return
    disposed = true
    await fiber.dispose()
  }
  cleanups.push(dispose)
  return { root, backend: root.sessionPersistence as JsonlSessionPersistence, dispose }
}

/** Builds a log by hand: `log.add(type, data)` assigns seq and time. */
export function logBuilder(createdAt = 1_764_480_000_000) {
  const events: AnySessionEvent[] = []
  const add = <K extends SessionEventType>(type: K, data: SessionEventMap[K]) => {
    const event = { type, seq: events.length, time: createdAt + events.length, data } as AnySessionEvent
    events.push(event)
    return event
  }
  add('session/meta', { createdAt, version: 1, cwd: '/work' })
  return { events, add }
}

/** A closed turn: prompt, one text step. */
export function addTextTurn(log: ReturnType<typeof logBuilder>, turn: number, text = 'hello') {
  log.add('turn/start', { turn, trigger: { kind: 'prompt' } })
  log.add('step/start', { turn, step: 1 })
  log.add('user/message', { message: createUserMessage(`question ${turn}`, { id: MessageId(`u${turn}`) }) })
  const chunk = log.add('assistant/chunk', { turn, step: 1, chunk: { type: 'text-delta', index: 0, text } })
  log.add('assistant/message', {
    turn,
    step: 1,
    message: createAssistantMessage(text, { id: MessageId(`a${turn}`), source: { kind: 'model', provider: 'scripted', model: 'demo' } }),
    chunkSeqs: [chunk.seq],
    finishReason: { kind: 'stop' },
  })
  log.add('step/end', { turn, step: 1 })
  log.add('turn/end', { turn, reason: { kind: 'completed' } })
}

/** An open turn whose open step made two tool calls; only the first has a tool/call and result. */
export function addCrashedToolTurn(log: ReturnType<typeof logBuilder>, turn: number) {
  log.add('turn/start', { turn, trigger: { kind: 'prompt' } })
  log.add('step/start', { turn, step: 1 })
  log.add('user/message', { message: createUserMessage('run both', { id: MessageId(`u${turn}`) }) })
  const calls = [CallId('call_a'), CallId('call_b')]
  log.add('assistant/message', {
    turn,
    step: 1,
    message: createAssistantMessage(
      calls.map((id) => ({ type: 'tool-call' as const, id, name: 'echo', arguments: '{}' })),
      { id: MessageId(`a${turn}`), source: { kind: 'model', provider: 'scripted', model: 'demo' } },
    ),
    chunkSeqs: [],
    finishReason: { kind: 'tool-calls' },
  })
  log.add('tool/call', { turn, step: 1, callId: calls[0]!, name: 'echo', arguments: '{}' })
  log.add('tool/result', { turn, step: 1, message: createToolResultMessage({ callId: calls[0]!, content: 'ok', id: MessageId('r1') }) })
  return calls
}

export const sid = SessionId
