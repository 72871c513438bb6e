import { Context, Logger } from 'cordis'
import { expect } from 'vitest'
import Sessions, { SessionError, type Session, type SessionErrorCode, type SessionEventMap, type SessionEventType } from '@deepseek-ai/dsh-session'
import {
  CallId,
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  MessageId,
  type AssistantMessage,
  type ContentBlock,
} from '@deepseek-ai/dsh-llm'

/** A root context with `ctx.sessions` mounted. */
export async function setup(): Promise<Context> {
  const root = new Context()
  await root.plugin(Sessions)
  return root
}

/** Collects what the root logger receives at warn level and above, formatted without colours. */
export function captureLogs(root: Context): string[] {
  const lines: string[] = []
  root.logger.exporter({
    colors: false,
    levels: { default: 1 },
    export: (message) => void lines.push(Logger.format({ colors: false, export() {} }, message)),
  })
  return lines
}

export const model = { kind: 'model', provider: 'test', model: 'm' } as const

export const user = (text: string, id = `u-${text}`) => createUserMessage(text, { id: MessageId(id) })

export function assistant(content: string | ContentBlock[], id = 'a'): AssistantMessage {
  return createAssistantMessage(content, { source: model, id: MessageId(id) })
}

export function toolCall(id: string, name = 'read', args = '{}'): ContentBlock {
  return { type: 'tool-call', id: CallId(id), name, arguments: args }
}

export function toolResult(callId: string, text = `result of ${callId}`) {
  return createToolResultMessage({ callId: CallId(callId), content: text, id: MessageId(`r-${callId}`) })
}

/** Opens turn `turn` with a prompt (and the user message `text`). */
export function openTurn(session: Session, turn: number, text = `q${turn}`): void {
  session.append('turn/start', { turn, trigger: { kind: 'prompt' } })
  session.append('user/message', { message: user(text, `u${turn}`) })
}

/** Appends `assistant/message` for the open step, with no chunks. */
export function answer(session: Session, turn: number, step: number, content: string | ContentBlock[], id = `a${turn}.${step}`) {
  return session.append('assistant/message', {
    turn,
    step,
    message: assistant(content, id),
    chunkSeqs: [],
    finishReason: { kind: typeof content !== 'string' && content.some((b) => b.type === 'tool-call') ? 'tool-calls' : 'stop' },
  })
}

/** A whole closed turn: prompt, one step answering `reply`. */
export function closedTurn(session: Session, turn: number, reply = `answer ${turn}`): void {
  openTurn(session, turn)
  session.append('step/start', { turn, step: 1 })
  answer(session, turn, 1, reply)
  session.append('step/end', { turn, step: 1 })
  session.append('turn/end', { turn, reason: { kind: 'completed' } })
}

/** The types of a log, in order: whole-log assertions compare these. */
export const typesOf = (session: Session) => session.events.map((event) => event.type)

/**
 * Asserts that an append is refused with `code`, and that the log, the derived
 * history and the position are exactly what they were.
 */
export function expectRefused<K extends SessionEventType>(
  session: Session,
  type: K,
  data: SessionEventMap[K],
  code: SessionErrorCode,
  message?: RegExp,
): SessionError {
  const length = session.events.length
  const last = session.events[length - 1]
  const history = session.deriveMessages()
  const historyLength = history.length
  const position = session.position
  let thrown: unknown
  try {
    session.append(type, data)
  } catch (error) {
    thrown = error
  }
  expect(thrown).toBeInstanceOf(SessionError)
  const error = thrown as SessionError
  expect(error.code).toBe(code)
  if (message) expect(error.message).toMatch(message)
  expect(session.events.length).toBe(length)
  expect(session.events[length - 1]).toBe(last)
  expect(session.deriveMessages()).toBe(history)
  expect(session.deriveMessages().length).toBe(historyLength)
  expect(session.position).toBe(position)
  return error
}

/** A promise with its resolve/reject exposed, for deterministic ordering. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void
  let reject!: (reason: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}
