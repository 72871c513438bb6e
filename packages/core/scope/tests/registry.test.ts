import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import { ScopedRegistry, scoped, type ScopedChange } from '@deepseek-ai/dsh-scope'

describe('ScopedRegistry', () => {
  it('reverts an entry with the fiber that registered it', async () => {
    const root = new Context()
    const registry = new ScopedRegistry<string>()
    const fiber = root.plugin({ apply: (ctx: Context) => void registry.register(ctx, 'read', 'v1') })
    await fiber
    expect(registry.get('read')).toBe('v1')
    await fiber.dispose()
    expect(registry.get('read')).toBeUndefined()
    expect(registry.entries()).toEqual([])
  })

  it('resolves agent-local entries over global ones and hides other agents entries', () => {
    const root = new Context()
    const registry = new ScopedRegistry<string>()
    registry.register(root, 'read', 'global-read')
    registry.register(root, 'write', 'global-write')
    registry.register(scoped(root, 'a'), 'read', 'a-read')
    registry.register(scoped(root, 'b'), 'search', 'b-search')

    expect(registry.get('read')).toBe('global-read')
    expect(registry.get('read', 'a')).toBe('a-read')
    expect(registry.get('read', 'b')).toBe('global-read')
    expect(registry.get('search')).toBeUndefined()
    expect(registry.get('search', 'a')).toBeUndefined()
    expect(registry.get('search', 'b')).toBe('b-search')
    expect(registry.values()).toEqual(['global-read', 'global-write'])
    expect(registry.values('a')).toEqual(['a-read', 'global-write'])
    expect(registry.values('b')).toEqual(['global-read', 'b-search', 'global-write'])
  })

  it('the explicit disposer reverts early and is idempotent', () => {
    const registry = new ScopedRegistry<number>()
    const root = new Context()
    const dispose = registry.register(root, 'k', 1)
    dispose()
    dispose()
    expect(registry.has('k')).toBe(false)
    expect(registry.version).toBe(2)
  })

  it('stacks registrations of one key: the newest wins and disposing it uncovers the older one', () => {
    const registry = new ScopedRegistry<number>()
    const removeOld = registry.add('k', 1)
    const removeNew = registry.add('k', 2)
    expect(registry.get('k')).toBe(2)
    removeNew()
    expect(registry.get('k')).toBe(1)
    removeOld()
    expect(registry.has('k')).toBe(false)
  })

  it('sorts views by key so a reload does not reorder them', async () => {
    const root = new Context()
    const registry = new ScopedRegistry<string>()
    const plugin = { apply: (ctx: Context) => void registry.register(ctx, 'alpha', 'a') }
    registry.register(root, 'beta', 'b')
    const fiber = root.plugin(plugin)
    await fiber
    const before = registry.keys()
    await fiber.dispose()
    await root.plugin(plugin)
    expect(registry.keys()).toEqual(before)
    expect(before).toEqual(['alpha', 'beta'])
  })

  it('caches a frozen view until the next change', () => {
    const registry = new ScopedRegistry<number>()
    registry.add('a', 1)
    const first = registry.entries()
    expect(registry.entries()).toBe(first)
    expect(Object.isFrozen(first)).toBe(true)
    registry.add('b', 2)
    expect(registry.entries()).not.toBe(first)
  })

  it('reports every add and remove after the registry reflects it', () => {
    const seen: string[] = []
    const registry: ScopedRegistry<number> = new ScopedRegistry<number>({
      onChange: (change: ScopedChange<number>) =>
        void seen.push(`${change.kind}:${change.entry.key}:${change.entry.subject ?? '*'}:${registry.has(change.entry.key, change.entry.subject)}`),
    })
    const remove = registry.add('k', 1, 'a')
    remove()
    expect(seen).toEqual(['add:k:a:true', 'remove:k:a:false'])
  })

  it('hot replacement: dispose and re-plug the registering plugin while lookups continue, leaving nothing stale', async () => {
    const root = new Context()
    const registry = new ScopedRegistry<{ version: number }>()
    let version = 0
    const plugin = {
      apply: (ctx: Context) => {
        version++
        registry.register(ctx, 'tool', { version })
        registry.register(scoped(ctx, 'a'), 'tool', { version: version * 100 })
      },
    }
    const observed: Array<number | undefined> = []
    let running = true
    const reader = (async () => {
      while (running) {
        observed.push(registry.get('tool')?.version)
        observed.push(registry.get('tool', 'a')?.version)
        await Promise.resolve()
      }
    })()

    let fiber = root.plugin(plugin)
    await fiber
    for (let i = 0; i < 5; i++) {
      await fiber.dispose()
      fiber = root.plugin(plugin)
      await fiber
    }
    running = false
    await reader

    expect(registry.get('tool')).toEqual({ version: 6 })
    expect(registry.get('tool', 'a')).toEqual({ version: 600 })
    expect(registry.entries()).toHaveLength(1)
    expect(registry.entries('a')).toHaveLength(1)
    // Every lookup saw either nothing (between dispose and re-plug) or a live registration.
    const live = new Set([undefined, 1, 2, 3, 4, 5, 6, 100, 200, 300, 400, 500, 600])
    expect(observed.every((v) => live.has(v))).toBe(true)
    await fiber.dispose()
    expect(registry.entries()).toEqual([])
    expect(registry.entries('a')).toEqual([])
  })
})
