import { describe, expect, it } from 'vitest'
import { runDemo, tempDir, workspace } from './helpers'

/** A line's shape: its type, its top-level keys and the keys of its `data` (values left out), sorted. */
function shape(line: string): string {
  const event = JSON.parse(line) as { type: string; data?: Record<string, unknown> }
  const data = event.data && typeof event.data === 'object' ? Object.keys(event.data).sort().join(',') : '-'
  return `${event.type} {${Object.keys(event).sort().join(',')}} data {${data}}`
}

// Scripts read `dsh-demo -p … --json` line by line. The terminal work of issue 25 (markdown, the
// screen, the cost) must never reach it: this pins every line's shape, in order, for a turn with a
// tool round. A change here is a breaking change for those scripts and needs a changeset saying so.
describe('dsh-demo -p --json', { timeout: 240_000 }, () => {
  it('writes the same event schema, line by line', async () => {
    const { status, stdout, stderr } = await runDemo(['-p', 'what is in this project?', '--json', '--data-dir', tempDir()], { cwd: workspace() })
    expect({ status, stderr }).toEqual({ status: 0, stderr: '' })
    const shapes = stdout.trimEnd().split('\n').map(shape)
    // Runs of streamed chunks collapse to one entry: their number depends on the chunking.
    const collapsed = shapes.filter((line, index) => !(line.startsWith('assistant/chunk ') && shapes[index - 1] === line))
    expect(collapsed).toEqual([
      'session/meta {data,seq,time,type} data {createdAt,cwd,version}',
      'inbox/enqueue {data,seq,time,type} data {message}',
      'inbox/dequeue {data,seq,time,type} data {id}',
      'turn/start {data,seq,time,type} data {trigger,turn}',
      'step/start {data,seq,time,type} data {step,turn}',
      'user/message {data,seq,time,type} data {message}',
      'request/header {data,seq,time,type} data {model,provider,reason,system,tools}',
      'assistant/chunk {data,seq,time,type} data {chunk,step,turn}',
      'assistant/message {data,seq,time,type} data {chunkSeqs,finishReason,message,step,turn,usage}',
      'tool/call {data,seq,time,type} data {arguments,callId,name,step,turn}',
      'permission/decision {data,ignorable,seq,time,type} data {callId,decision,mode,rule,tool}',
      'tool/result {data,seq,time,type} data {message,step,turn}',
      'step/end {data,seq,time,type} data {step,turn}',
      'step/start {data,seq,time,type} data {step,turn}',
      'assistant/chunk {data,seq,time,type} data {chunk,step,turn}',
      'assistant/message {data,seq,time,type} data {chunkSeqs,finishReason,message,step,turn,usage}',
      'tool/call {data,seq,time,type} data {arguments,callId,name,step,turn}',
      'permission/decision {data,ignorable,seq,time,type} data {callId,decision,mode,rule,tool}',
      'tool/result {data,seq,time,type} data {message,step,turn}',
      'step/end {data,seq,time,type} data {step,turn}',
      'step/start {data,seq,time,type} data {step,turn}',
      'assistant/chunk {data,seq,time,type} data {chunk,step,turn}',
      'assistant/message {data,seq,time,type} data {chunkSeqs,finishReason,message,step,turn,usage}',
      'step/end {data,seq,time,type} data {step,turn}',
      'turn/end {data,seq,time,type} data {reason,turn}',
    ])
    // No escape sequence, whatever the environment says about colors.
    expect(stdout).not.toMatch(/\x1b/)
  })
})
