/**
 * The synthetic log of scenario 10: turns of one step answering in 200 text
 * chunks then a message, built on a private dsh-session session (so every
 * event is one the store accepts), until the log has `events` events.
 */
import { createAssistantMessage, createUserMessage } from '@deepseek-ai/dsh-llm'
import type { Session } from '@deepseek-ai/dsh-session'

const model = { kind: 'model', provider: 'bench', model: 'm' } as const

export function buildLog(session: Session, events: number): Session {
  let turn = 0
  while (session.events.length < events) {
    turn++
    session.append('turn/start', { turn, trigger: { kind: 'prompt' } })
    session.append('user/message', { message: createUserMessage(`question ${turn}: what is in this repository?`) })
    session.append('step/start', { turn, step: 1 })
    const chunkSeqs: number[] = []
    for (let i = 0; i < 200; i++) {
      chunkSeqs.push(session.append('assistant/chunk', { turn, step: 1, chunk: { type: 'text-delta', index: 0, text: `word${i} ` } }).seq)
    }
    session.append('assistant/message', {
      turn,
      step: 1,
      message: createAssistantMessage(`answer ${turn}`, { source: model }),
      chunkSeqs,
      usage: { inputTokens: 1000, outputTokens: 200 },
      finishReason: { kind: 'stop' },
    })
    session.append('step/end', { turn, step: 1 })
    session.append('turn/end', { turn, reason: { kind: 'completed' } })
  }
  return session
}
