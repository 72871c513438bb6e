import { Context } from 'cordis'
import Sessions, { MemorySessionPersistence, memoryPersistence } from '@deepseek-ai/dsh-session'
import { describePersistenceContract } from '@deepseek-ai/dsh-testkit'

// The contract against the reference backend, dsh-session's in-memory one. It runs here rather than
// in dsh-session's tests so that dsh-session need not depend on the kit (which depends on it).

describePersistenceContract('memory (storage only)', () => {
  const backend = new MemorySessionPersistence()
  return { backend, reopen: () => backend.reopen() }
})

describePersistenceContract('memory (mounted with memoryPersistence)', async () => {
  const ctx = new Context()
  await ctx.plugin(Sessions)
  const backend = new MemorySessionPersistence()
  const fiber = ctx.plugin(memoryPersistence, { backend })
  await fiber
  return { backend, reopen: () => backend.reopen(), ctx, cleanup: () => fiber.dispose() }
})
