// The deterministic session the crash test writes: the parent regenerates it to
// check what survived the child's SIGKILL.
import { CallId, MessageId } from '@deepseek-ai/dsh-llm'
import type { AnySessionEvent, SessionEventMap, SessionEventType } from '@deepseek-ai/dsh-session'

/** Every event of an endless session of tool-using turns, with seq and a time derived from it. */
export function* crashLog(): Generator<AnySessionEvent> {
  let seq = 0
  const event = <K extends SessionEventType>(type: K, data: SessionEventMap[K]) =>
    ({ type, seq, time: 1_764_480_000_000 + seq++, data }) as AnySessionEvent
  yield event('session/meta', { createdAt: 1_764_480_000_000, version: 1, cwd: '/crash' })
  for (let turn = 1; ; turn++) {
    yield event('turn/start', { turn, trigger: { kind: 'prompt' } })
    yield event('step/start', { turn, step: 1 })
    yield event('user/message', {
      message: { id: MessageId(`u${turn}`), role: 'user', content: [{ type: 'text', text: `task ${turn}` }], source: { kind: 'user' } },
    })
    const chunkSeqs: number[] = []
    for (let i = 0; i < 20; i++) {
      chunkSeqs.push(seq)
      yield event('assistant/chunk', { turn, step: 1, chunk: { type: 'text-delta', index: 0, text: `w${i} ` } })
    }
    const calls = [CallId(`t${turn}-a`), CallId(`t${turn}-b`)]
    yield event('assistant/message', {
      turn,
      step: 1,
      message: {
        id: MessageId(`a${turn}`),
        role: 'assistant',
        content: calls.map((id) => ({ type: 'tool-call' as const, id, name: 'echo', arguments: '{"x":1}' })),
        source: { kind: 'model', provider: 'scripted', model: 'crash' },
      },
      chunkSeqs,
      finishReason: { kind: 'tool-calls' },
    })
    for (const callId of calls) {
      yield event('tool/call', { turn, step: 1, callId, name: 'echo', arguments: '{"x":1}' })
      yield event('tool/result', {
        turn,
        step: 1,
        message: {
          id: MessageId(`r-${callId}`),
          role: 'user',
          content: [{ type: 'tool-result', toolCallId: callId, content: [{ type: 'text', text: 'ok' }] }],
          source: { kind: 'tool', callId },
        },
      })
    }
    yield event('step/end', { turn, step: 1 })
    yield event('turn/end', { turn, reason: { kind: 'completed' } })
  }
}

/** The first `count` events of `crashLog()`. */
export function crashLogPrefix(count: number): AnySessionEvent[] {
  const out: AnySessionEvent[] = []
  if (count <= 0) return out
  for (const event of crashLog()) {
    out.push(event)
    if (out.length === count) break
  }
  return out
}
