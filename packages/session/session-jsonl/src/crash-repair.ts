import { createToolResultMessage, type CallId, type ToolCallBlock } from '@deepseek-ai/dsh-llm'
import type { AnySessionEvent, SessionEventMap, SessionEventType } from '@deepseek-ai/dsh-session'

/** One event crash repair wants appended, before it gets its seq and time. */
export interface PlannedRepair<K extends SessionEventType = SessionEventType> {
  type: K
  data: SessionEventMap[K]
  detail: string
}

/**
 * STOPGAP until dsh-session exports `repairSession` (the brief puts the
 * algorithm there so every backend shares it). R-PER-3: for an open step, each
 * tool call of its `assistant/message` that lacks a `tool/call` gets one and
 * each unanswered call a synthetic error `tool/result` (code `INTERRUPTED`),
 * in model order; then `step/end`; then `turn/end{interrupted}` for the open
 * turn. One linear pass over the log.
 */
export function planCrashRepair(events: readonly AnySessionEvent[]): PlannedRepair[] {
  let openTurn: number | undefined
  let openStep: number | undefined
  let calls: readonly ToolCallBlock[] = []
  const called = new Set<string>()
  const answered = new Set<string>()
  for (const event of events) {
    switch (event.type) {
      case 'turn/start':
        openTurn = event.data.turn
        break
      case 'turn/end':
        openTurn = undefined
        break
      case 'step/start':
        openStep = event.data.step
        calls = []
        called.clear()
        answered.clear()
        break
      case 'step/end':
        openStep = undefined
        break
      case 'assistant/message':
        calls = event.data.message.content.filter((block): block is ToolCallBlock => block.type === 'tool-call')
        break
      case 'tool/call':
        called.add(event.data.callId)
        break
      case 'tool/result':
        for (const block of event.data.message.content) if (block.type === 'tool-result') answered.add(block.toolCallId)
        break
    }
  }
  const plan: PlannedRepair[] = []
  if (openTurn === undefined) return plan
  const turn = openTurn
  if (openStep !== undefined) {
    const step = openStep
    for (const call of calls) {
      if (!called.has(call.id)) {
        plan.push({
          type: 'tool/call',
          data: { turn, step, callId: call.id, name: call.name, arguments: call.arguments },
          detail: `Recorded tool call ${call.id} (${call.name}) of turn ${turn} step ${step}, which the crash left unrecorded.`,
        })
      }
      if (!answered.has(call.id)) plan.push(interruptedResult(turn, step, call.id, call.name))
    }
    plan.push({ type: 'step/end', data: { turn, step }, detail: `Closed step ${step} of turn ${turn}, left open by a crash.` })
  }
  plan.push({
    type: 'turn/end',
    data: { turn, reason: { kind: 'interrupted' } },
    detail: `Ended turn ${turn} as interrupted: the process stopped inside it.`,
  })
  return plan
}

function interruptedResult(turn: number, step: number, callId: CallId, name: string): PlannedRepair<'tool/result'> {
  const message = 'Error: the tool call was interrupted (the process stopped before it finished)'
  return {
    type: 'tool/result',
    data: {
      turn,
      step,
      message: createToolResultMessage({ callId, content: message, isError: true }),
      error: { code: 'INTERRUPTED', message },
    },
    detail: `Answered tool call ${callId} (${name}) of turn ${turn} step ${step} with an INTERRUPTED error.`,
  }
}
