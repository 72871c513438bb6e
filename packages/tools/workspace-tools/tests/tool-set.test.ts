import { join } from 'node:path'
import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import Tools, { effectOf } from '@deepseek-ai/dsh-tools'
import WorkspaceTools, { DEFAULT_SHELL } from '@deepseek-ai/dsh-workspace-tools'
import { mount, tempDir } from './helpers'

describe('the tool set', () => {
  it('offers seven tools; each declares its effect and whether calls may overlap', async () => {
    const root = tempDir()
    const { ctx } = await mount(root)
    expect(ctx.tools.schemas().map((schema) => [schema.name, Object.keys((schema.parameters as { properties: object }).properties)])).toEqual([
      ['edit_file', ['path', 'old_string', 'new_string', 'replace_all']],
      ['glob', ['pattern', 'path']],
      ['grep', ['pattern', 'path', 'glob', 'ignore_case', 'output']],
      ['list_dir', ['path']],
      ['read_file', ['path', 'offset', 'limit']],
      ['shell', ['command', 'timeout_ms']],
      ['write_file', ['path', 'content']],
    ])
    const args: Record<string, object> = {
      edit_file: { path: 'a', old_string: 'a', new_string: 'b' },
      glob: { pattern: '*' },
      grep: { pattern: 'a' },
      list_dir: {},
      read_file: { path: 'a' },
      shell: { command: 'true' },
      write_file: { path: 'a', content: '' },
    }
    const traits = ctx.tools.schemas().map(({ name }) => [
      name,
      effectOf(ctx.tools.definition(name)!),
      ctx.tools.isConcurrencySafe({ name, arguments: JSON.stringify(args[name]) }),
    ])
    expect(traits).toEqual([
      ['edit_file', 'write', false],
      ['glob', 'read', true],
      ['grep', 'read', true],
      ['list_dir', 'read', true],
      ['read_file', 'read', true],
      ['shell', 'execute', false],
      ['write_file', 'write', false],
    ])
  })

  it("every call has a deadline: the readers and writers take dsh-tools' default, shell's is a backstop behind its own timeout", async () => {
    const root = tempDir()
    const { ctx } = await mount(root)
    const deadlines = ctx.tools.schemas().map(({ name }) => [name, ctx.tools.definition(name)!.timeoutMs])
    expect(deadlines).toEqual([
      ['edit_file', undefined],
      ['glob', undefined],
      ['grep', undefined],
      ['list_dir', undefined],
      ['read_file', undefined],
      ['shell', DEFAULT_SHELL.maxTimeoutMs + DEFAULT_SHELL.killGraceMs + 30_000],
      ['write_file', undefined],
    ])
  })

  it('leaves out excluded tools, and takes its tools away when unloaded', async () => {
    const root = tempDir()
    const ctx = new Context()
    await ctx.plugin(Tools)
    const fiber = ctx.plugin(WorkspaceTools, { root, exclude: ['shell', 'write_file'] })
    await fiber
    expect(ctx.tools.schemas().map((schema) => schema.name)).toEqual(['edit_file', 'glob', 'grep', 'list_dir', 'read_file'])
    expect(ctx.workspaceTools.sandbox).toEqual({ kind: 'none', reason: 'the shell tool is excluded' })
    await fiber.dispose()
    expect(ctx.tools.schemas()).toEqual([])
  })

  it('does not start on a workspace that does not exist', async () => {
    const ctx = new Context()
    await ctx.plugin(Tools)
    const missing = join(tempDir(), 'nope')
    await expect(ctx.plugin(WorkspaceTools, { root: missing })).rejects.toMatchObject({
      code: 'WORKSPACE_ROOT',
      message: `the workspace directory ${missing} does not exist`,
    })
  })
})
