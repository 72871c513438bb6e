import { createToolResultMessage, MessageId, type CallId, type ToolCallBlock } from '@deepseek-ai/dsh-llm'
import { builtInKind } from './built-in-types'
import { SessionError } from './errors'
import { shapeProblem } from './event-shapes'
import type { SessionRepair } from './persistence'
import type { AnySessionEvent, SessionEvent, SessionEventMap } from './types'

/** What crash repair appends to a log, and the report of it. */
export interface SessionRepairPlan {
  /** The events to append, in order, with `seq` continuing the log. Empty when nothing was open. */
  readonly events: readonly AnySessionEvent[]
  /** One entry per appended event, for the person reading the load report. */
  readonly repairs: readonly SessionRepair[]
}

/** The text a synthetic result carries: what the model reads for a call the crash cut off. */
export const INTERRUPTED_RESULT_TEXT = 'Error: tool call interrupted (the session stopped before this call finished)'

/**
 * Crash repair (R-PER-3), as a pure function shared by every backend: given a
 * whole log as it was read back, the events that close what the crash left
 * open, so that the next request is valid for every provider.
 *
 * - An open step: each tool call of its `assistant/message` that lacks a
 *   `tool/call` gets one, and each call without a `tool/result` gets a
 *   synthetic error result (code `INTERRUPTED`, id `interrupted-<callId>`),
 *   in model order; then `step/end`, then `turn/end{interrupted}`.
 * - An open turn without an open step: `turn/end{interrupted}`.
 * - Otherwise nothing.
 *
 * It reads only the last turn (scanning back from the end), never mutates
 * `events`, and assigns `time = options.now ?? Date.now()`. The caller appends
 * the returned events durably (never rewriting earlier records) and reports
 * `repairs`. Repairing an already repaired log returns nothing.
 *
 * The events it reads the data of (the open turn's `turn/start`, the open
 * step's `step/start`, `assistant/message`, `tool/call` and `tool/result`)
 * are checked with the session's own shape rules first: a stored log is not
 * validated until `prepare` replays it, and repairs planned from a damaged
 * record would be appended for good. A damaged one throws `INVALID_EVENT`
 * with its `seq`, `type` and `path` (a backend names its record from them),
 * and nothing is planned.
 */
export function repairSession(events: readonly AnySessionEvent[], options: { now?: number } = {}): SessionRepairPlan {
  const now = options.now ?? Date.now()
  let turnStart = -1
  for (let i = events.length - 1; i >= 0; i--) {
    const type = events[i]!.type
    if (type === 'turn/end') break
    if (type === 'turn/start') {
      turnStart = i
      break
    }
  }
  if (turnStart < 0) return { events: [], repairs: [] }
  readable(events[turnStart]!)
  const turn = (events[turnStart] as SessionEvent<'turn/start'>).data.turn

  let stepStart = -1
  for (let i = events.length - 1; i > turnStart; i--) {
    const type = events[i]!.type
    if (type === 'step/end') break
    if (type === 'step/start') {
      stepStart = i
      break
    }
  }

  const out: AnySessionEvent[] = []
  const repairs: SessionRepair[] = []
  const add = <K extends 'tool/call' | 'tool/result' | 'step/end' | 'turn/end'>(
    type: K,
    data: SessionEventMap[K],
    detail: string,
  ) => {
    const seq = events.length + out.length
    out.push({ type, seq, time: now, data } as AnySessionEvent)
    repairs.push({ seq, type, detail })
  }

  if (stepStart >= 0) {
    readable(events[stepStart]!)
    const step = (events[stepStart] as SessionEvent<'step/start'>).data.step
    let calls: ToolCallBlock[] = []
    const called = new Set<string>()
    const answered = new Set<string>()
    for (let i = stepStart + 1; i < events.length; i++) {
      const event = events[i]!
      if (event.type === 'assistant/message' || event.type === 'tool/call' || event.type === 'tool/result') readable(event)
      if (event.type === 'assistant/message') {
        calls = event.data.message.content.filter((block): block is ToolCallBlock => block.type === 'tool-call')
      } else if (event.type === 'tool/call') {
        called.add(event.data.callId)
      } else if (event.type === 'tool/result') {
        const block = event.data.message.content[0]
        if (block?.type === 'tool-result') answered.add(block.toolCallId)
      }
    }
    for (const call of calls) {
      if (!called.has(call.id)) {
        add('tool/call', { turn, step, callId: call.id, name: call.name, arguments: call.arguments },
          `added the missing tool/call of call ${JSON.stringify(call.id)} (${call.name}) in step ${step} of turn ${turn}`)
      }
      if (!answered.has(call.id)) {
        add('tool/result', { turn, step, message: interruptedResult(call.id), error: { code: 'INTERRUPTED', message: 'the session stopped before this tool call finished' } },
          `added an INTERRUPTED error result for call ${JSON.stringify(call.id)} (${call.name}) in step ${step} of turn ${turn}`)
      }
    }
    add('step/end', { turn, step }, `closed step ${step} of turn ${turn}, which the crash left open`)
  }
  add('turn/end', { turn, reason: { kind: 'interrupted' } }, `closed turn ${turn} as interrupted`)
  return { events: out, repairs }
}

function interruptedResult(callId: CallId) {
  return createToolResultMessage({
    callId,
    content: INTERRUPTED_RESULT_TEXT,
    isError: true,
    id: MessageId(`interrupted-${callId}`),
  })
}

/** Throws `INVALID_EVENT` unless `event`'s data has the shape crash repair reads (see `repairSession`). */
function readable(event: AnySessionEvent): void {
  const data = event.data as unknown
  const problem =
    data === null || typeof data !== 'object' || Array.isArray(data)
      ? 'data must be a plain object'
      : shapeProblem(builtInKind(event.type)!, data as Record<string, unknown>)
  if (problem === undefined) return
  const { seq, type } = event
  throw new SessionError('INVALID_EVENT', `crash repair cannot read event ${seq} (${type}), so the open turn cannot be closed: ${problem}`, {
    seq,
    type,
    path: problem.slice(0, problem.indexOf(' ')),
  })
}
