import type { TokenUsage } from '@deepseek-ai/dsh-llm'
import {
  describeAdapterConformance,
  FakeProvider,
  openAiChunk,
  openAiUsageChunk,
  openStream,
  reply,
  send,
  sse,
  type AdapterBehaviour,
  type Handler,
  type ProviderEvent,
} from '@deepseek-ai/dsh-testkit'
import { OpenAiAdapter } from '../src'

// Starts with a letter no test text ends with: the content redactor holds back a delta's tail that
// could begin the key, which would move that tail after the next block's delta.
const apiKey = 'Qconformance-key-0123456789'

/** The chat-completions `usage` object that the adapter maps back to `usage` (overlapping totals, as providers report them). */
function openAiUsage(usage: TokenUsage): Record<string, unknown> {
  const raw: Record<string, unknown> = {
    prompt_tokens: usage.inputTokens + (usage.cacheReadTokens ?? 0),
    completion_tokens: usage.outputTokens + (usage.reasoningTokens ?? 0),
  }
  if (usage.cacheReadTokens !== undefined) raw.prompt_tokens_details = { cached_tokens: usage.cacheReadTokens }
  if (usage.reasoningTokens !== undefined) raw.completion_tokens_details = { reasoning_tokens: usage.reasoningTokens }
  return raw
}

/** One provider event as the `data:` payload an OpenAI-compatible server streams. */
function payload(event: ProviderEvent): Record<string, unknown> {
  switch (event.type) {
    case 'reasoning':
      return openAiChunk({ reasoning_content: event.text })
    case 'text':
      return openAiChunk({ content: event.text })
    case 'tool-call': {
      const fn: Record<string, unknown> = { arguments: event.arguments }
      if (event.name !== undefined) fn.name = event.name
      const call: Record<string, unknown> = { index: event.call, function: fn }
      if (event.id !== undefined) Object.assign(call, { id: event.id, type: 'function' })
      return openAiChunk({ tool_calls: [call] })
    }
    case 'usage':
      return openAiUsageChunk(openAiUsage(event.usage))
  }
}

const finishReasons = { stop: 'stop', 'tool-calls': 'tool_calls', 'max-tokens': 'length' } as const

/** How an OpenAI-compatible server answers each failure class. */
function failing(behaviour: Extract<AdapterBehaviour, { kind: 'fail' }>): Handler {
  const error = (message: string, type: string, code?: string) => ({ error: { message, type, ...(code ? { code } : {}) } })
  switch (behaviour.failure) {
    case 'AUTH':
      return reply(401, error('Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key'))
    case 'RATE_LIMIT':
      return reply(429, error('Rate limit reached for requests.', 'requests', 'rate_limit_exceeded'), { 'retry-after-ms': String(behaviour.retryAfterMs) })
    case 'SERVER':
      return reply(503, error('The server is overloaded, please try again later.', 'server_error'))
    case 'TIMEOUT':
      throw new Error('the TIMEOUT case is served by the hanging server')
    case 'TRANSPORT':
      return (_request, res) => void res.socket?.destroy()
    case 'CONTEXT_OVERFLOW':
      return reply(400, error("This model's maximum context length is 65536 tokens. However, you requested 70000 tokens.", 'invalid_request_error', 'context_length_exceeded'))
    case 'BAD_REQUEST':
      return reply(400, error('Invalid value for temperature: must be at most 2.', 'invalid_request_error'))
    case 'EMPTY_RESPONSE':
      return sse([])
    case 'MALFORMED_STREAM':
      return sse([...(behaviour.events ?? []).map(payload), openAiChunk({}, 'tool_calls')])
  }
}

describeAdapterConformance('dsh-llm-openai', {
  async start() {
    const server = await FakeProvider.start()
    // TIMEOUT: a server that holds every request, so the deadline is met whether or not a request arrives before it
    // fires (under load it may not), and no handler is left queued for the next case.
    const hanging = await FakeProvider.start({ unhandled: 'hold' })
    const adapter = new OpenAiAdapter({ name: 'fake', baseUrl: server.url, apiKey })
    /** Queues `handler` for the next request; settles when its response closes (ended, or the client went away). */
    const answer = (handler: Handler): Promise<void> =>
      new Promise((resolve) =>
        server.handle(async (request, res, closed) => {
          void closed.then(resolve)
          await handler(request, res, closed)
        }),
      )
    return {
      provider: 'fake',
      model: 'test-model',
      secrets: [apiKey],
      arrange(behaviour) {
        if (behaviour.kind === 'answer') {
          const events = [...behaviour.events.map(payload), openAiChunk({}, finishReasons[behaviour.finish])]
          return { adapter, released: answer(sse(events)) }
        }
        if (behaviour.kind === 'fail') {
          // A short deadline only where the case needs one.
          if (behaviour.failure === 'TIMEOUT') return { adapter: new OpenAiAdapter({ name: 'fake', baseUrl: hanging.url, apiKey, requestTimeoutMs: 50 }), released: hanging.whenIdle() }
          return { adapter, released: answer(failing(behaviour)) }
        }
        let cut = () => {}
        const cutting = new Promise<void>((resolve) => (cut = resolve))
        const held: Handler = async (_request, res, closed) => {
          openStream(res)
          for (const event of behaviour.events) await send(res, payload(event))
          await Promise.race([closed, cutting])
          res.socket?.destroy()
        }
        return { adapter, released: answer(held), cut }
      },
      stop: async () => {
        await Promise.all([server.stop(), hanging.stop()])
      },
    }
  },
})
