import type { LlmFailure } from '@deepseek-ai/dsh-llm'
import { ScriptedModel, type ScriptReply } from '@deepseek-ai/dsh-llm-scripted'
import { describeAdapterConformance, idealChunks, type AdapterBehaviour, type ProviderEvent } from '@deepseek-ai/dsh-testkit'

/**
 * A reply in the script's own terms when the events come in the order the
 * scripted model streams them (reasoning, text, then each tool call whole, at
 * most one usage snapshot, last), so the suite exercises its chunking; the
 * exact chunks (`chunks`, streamed verbatim) otherwise, e.g. for interleaved
 * tool calls or several usage snapshots.
 */
function scriptReply(events: readonly ProviderEvent[]): ScriptReply | undefined {
  const order = { reasoning: 0, text: 1, 'tool-call': 2, usage: 3 }
  const reasoning: string[] = []
  const text: string[] = []
  const calls: { id: string; name: string; arguments: string }[] = []
  const usages = events.filter((event) => event.type === 'usage')
  let stage = 0
  for (const event of events) {
    if (order[event.type] < stage || (event.type === 'usage' && usages.length > 1)) return undefined
    stage = order[event.type]
    if (event.type === 'reasoning') reasoning.push(event.text)
    else if (event.type === 'text') text.push(event.text)
    else if (event.type === 'tool-call') {
      if (event.call === calls.length && event.id !== undefined && event.name !== undefined) calls.push({ id: event.id, name: event.name, arguments: event.arguments })
      else if (event.call === calls.length - 1) calls[event.call]!.arguments += event.arguments
      else return undefined
    }
  }
  const reply: ScriptReply = { usage: usages.length === 1 ? usages[0]!.usage : false }
  if (reasoning.length > 0) reply.reasoning = reasoning
  if (text.length > 0) reply.text = text
  if (calls.length > 0) reply.toolCalls = calls
  return reply
}

function reply(behaviour: Exclude<AdapterBehaviour, { kind: 'hold' }>): ScriptReply {
  if (behaviour.kind === 'answer') {
    const scripted = scriptReply(behaviour.events)
    return scripted === undefined ? { chunks: idealChunks(behaviour.events, behaviour.finish) } : { ...scripted, finish: behaviour.finish }
  }
  // The scripted model is its own provider: a script states a provider failure as the error it
  // ends with (duplicate tool-call ids included: a script that streamed them would stream them as
  // given, which is what the loop's own tests of a broken provider rely on).
  const error: LlmFailure = { code: behaviour.failure, message: `the scripted provider reports ${behaviour.failure}` }
  if (behaviour.retryAfterMs !== undefined) error.retryAfterMs = behaviour.retryAfterMs
  return { error, usage: false }
}

describeAdapterConformance('dsh-llm-scripted', {
  start() {
    const model = new ScriptedModel()
    return {
      provider: 'scripted',
      model: 'test-model',
      arrange(behaviour) {
        if (behaviour.kind !== 'hold') {
          model.enqueue(reply(behaviour))
          return { adapter: model }
        }
        // A held stream is a controlled call: its events are pushed once it starts, then it waits;
        // `cut()` makes it throw a TRANSPORT failure, as a cut connection would.
        const call = model.control()
        void call.started.then(() => call.push(...idealChunks(behaviour.events)))
        return { adapter: model, released: call.closed, cut: () => void call.throw() }
      },
    }
  },
})
