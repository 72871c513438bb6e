import { describe, expect, it } from 'vitest'
import { closedTurn, setup, typesOf } from './helpers'

describe("a fork's events as a seed (issue 15.5)", () => {
  it("prepare({ seed: fork.events }) takes the fork's parent link and cwd, and the child has one session/meta of its own", async () => {
    const root = await setup()
    const parent = root.sessions.create('parent', { cwd: '/repo' })
    closedTurn(parent, 1)
    closedTurn(parent, 2)
    const fork = root.sessions.fork(parent, 7)
    const child = root.sessions.prepare('child', { seed: fork.events })
    expect(child.meta).toEqual({ cwd: '/repo', parentSession: 'parent', seedLength: 7, createdAt: expect.any(Number), version: 1 })
    expect(typesOf(child)).toEqual(typesOf(fork))
    expect(child.events.slice(1)).toEqual(parent.events.slice(0, 7).map((event, i) => ({ ...event, seq: i + 1 })))
    expect(child.deriveMessages()).toEqual(fork.deriveMessages())
    // The same child as the explicit form (the prefix without the fork's meta, and the link).
    const explicit = root.sessions.prepare('explicit', { meta: { cwd: '/repo', parentSession: parent.id }, seed: fork.events.slice(1) })
    expect(explicit.events.slice(1)).toEqual(child.events.slice(1))
    expect({ ...explicit.meta, createdAt: 0 }).toEqual({ ...child.meta, createdAt: 0 })
  })

  it('a copy of the events works as well (the fork is recognised by its own meta event), and meta.cwd wins over the fork\'s', async () => {
    const root = await setup()
    const parent = root.sessions.create('parent', { cwd: '/repo' })
    closedTurn(parent, 1)
    const fork = root.sessions.fork(parent)
    const child = root.sessions.prepare('child', { meta: { cwd: '/worktree' }, seed: [...fork.events] })
    expect(child.meta).toEqual({ cwd: '/worktree', parentSession: 'parent', seedLength: 7, createdAt: expect.any(Number), version: 1 })
    expect(typesOf(child)).toEqual(['session/meta', ...typesOf(parent)])
  })

  it('refuses a meta.parentSession that contradicts the fork (INVALID_ARGUMENT), naming both; the same one is accepted', async () => {
    const root = await setup()
    const parent = root.sessions.create('parent')
    closedTurn(parent, 1)
    const fork = root.sessions.fork(parent, undefined, 'f')
    expect(() => root.sessions.prepare('child', { meta: { parentSession: 'other' as never }, seed: fork.events })).toThrow(
      expect.objectContaining({
        code: 'INVALID_ARGUMENT',
        message:
          'cannot seed session "child" with the events of fork "f": they fork "parent", but meta.parentSession says "other"; leave meta.parentSession out (the fork\'s parent is taken) or fork the session you mean',
      }),
    )
    expect(root.sessions.prepare('child', { meta: { parentSession: parent.id }, seed: fork.events }).meta.parentSession).toBe('parent')
  })

  it('the events of a fork that was entered are a plain prefix: that fork is a session of its own now', async () => {
    const root = await setup()
    const parent = root.sessions.create('parent')
    closedTurn(parent, 1)
    const fork = root.sessions.fork(parent, undefined, 'f')
    root.sessions.enter(fork)
    const child = root.sessions.prepare('child', { meta: { parentSession: fork.id }, seed: fork.events })
    expect(child.meta.parentSession).toBe('f')
    expect(typesOf(child)).toEqual(['session/meta', ...typesOf(fork)])
  })

  it('fork() of a private fork still copies that fork whole (the recognition applies to seeds given to prepare)', async () => {
    const root = await setup()
    const parent = root.sessions.create('parent')
    closedTurn(parent, 1)
    const fork = root.sessions.fork(parent, undefined, 'f')
    const grandchild = root.sessions.fork(fork, undefined, 'g')
    expect(grandchild.meta.parentSession).toBe('f')
    expect(typesOf(grandchild)).toEqual(['session/meta', ...typesOf(fork)])
  })
})
