import { Context } from 'cordis'
import { describe, expectTypeOf, it } from 'vitest'
import LlmService, {
  type AssembledResponse,
  type FinishReason,
  type LlmStreamCall,
  type PreparedCall,
  type StreamChunk,
  assemble,
} from '@deepseek-ai/dsh-llm'

// No declaration merging here: the root tsconfig compiles every package's
// tests together, so a merged variant would leak into other packages' types.

describe('public types', () => {
  it('ctx.llm is the service', () => {
    expectTypeOf<Context['llm']>().toEqualTypeOf<LlmService>()
    expectTypeOf<ReturnType<LlmService['prepareCall']>>().toEqualTypeOf<Promise<PreparedCall>>()
  })

  it('llm/stream listeners are typed', () => {
    const ctx = new Context()
    ctx.on('llm/stream', (call, next) => {
      expectTypeOf(call).toEqualTypeOf<LlmStreamCall>()
      expectTypeOf(call.config.provider).toEqualTypeOf<string>()
      expectTypeOf(next).returns.toEqualTypeOf<AsyncIterable<StreamChunk>>()
      return next()
    })
  })

  it('the assembler result speaks the shared vocabulary', () => {
    expectTypeOf<AssembledResponse['finishReason']>().toEqualTypeOf<FinishReason>()
    expectTypeOf(assemble([])).toEqualTypeOf<AssembledResponse>()
    expectTypeOf<AssembledResponse['content'][number]>().toExtend<{ type: string }>()
  })
})
