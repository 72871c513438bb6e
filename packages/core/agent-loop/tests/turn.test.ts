import { describe, expect, it } from 'vitest'
import { echo, spine, trace, transcript } from '@deepseek-ai/dsh-testkit'

describe('a turn (R-LOOP-1…5)', () => {
  it('a followup runs one turn: claim, prompt, step, answer, close, in this exact log order', async () => {
    const { agent, model } = await spine({ model: { script: ['Hello there'] } })
    const a = await agent()
    a.followup('hi')
    await a.whenIdle()
    expect(trace(a.session)).toEqual([
      'inbox/enqueue next-turn "hi"',
      'inbox/dequeue',
      'turn/start 1 prompt',
      'step/start 1.1',
      'user/message "hi"',
      'request/header initial scripted/test-model',
      'assistant/chunk ×4',
      'assistant/message "Hello there" stop',
      'step/end 1.1',
      'turn/end 1 completed',
    ])
    expect(transcript(model.requests[0]!.messages)).toEqual(['user: hi'])
    expect(model.requests[0]!.system).toContain('You are a test agent.')
  })

  it('a tool round: the call, its result, and a second step that sees both', async () => {
    const { agent, model } = await spine({
      tools: [echo],
      model: { script: [{ toolCalls: [{ name: 'echo', arguments: { text: 'x' } }], answer: 'done' }] },
    })
    const a = await agent()
    a.followup('use the tool')
    await a.whenIdle()
    expect(trace(a.session)).toEqual([
      'inbox/enqueue next-turn "use the tool"',
      'inbox/dequeue',
      'turn/start 1 prompt',
      'step/start 1.1',
      'user/message "use the tool"',
      'request/header initial scripted/test-model',
      'assistant/chunk ×4',
      'assistant/message "[tool-call]" tool-calls',
      'tool/call echo',
      'tool/result ok "echo: x"',
      'step/end 1.1',
      'step/start 1.2',
      'assistant/chunk ×3',
      'assistant/message "done" stop',
      'step/end 1.2',
      'turn/end 1 completed',
    ])
    expect(transcript(model.requests[1]!.messages)).toEqual([
      'user: use the tool',
      'assistant: call echo({"text":"x"})',
      'user: result echo: x',
    ])
    expect(model.requests[1]!.tools?.map((tool) => tool.name)).toEqual(['echo'])
  })

  it('turns are numbered across the session and history accumulates', async () => {
    const { agent, model } = await spine({ model: { script: ['one', 'two'] } })
    const a = await agent()
    a.followup('first')
    a.followup('second')
    await a.whenIdle()
    expect(trace(a.session).filter((line) => line.startsWith('turn/'))).toEqual([
      'turn/start 1 prompt',
      'turn/end 1 completed',
      'turn/start 2 prompt',
      'turn/end 2 completed',
    ])
    expect(transcript(model.requests[1]!.messages)).toEqual(['user: first', 'assistant: one', 'user: second'])
  })
})

describe('the request header (R-LOOP-2, R-LOOP-3)', () => {
  it('is logged before dispatch only when the effective config, system text or tools change', async () => {
    const { agent, root, model } = await spine({
      tools: [echo],
      model: { script: ['one', 'two', 'three', 'four'], models: [{ id: 'test-model', reasoningEfforts: ['low', 'high'], defaultReasoningEffort: 'low' }] },
    })
    let effort: string | undefined
    root.on('agent/request', async (_a, _t, _s, _c, _signal, next) => ({ ...(await next()), ...(effort ? { reasoningEffort: effort } : {}) }))
    const a = await agent()
    const headers = () =>
      a.session.events.flatMap((event) => (event.type === 'request/header' ? [`${event.data.reason} ${event.data.reasoningEffort} ${event.data.tools.length} tools`] : []))
    a.followup('one')
    await a.whenIdle()
    a.followup('two')
    await a.whenIdle()
    expect(headers()).toEqual(['initial low 1 tools'])
    effort = 'high'
    a.followup('three')
    await a.whenIdle()
    root.systemPrompt.section({ name: 'house-rules', order: 50, text: 'Answer in French.' })
    a.followup('four')
    await a.whenIdle()
    expect(headers()).toEqual(['initial low 1 tools', 'change high 1 tools', 'change high 1 tools'])
    const last = a.session.events.filter((event) => event.type === 'request/header').at(-1)!
    expect(last.type === 'request/header' && last.data.system).toBe(model.requests[3]!.system)
    expect(model.requests[3]!.system).toContain('Answer in French.')
    expect(model.requests.map((request) => request.reasoningEffort)).toEqual(['low', 'low', 'high', 'high'])
  })
})
