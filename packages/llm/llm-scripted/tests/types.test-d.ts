import { describe, expectTypeOf, it } from 'vitest'
import type { LlmAdapter, LlmRequest } from '@deepseek-ai/dsh-llm'
import ScriptedPlugin, { ScriptedModel, type CloseReason, type ControlledCall, type Responder, type ScriptTurn } from '@deepseek-ai/dsh-llm-scripted'

describe('public types', () => {
  it('the model is an adapter and the documented script shapes type-check', () => {
    expectTypeOf<ScriptedModel>().toExtend<LlmAdapter>()
    const script: ScriptTurn[] = [
      'text',
      { reasoning: ['a', 'b'], signature: 's', text: 'x', finish: 'max-tokens', usage: false },
      { toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }], answer: { toolCalls: [{ id: 'c', name: 'x', arguments: '{' }], answer: 'done' } },
      { error: { code: 'RATE_LIMIT', message: 'slow down' } },
      { chunks: [{ type: 'finish', reason: { kind: 'stop' } }], throw: 'cut' },
    ]
    expectTypeOf(script).toExtend<readonly ScriptTurn[]>()
    // @ts-expect-error a reply ends with one of the known finish reasons
    const bad: ScriptTurn = { finish: 'done' }
    void bad
  })

  it('responders and controls are typed', () => {
    expectTypeOf<Parameters<Responder>>().toEqualTypeOf<[LlmRequest, number]>()
    expectTypeOf<ControlledCall['closed']>().toEqualTypeOf<Promise<CloseReason>>()
    expectTypeOf<ControlledCall['started']>().toEqualTypeOf<Promise<LlmRequest>>()
    expectTypeOf(ScriptedPlugin.inject).toEqualTypeOf<string[]>()
  })
})
