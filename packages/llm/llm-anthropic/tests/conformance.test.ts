import {
  describeAdapterConformance,
  FakeProvider,
  openStream,
  reply,
  send,
  type AdapterBehaviour,
  type AnswerFinish,
  type Handler,
  type ProviderEvent,
} from '@deepseek-ai/dsh-testkit'
import { AnthropicAdapter } from '../src'
import { wire, type WireEvent } from './support/wire'

const apiKey = 'Qconformance-anthropic-key-0123456789'

/**
 * Turns provider-neutral events into the Messages API stream of one answer:
 * the reasoning and the text each open one block when first seen, each tool
 * call opens its own (`tool_use`, then `input_json_delta`s), and a usage
 * snapshot is a `message_delta` without a stop reason. Blocks stay open
 * until the end, so fragments may interleave as the events do.
 */
class Wire {
  private next = 0
  private readonly open = new Map<string, number>()

  constructor(private readonly out: WireEvent[] = [wire.start({ input_tokens: 0, output_tokens: 0 })]) {}

  private block(key: string, start: (index: number) => WireEvent): number {
    let index = this.open.get(key)
    if (index === undefined) {
      index = this.next++
      this.open.set(key, index)
      this.out.push(start(index))
    }
    return index
  }

  push(event: ProviderEvent): this {
    switch (event.type) {
      case 'reasoning':
        this.out.push(wire.thinkingDelta(this.block('reasoning', wire.thinking), event.text))
        break
      case 'text':
        this.out.push(wire.textDelta(this.block('text', (i) => wire.text(i)), event.text))
        break
      case 'tool-call': {
        const index = this.block(`call ${event.call}`, (i) => wire.toolUse(i, event.id!, event.name!))
        if (event.arguments) this.out.push(wire.json(index, event.arguments))
        break
      }
      case 'usage': {
        const { inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens } = event.usage
        const usage: Record<string, number> = { input_tokens: inputTokens, output_tokens: outputTokens }
        if (cacheReadTokens !== undefined) usage.cache_read_input_tokens = cacheReadTokens
        if (cacheWriteTokens !== undefined) usage.cache_creation_input_tokens = cacheWriteTokens
        this.out.push({ type: 'message_delta', delta: { stop_reason: null, stop_sequence: null }, usage })
        break
      }
    }
    return this
  }

  /** The events so far, every open block stopped, and the end with `finish`'s stop reason. */
  end(finish: AnswerFinish): WireEvent[] {
    const reasons = { stop: 'end_turn', 'tool-calls': 'tool_use', 'max-tokens': 'max_tokens' } as const
    for (const index of [...this.open.values()].sort((a, b) => a - b)) this.out.push(wire.stop(index))
    return [...this.out, { type: 'message_delta', delta: { stop_reason: reasons[finish], stop_sequence: null } }, wire.end()]
  }

  get events(): WireEvent[] {
    return this.out
  }
}

const answer = (events: readonly ProviderEvent[], finish: AnswerFinish): WireEvent[] => events.reduce((w, e) => w.push(e), new Wire()).end(finish)

function streamOf(events: readonly WireEvent[]): Handler {
  return async (_request, res) => {
    openStream(res)
    for (const event of events) await send(res, event, event.type)
    res.end()
  }
}

/** How the Messages API answers each failure class. */
function failing(behaviour: Extract<AdapterBehaviour, { kind: 'fail' }>): Handler {
  const error = (type: string, message: string) => ({ type: 'error', error: { type, message } })
  switch (behaviour.failure) {
    case 'AUTH':
      return reply(401, error('authentication_error', 'invalid x-api-key'))
    case 'RATE_LIMIT':
      return reply(429, error('rate_limit_error', 'Rate limited.'), { 'retry-after': String(behaviour.retryAfterMs! / 1000) })
    case 'SERVER':
      return reply(529, error('overloaded_error', 'Overloaded'))
    case 'TIMEOUT':
      throw new Error('the TIMEOUT case is served by the hanging server')
    case 'TRANSPORT':
      return (_request, res) => void res.socket?.destroy()
    case 'CONTEXT_OVERFLOW':
      return reply(400, error('invalid_request_error', 'prompt is too long: 210000 tokens > 200000 maximum'))
    case 'BAD_REQUEST':
      return reply(400, error('invalid_request_error', 'temperature: range: 0..1'))
    case 'EMPTY_RESPONSE':
      return streamOf([])
    case 'MALFORMED_STREAM':
      return streamOf(answer(behaviour.events ?? [], 'tool-calls'))
  }
}

describeAdapterConformance('dsh-llm-anthropic', {
  unsupported: {
    // Cumulative snapshots and cache counts are tested in streaming.test.ts against the real field names.
    usage: 'the Messages API counts thinking inside output_tokens and never reports it apart, so the case\'s reasoningTokens cannot come back',
  },
  async start() {
    const server = await FakeProvider.start()
    // TIMEOUT: a server that holds every request, so the deadline is met whether or not a request arrives before it
    // fires (under load it may not), and no handler is left queued for the next case.
    const hanging = await FakeProvider.start({ unhandled: 'hold' })
    const adapter = new AnthropicAdapter({ name: 'claude', baseUrl: server.origin, apiKey })
    /** Queues `handler` for the next request; settles when its response closes (ended, or the client went away). */
    const handle = (handler: Handler): Promise<void> =>
      new Promise((resolve) =>
        server.handle(async (request, res, closed) => {
          void closed.then(resolve)
          await handler(request, res, closed)
        }),
      )
    return {
      provider: 'claude',
      model: 'claude-test',
      secrets: [apiKey],
      arrange(behaviour) {
        if (behaviour.kind === 'answer') return { adapter, released: handle(streamOf(answer(behaviour.events, behaviour.finish))) }
        if (behaviour.kind === 'fail') {
          // A short deadline only where the case needs one.
          if (behaviour.failure === 'TIMEOUT') return { adapter: new AnthropicAdapter({ name: 'claude', baseUrl: hanging.origin, apiKey, requestTimeoutMs: 50 }), released: hanging.whenIdle() }
          return { adapter, released: handle(failing(behaviour)) }
        }
        let cut = () => {}
        const cutting = new Promise<void>((resolve) => (cut = resolve))
        const held: Handler = async (_request, res, closed) => {
          openStream(res)
          for (const event of behaviour.events.reduce((w, e) => w.push(e), new Wire()).events) await send(res, event, event.type)
          await Promise.race([closed, cutting])
          res.socket?.destroy()
        }
        return { adapter, released: handle(held), cut }
      },
      stop: async () => {
        await Promise.all([server.stop(), hanging.stop()])
      },
    }
  },
})
