import type { StreamChunk } from '@deepseek-ai/dsh-llm'
import { openStream, send, type Handler } from '@deepseek-ai/dsh-testkit'

/** One server-sent event of the Messages API stream: its `event:` name is its data's `type`. */
export type WireEvent = { type: string } & Record<string, unknown>

/** The documented event stream, piece by piece (the shapes of the Messages API streaming reference). */
export const wire = {
  start: (usage: Record<string, number> = { input_tokens: 25, output_tokens: 1 }, model = 'claude-test'): WireEvent => ({
    type: 'message_start',
    message: { id: 'msg_test', type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage },
  }),
  text: (index: number, text = ''): WireEvent => ({ type: 'content_block_start', index, content_block: { type: 'text', text } }),
  thinking: (index: number): WireEvent => ({ type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } }),
  redacted: (index: number, data: string): WireEvent => ({ type: 'content_block_start', index, content_block: { type: 'redacted_thinking', data } }),
  toolUse: (index: number, id: string, name: string, input: Record<string, unknown> = {}): WireEvent => ({
    type: 'content_block_start',
    index,
    content_block: { type: 'tool_use', id, name, input },
  }),
  textDelta: (index: number, text: string): WireEvent => ({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } }),
  thinkingDelta: (index: number, thinking: string): WireEvent => ({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking } }),
  signature: (index: number, signature: string): WireEvent => ({ type: 'content_block_delta', index, delta: { type: 'signature_delta', signature } }),
  json: (index: number, partial_json: string): WireEvent => ({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } }),
  stop: (index: number): WireEvent => ({ type: 'content_block_stop', index }),
  delta: (stop_reason: string | null, usage: Record<string, number> = { output_tokens: 15 }): WireEvent => ({
    type: 'message_delta',
    delta: { stop_reason, stop_sequence: null },
    usage,
  }),
  end: (): WireEvent => ({ type: 'message_stop' }),
  ping: (): WireEvent => ({ type: 'ping' }),
  error: (type: string, message: string): WireEvent => ({ type: 'error', error: { type, message } }),
}

/** The SSE text of `events`, exactly as the server writes it. */
export function sseText(events: readonly WireEvent[]): string {
  return events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join('')
}

/** A handler that streams `events` as named server-sent events, then ends. */
export function stream(events: readonly WireEvent[], headers: Record<string, string> = {}): Handler {
  return async (_request, res) => {
    openStream(res, { 'request-id': 'req_test', ...headers })
    for (const event of events) await send(res, event, event.type)
    res.end()
  }
}

/** Drains a stream into an array. */
export async function collect(stream: AsyncIterable<StreamChunk>): Promise<StreamChunk[]> {
  const chunks: StreamChunk[] = []
  for await (const chunk of stream) chunks.push(chunk)
  return chunks
}
