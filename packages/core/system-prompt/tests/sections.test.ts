import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import SystemPrompt, { DEFAULT_IDENTITY, DEFAULT_PERSONA } from '@deepseek-ai/dsh-system-prompt'
import { fakeAgent, mountPrompt, vars } from './helpers'

describe('sections', () => {
  it('with no config, the prompt is the default identity, persona and environment', async () => {
    const root = new Context()
    await root.plugin(SystemPrompt)
    const { system, tools } = await root.systemPrompt.assembleContextFor(fakeAgent(root, 'a'), vars)
    expect(system).toBe(
      `${DEFAULT_IDENTITY}\n\n${DEFAULT_PERSONA}\n\nEnvironment:\n- Working directory: /work/project\n- Model: demo (scripted)`,
    )
    expect(tools).toEqual([])
  })

  it('renders in (order, name) order, trimmed, blank-line separated, leaving empty sections out', async () => {
    const { root } = await mountPrompt({ identity: 'IDENTITY', persona: '' })
    const agent = fakeAgent(root, 'a')
    root.systemPrompt.section({ name: 'tools-guide', order: 500, text: '  Use read_file to read.\n' })
    root.systemPrompt.section({ name: 'b-rules', order: 200, text: 'Rule B.' })
    root.systemPrompt.section({ name: 'a-rules', order: 200, text: 'Rule A.' })
    root.systemPrompt.section({ name: 'silent', order: 300, render: () => '   ' })
    root.systemPrompt.section({ name: 'project', order: 2000, render: (v) => `Project: ${v.project ?? 'unknown'}` })
    const { system } = await root.systemPrompt.assembleContextFor(agent, { ...vars, project: 'dsh' })
    expect(system).toBe(
      [
        'IDENTITY',
        'Rule A.',
        'Rule B.',
        'Use read_file to read.',
        'Environment:\n- Working directory: /work/project\n- Model: demo (scripted)',
        'Project: dsh',
      ].join('\n\n'),
    )
  })

  it('the environment section leaves out the lines of absent variables', async () => {
    const { root } = await mountPrompt({ identity: 'I', persona: '' })
    const { system } = await root.systemPrompt.assembleContextFor(fakeAgent(root, 'a'), { provider: 'p', model: 'm' })
    expect(system).toBe('I\n\nEnvironment:\n- Model: m (p)')
  })

  it('agent-local sections apply to that agent only (R-SP-2)', async () => {
    const { root } = await mountPrompt()
    const a = fakeAgent(root, 'a')
    const b = fakeAgent(root, 'b')
    a.ctx.systemPrompt.section({ name: 'role', order: 150, text: 'You review code.' })
    const forA = await root.systemPrompt.assembleContextFor(a, vars)
    const forB = await root.systemPrompt.assembleContextFor(b, vars)
    expect(forA.system.split('\n\n').slice(0, 3)).toEqual(['IDENTITY', 'PERSONA', 'You review code.'])
    expect(forB.system).not.toContain('You review code.')
  })

  it('a section named like a built-in shadows it: per agent (persona), or globally (identity)', async () => {
    const { root } = await mountPrompt()
    const a = fakeAgent(root, 'a')
    const b = fakeAgent(root, 'b')
    a.ctx.systemPrompt.section({ name: 'persona', order: 100, text: 'Terse reviewer persona.' })
    root.systemPrompt.section({ name: 'identity', order: 0, text: 'Custom identity.' })
    root.systemPrompt.section({ name: 'environment', order: 1000, text: '' })
    expect((await root.systemPrompt.assembleContextFor(a, vars)).system).toBe('Custom identity.\n\nTerse reviewer persona.')
    expect((await root.systemPrompt.assembleContextFor(b, vars)).system).toBe('Custom identity.\n\nPERSONA')
  })

  it('a section reverts with the fiber that registered it; the disposer removes it early', async () => {
    const { root } = await mountPrompt({ identity: 'I', persona: '' })
    const agent = fakeAgent(root, 'a')
    const fiber = root.plugin({
      inject: ['systemPrompt'],
      apply: (ctx: Context) => void ctx.systemPrompt.section({ name: 'plugin', order: 10, text: 'From a plugin.' }),
    })
    await fiber
    const remove = root.systemPrompt.section({ name: 'early', order: 20, text: 'Removed early.' })
    const noEnv = { provider: '', model: '' }
    expect((await root.systemPrompt.assembleContextFor(agent, noEnv)).system).toBe('I\n\nFrom a plugin.\n\nRemoved early.')
    remove()
    await fiber.dispose()
    expect((await root.systemPrompt.assembleContextFor(agent, noEnv)).system).toBe('I')
  })

  it('sectionFor gives one agent a section before it exists, bound to no fiber, until its remover runs', async () => {
    const { root } = await mountPrompt()
    const changes: unknown[] = []
    root.on('system-prompt/change', (change) => void changes.push(change))
    let remove = () => {}
    // Registered by a plugin whose fiber then goes away: the section stays (it belongs to no fiber).
    const fiber = root.plugin({
      inject: ['systemPrompt'],
      apply: (ctx: Context) => void (remove = ctx.systemPrompt.sectionFor('child', { name: 'persona', order: 100, text: 'Child persona.' })),
    })
    await fiber
    await fiber.dispose()
    const child = fakeAgent(root, 'child')
    const other = fakeAgent(root, 'other')
    expect((await root.systemPrompt.assembleContextFor(child, vars)).system.split('\n\n').slice(0, 2)).toEqual(['IDENTITY', 'Child persona.'])
    expect((await root.systemPrompt.assembleContextFor(other, vars)).system.split('\n\n').slice(0, 2)).toEqual(['IDENTITY', 'PERSONA'])
    // Only the remover takes it (twice is harmless).
    remove()
    remove()
    expect((await root.systemPrompt.assembleContextFor(child, vars)).system.split('\n\n').slice(0, 2)).toEqual(['IDENTITY', 'PERSONA'])
    expect(changes).toEqual([
      { reason: 'section', agentId: 'child', name: 'persona' },
      { reason: 'section', agentId: 'child', name: 'persona' },
    ])
    expect(() => root.systemPrompt.sectionFor('', { name: 'x', order: 0, text: 'x' })).toThrow(expect.objectContaining({ code: 'INVALID_SECTION' }))
    expect(() => root.systemPrompt.sectionFor('child', { name: '', order: 0, text: 'x' })).toThrow(expect.objectContaining({ code: 'INVALID_SECTION' }))
  })

  it('refuses malformed sections with INVALID_SECTION', async () => {
    const { root } = await mountPrompt()
    const bad: unknown[] = [
      null,
      { name: '', order: 0, text: 'x' },
      { name: 'x', order: Number.NaN, text: 'x' },
      { name: 'x', order: 0 },
      { name: 'x', order: 0, text: 'x', render: () => 'y' },
      { name: 'x', order: 0, text: 3 },
      { name: 'x', order: 0, render: 'y' },
    ]
    for (const section of bad) {
      expect(() => root.systemPrompt.section(section as never)).toThrow(expect.objectContaining({ code: 'INVALID_SECTION' }))
    }
  })

  it('rejects non-string variables with INVALID_VARS and a failing render with RENDER_FAILED naming the section', async () => {
    const { root } = await mountPrompt()
    const agent = fakeAgent(root, 'a')
    await expect(root.systemPrompt.assembleContextFor(agent, { ...vars, cwd: 3 as never })).rejects.toMatchObject({
      code: 'INVALID_VARS',
      message: 'prompt variable "cwd" must be a string',
    })
    await expect(root.systemPrompt.assembleContextFor(agent, { model: 'm' } as never)).rejects.toMatchObject({ code: 'INVALID_VARS' })
    const remove = root.systemPrompt.section({
      name: 'broken',
      order: 5,
      render: () => {
        throw new Error('missing template')
      },
    })
    await expect(root.systemPrompt.assembleContextFor(agent, vars)).rejects.toMatchObject({
      code: 'RENDER_FAILED',
      message: 'prompt section "broken" failed to render: missing template',
    })
    remove()
    root.systemPrompt.section({ name: 'wrong', order: 5, render: () => 42 as never })
    await expect(root.systemPrompt.assembleContextFor(agent, vars)).rejects.toMatchObject({
      code: 'RENDER_FAILED',
      message: 'prompt section "wrong" rendered number, not a string',
    })
  })

  it('a section that throws something other than an Error still fails with RENDER_FAILED naming the section, with what it said', async () => {
    const thrown: [string, unknown][] = [
      ['an error object of another realm or library', { code: 'E_TEMPLATE', message: 'unknown placeholder {user}' }],
      ['an object with no prototype', Object.assign(Object.create(null) as object, { reason: 'x' })],
      ['a string', 'no template'],
    ]
    const failures: unknown[] = []
    for (const [name, value] of thrown) {
      const { root } = await mountPrompt()
      root.systemPrompt.section({
        name,
        order: 5,
        render: () => {
          throw value
        },
      })
      failures.push(await root.systemPrompt.assembleContextFor(fakeAgent(root, 'a'), vars).then(
        () => 'rendered',
        (error: { code?: unknown; message?: unknown }) => ({ code: error.code, message: error.message }),
      ))
    }
    expect(failures).toEqual([
      { code: 'RENDER_FAILED', message: 'prompt section "an error object of another realm or library" failed to render: unknown placeholder {user}' },
      { code: 'RENDER_FAILED', message: 'prompt section "an object with no prototype" failed to render: it threw a value that is not an Error' },
      { code: 'RENDER_FAILED', message: 'prompt section "a string" failed to render: no template' },
    ])
  })
})
