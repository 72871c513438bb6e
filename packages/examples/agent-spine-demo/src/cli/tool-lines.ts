import type { SessionEventMap } from '@deepseek-ai/dsh-session'
import { clip } from './text'

interface OpenCall {
  name: string
  arguments: string
}

/**
 * Which call a `◂` result line belongs to. A result printed right under its
 * own `▸` call line, with no other call open, needs no label (`  ◂ 3
 * lines`). Otherwise (parallel calls, whose results arrive after several call
 * lines and in any order) the line names its call: `  ◂ list_dir: 19 lines`,
 * with the arguments too when the step has several calls of that name:
 * `  ◂ read_file {"path":"b.ts"}: 33 lines`.
 */
export class ToolLines {
  private readonly open = new Map<string, OpenCall>()
  /** Calls per tool name in the current step. */
  private names = new Map<string, number>()
  private step = ''
  /** The call whose `▸` line is the last line the view printed. */
  private lastCallLine: string | undefined

  /** Records a call; returns its `▸` line's text (without indentation or style). */
  call(data: SessionEventMap['tool/call']): string {
    const step = `${data.turn}.${data.step}`
    if (step !== this.step) {
      this.step = step
      this.names = new Map()
    }
    this.names.set(data.name, (this.names.get(data.name) ?? 0) + 1)
    this.open.set(data.callId, { name: data.name, arguments: data.arguments })
    this.lastCallLine = data.callId
    return `▸ ${data.name} ${clip(data.arguments, 100)}`
  }

  /** The label of the result of call `callId` (`''` when none is needed), e.g. `read_file: `. */
  resultLabel(callId: string | undefined): string {
    const call = callId === undefined ? undefined : this.open.get(callId)
    if (callId !== undefined) this.open.delete(callId)
    const adjacent = callId !== undefined && callId === this.lastCallLine && this.open.size === 0
    this.lastCallLine = undefined
    if (adjacent || !call) return ''
    const twins = (this.names.get(call.name) ?? 0) > 1
    return twins ? `${call.name} ${clip(call.arguments, 60)}: ` : `${call.name}: `
  }

  /** The view printed something else: the next result is no longer right under its call. */
  interrupted(): void {
    this.lastCallLine = undefined
  }
}

/** The call id a `tool/result` answers. */
export function resultCallId(data: SessionEventMap['tool/result']): string | undefined {
  const block = data.message.content[0]
  return block?.type === 'tool-result' ? block.toolCallId : undefined
}
