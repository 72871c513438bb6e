import { describe, expect, it } from 'vitest'
import { createUserMessage, type GenerateOptions, type LlmAdapter, type Message } from '@deepseek-ai/dsh-llm'
import { ScriptedModel } from '@deepseek-ai/dsh-llm-scripted'
import { ReadOnlyHistoryError } from '@deepseek-ai/dsh-session'
import { echo, spine, transcript } from '@deepseek-ai/dsh-testkit'

/** An adapter in front of `model` that runs `onCall` on what it receives first. */
function adapter(model: ScriptedModel, onCall: (options: GenerateOptions) => void): LlmAdapter {
  return {
    stream(options) {
      onCall(options)
      return model.stream(options)
    },
    resolveModel: (id) => model.resolveModel(id),
  }
}

const script = [{ toolCalls: [{ name: 'echo', arguments: { text: 'x' } }], answer: 'done' }, 'second answer', 'third answer']

/** Three turns (the first with a tool round: four model calls) through the provider `via`. */
async function run(via: (model: ScriptedModel) => LlmAdapter) {
  const world = await spine({ tools: [echo], model: { script } })
  world.root.llm.registerAdapter(['via'], via(world.model))
  const agent = await world.agent('a', { provider: 'via', model: 'test-model' })
  for (const prompt of ['use the tool', 'and again', 'once more']) {
    agent.followup(prompt)
    await agent.whenIdle()
  }
  return { ...world, agent }
}

const expectedRequests = [
  ['user: use the tool'],
  ['user: use the tool', 'assistant: call echo({"text":"x"})', 'user: result echo: x'],
  ['user: use the tool', 'assistant: call echo({"text":"x"})', 'user: result echo: x', 'assistant: done', 'user: and again'],
  [
    'user: use the tool',
    'assistant: call echo({"text":"x"})',
    'user: result echo: x',
    'assistant: done',
    'user: and again',
    'assistant: second answer',
    'user: once more',
  ],
]

describe('adapters get an immutable snapshot of the history (issue 15.4, R-SES-2)', () => {
  it('an adapter that keeps the messages array sees, after later steps and turns, exactly what each request had', async () => {
    const kept: Array<readonly Message[]> = []
    const copies: Message[][] = []
    const { agent } = await run((model) =>
      adapter(model, (options) => {
        kept.push(options.messages)
        copies.push([...options.messages])
      }),
    )
    expect(agent.session.deriveMessages().length).toBe(8)
    expect(kept.map(transcript)).toEqual(expectedRequests)
    expect(kept.map((messages) => [...messages])).toEqual(copies)
  })

  it('an adapter that writes to the array (unshift, push, index assignment) gets a TypeError each time, and no request changes', async () => {
    const system = createUserMessage('You are a pirate.')
    const refused: string[] = []
    const { agent, model } = await run((inner) =>
      adapter(inner, (options) => {
        const messages = options.messages as Message[]
        const writes: Array<[string, () => unknown]> = [
          ['unshift', () => messages.unshift(system)],
          ['push', () => messages.push(system)],
          ['index', () => (messages[0] = system)],
        ]
        for (const [name, write] of writes) {
          try {
            write()
          } catch (error) {
            if (error instanceof ReadOnlyHistoryError && error instanceof TypeError) refused.push(name)
          }
        }
      }),
    )
    expect(refused).toEqual(Array.from({ length: 4 }, () => ['unshift', 'push', 'index']).flat())
    expect(model.requests.map((request) => transcript(request.messages))).toEqual(expectedRequests)
    expect(agent.session.events.filter((event) => event.type === 'turn/end').map((event) => event.data.reason.kind)).toEqual([
      'completed',
      'completed',
      'completed',
    ])
  })

  it("the scripted model's estimated input tokens over a multi-turn run are what a full count of each request gives", async () => {
    const { agent, model } = await run((inner) => inner)
    const logged = agent.session.events.flatMap((event) => (event.type === 'assistant/message' ? [event.data.usage?.inputTokens] : []))
    const recounted: Array<number | undefined> = []
    for (const request of model.requests) {
      // A new model counts each recorded request (a plain copy) from its first message.
      const fresh = new ScriptedModel({ script: ['x'], record: false })
      for await (const chunk of fresh.stream({ ...request, messages: [...request.messages] })) {
        if (chunk.type === 'usage') recounted.push(chunk.usage.inputTokens)
      }
    }
    expect(recounted).toHaveLength(4)
    expect(logged).toEqual(recounted)
    expect(recounted.every((tokens, i) => i === 0 || tokens! > recounted[i - 1]!)).toBe(true)
  })
})
