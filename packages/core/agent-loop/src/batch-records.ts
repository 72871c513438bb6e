import type { ToolCallBlock } from '@deepseek-ai/dsh-llm'
import type { SessionEventMap } from '@deepseek-ai/dsh-session'

type Mutable<T> = { -readonly [K in keyof T]: T[K] }
type CallData = SessionEventMap['tool/call']
type ResultData = SessionEventMap['tool/result']

// The data of `tool/call` and `tool/result`, plain objects (prototype `Object.prototype`, the literals' keys in
// their order) made by `new`: a constructed object has no allocation site. The log keeps these objects, so V8
// decides in the cold round to allocate a literal's objects in the old generation, and that decision deoptimizes
// every optimized function that inlined the literal: `start`, `finishDue` and `logDue` ran unoptimized for the
// rest of the round (see .agents/notes/implemented/architecture/2026-12-02-perf-tool-cold-3.md).

/** `{ turn, step, callId, name, arguments }`. */
export const CallRecord = function (this: Mutable<CallData>, turn: number, step: number, call: ToolCallBlock) {
  this.turn = turn
  this.step = step
  this.callId = call.id
  this.name = call.name
  this.arguments = call.arguments
} as unknown as new (turn: number, step: number, call: ToolCallBlock) => CallData
CallRecord.prototype = Object.prototype

/** `{ turn, step, message }`. */
export const ResultRecord = function (this: Mutable<ResultData>, turn: number, step: number, message: ResultData['message']) {
  this.turn = turn
  this.step = step
  this.message = message
} as unknown as new (turn: number, step: number, message: ResultData['message']) => ResultData
ResultRecord.prototype = Object.prototype
