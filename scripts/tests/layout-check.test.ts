import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { lineCount, oversizedSources } from '../file-size.mjs'
import { components, describeCycle, findImportCycles } from '../import-cycles.mjs'
import { layoutReport } from '../layout-check.mjs'
import { loopDependencyProblems } from '../loop-dependents.mjs'
import { indexCode, skeletonProblems } from '../package-skeleton.mjs'
import { importsOf } from '../source-graph.mjs'

const repoRoot = join(import.meta.dirname, '../..')
const script = join(import.meta.dirname, '../layout-check.mjs')
const temps: string[] = []

afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** A made-up repository with `files` (path → text; objects are written as JSON). */
function repo(files: Record<string, string | object>): string {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-layout-'))
  temps.push(dir)
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true })
    writeFileSync(join(dir, path), typeof content === 'string' ? content : JSON.stringify(content, null, 2))
  }
  return dir
}

/** A package.json of a workspace package whose `.` export is its `src/index.ts`. */
function manifest(name: string, fields: Record<string, Record<string, string>> = {}) {
  return { name, exports: { '.': { 'dsh-source': './src/index.ts' } }, ...fields }
}

const workspace = (name: string) => ({ [name]: 'workspace:^' })

function run(dir: string): { code: number; out: string } {
  try {
    const out = execFileSync(process.execPath, [script, '--root', dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
    return { code: 0, out }
  } catch (error: any) {
    return { code: error.status, out: `${error.stdout}${error.stderr}` }
  }
}

describe('reading imports', () => {
  it('finds every kind of import, type-only ones marked, and nothing in comments or strings', () => {
    const text = [
      "import type { A } from './a'",
      "import { type B, type C } from './b'",
      "import D, { type E } from './d'",
      "import './side-effect'",
      "export { F } from './f'",
      "export type { G } from './g'",
      '// import { H } from "./h"',
      "const text = \"import { I } from './i'\"",
      "const lazy = () => import('./lazy')",
      "type J = import('./j').J",
    ].join('\n')
    expect(importsOf('/x/file.ts', text)).toEqual([
      { specifier: './a', line: 1, typeOnly: true },
      { specifier: './b', line: 2, typeOnly: true },
      { specifier: './d', line: 3, typeOnly: false },
      { specifier: './side-effect', line: 4, typeOnly: false },
      { specifier: './f', line: 5, typeOnly: false },
      { specifier: './g', line: 6, typeOnly: true },
      { specifier: './lazy', line: 9, typeOnly: false },
      { specifier: './j', line: 10, typeOnly: true },
    ])
  })
})

describe('import circles', () => {
  it('groups the files of each knot (Tarjan), leaving chains and self-free files alone', () => {
    const graph = new Map([
      ['a', [{ to: 'b' }]],
      ['b', [{ to: 'c' }]],
      ['c', [{ to: 'a' }, { to: 'd' }]],
      ['d', []],
      ['e', [{ to: 'e' }]],
    ])
    expect(components(graph).sort((x, y) => y.length - x.length)).toEqual([['a', 'b', 'c'], ['d'], ['e']])
  })

  it('finds a type-only circle inside a package, and names its shortest circle by file and line', () => {
    const dir = repo({
      'packages/core/store/package.json': manifest('@x/store'),
      'packages/core/store/src/index.ts': "export { Store } from './store'\n",
      'packages/core/store/src/store.ts': "import type { Registry } from './registry'\nexport class Store { registry?: Registry }\n",
      'packages/core/store/src/registry.ts': "\nimport type { Store } from './store.js'\nexport interface Registry { store: Store }\n",
      'packages/core/store/src/chain.ts': "import { Store } from './store'\nexport const s = new Store()\n",
    })
    const cycles = findImportCycles(dir)
    expect(cycles).toEqual([
      {
        files: ['packages/core/store/src/registry.ts', 'packages/core/store/src/store.ts'],
        circle: [
          { from: 'packages/core/store/src/registry.ts', to: 'packages/core/store/src/store.ts', line: 2, typeOnly: true },
          { from: 'packages/core/store/src/store.ts', to: 'packages/core/store/src/registry.ts', line: 1, typeOnly: true },
        ],
      },
    ])
    expect(describeCycle(cycles[0]!)).toBe('packages/core/store/src/registry.ts:2 (type) → packages/core/store/src/store.ts:1 (type) → packages/core/store/src/registry.ts')
  })

  it('follows imports of workspace packages by name into their sources (two packages importing each other)', () => {
    const dir = repo({
      'packages/a/one/package.json': manifest('@x/one'),
      'packages/a/one/src/index.ts': "export { two } from '@x/two'\nexport const one = 1\n",
      'packages/a/two/package.json': manifest('@x/two'),
      'packages/a/two/src/index.ts': "import { one } from '@x/one'\nexport const two = one + 1\n",
      'packages/a/two/tests/two.test.ts': "import { two } from '../src'\n",
    })
    expect(findImportCycles(dir).map((cycle) => cycle.files)).toEqual([['packages/a/one/src/index.ts', 'packages/a/two/src/index.ts']])
  })
})

describe('file size', () => {
  it('counts lines as an editor does', () => {
    expect([lineCount(''), lineCount('a'), lineCount('a\n'), lineCount('a\nb'), lineCount('a\n\n')]).toEqual([0, 1, 1, 2, 2])
  })

  it('lists the sources over the limit, longest first, and never tests', () => {
    const dir = repo({
      'packages/core/big/package.json': manifest('@x/big'),
      'packages/core/big/src/index.ts': "export {}\n",
      'packages/core/big/src/long.ts': 'const x = 1\n'.repeat(451),
      'packages/core/big/src/longer.ts': 'const x = 1\n'.repeat(500),
      'packages/core/big/src/at-limit.ts': 'const x = 1\n'.repeat(450),
      'packages/core/big/tests/long.test.ts': 'const x = 1\n'.repeat(900),
    })
    expect(oversizedSources(dir)).toEqual([
      { file: 'packages/core/big/src/longer.ts', lines: 500 },
      { file: 'packages/core/big/src/long.ts', lines: 451 },
    ])
  })
})

describe('who depends on the loop', () => {
  const loop = '@deepseek-ai/dsh-agent-loop'
  const base = {
    'packages/core/agent-loop/package.json': manifest(loop),
    'packages/runtime/agent-spine/package.json': manifest('@deepseek-ai/dsh-agent-spine', { dependencies: workspace(loop) }),
    'packages/examples/agent-spine-demo/package.json': manifest('@deepseek-ai/dsh-agent-spine-demo', { dependencies: { ...workspace('@deepseek-ai/dsh-agent-spine'), ...workspace(loop) } }),
    'packages/support/testkit/package.json': manifest('@deepseek-ai/dsh-testkit', { dependencies: workspace(loop) }),
  }

  it('lets the bundle, the demo and the test kit depend on it, and plugins test through the kit as a dev dependency', () => {
    const dir = repo({
      ...base,
      'packages/tools/plugin/package.json': manifest('@x/plugin', { dependencies: workspace('@deepseek-ai/dsh-agent'), devDependencies: workspace('@deepseek-ai/dsh-testkit') }),
      'packages/core/agent/package.json': manifest('@deepseek-ai/dsh-agent'),
    })
    expect(loopDependencyProblems(dir)).toEqual([])
  })

  it('refuses any other package that names the loop, in any field', () => {
    const dir = repo({
      ...base,
      'packages/tools/plugin/package.json': manifest('@x/plugin', { devDependencies: workspace(loop) }),
      'packages/tools/other/package.json': manifest('@x/other', { peerDependencies: workspace(loop) }),
    })
    expect(loopDependencyProblems(dir)).toEqual([
      `packages/tools/other/package.json: @x/other lists ${loop} in peerDependencies; plugins depend on @deepseek-ai/dsh-agent (ctx.agents) and test against the spine through @deepseek-ai/dsh-testkit`,
      `packages/tools/plugin/package.json: @x/plugin lists ${loop} in devDependencies; plugins depend on @deepseek-ai/dsh-agent (ctx.agents) and test against the spine through @deepseek-ai/dsh-testkit`,
    ])
  })

  it('refuses a package that reaches the loop at run time through the kit or the bundle', () => {
    const dir = repo({
      ...base,
      'packages/tools/plugin/package.json': manifest('@x/plugin', { dependencies: workspace('@deepseek-ai/dsh-testkit') }),
      'packages/apps/app/package.json': manifest('@x/app', { dependencies: workspace('@x/middle') }),
      'packages/apps/middle/package.json': manifest('@x/middle', { dependencies: workspace('@deepseek-ai/dsh-agent-spine') }),
    })
    expect(loopDependencyProblems(dir)).toEqual([
      `packages/apps/app/package.json: @x/app reaches ${loop} at run time through @x/middle → @deepseek-ai/dsh-agent-spine (@x/app → @x/middle → @deepseek-ai/dsh-agent-spine → ${loop}); list that package in devDependencies`,
      `packages/apps/middle/package.json: @x/middle reaches ${loop} at run time through @deepseek-ai/dsh-agent-spine (@x/middle → @deepseek-ai/dsh-agent-spine → ${loop}); list that package in devDependencies`,
      `packages/tools/plugin/package.json: @x/plugin reaches ${loop} at run time through @deepseek-ai/dsh-testkit (@x/plugin → @deepseek-ai/dsh-testkit → ${loop}); list that package in devDependencies`,
    ])
  })
})

describe('the package skeleton', () => {
  it('lets index.ts import and re-export only', () => {
    const text = [
      "import './events'",
      "import { Service } from './service'",
      'export default Service',
      "export { Service } from './service'",
      "export type { Config } from './config'",
      "export * from './types'",
      'export const LIMIT = 3',
      'export class Helper {',
      '}',
      'export default function () {}',
    ].join('\n')
    expect(indexCode('/x/index.ts', text)).toEqual([
      { line: 7, text: 'export const LIMIT = 3' },
      { line: 8, text: 'export class Helper {' },
      { line: 10, text: 'export default function () {}' },
    ])
  })

  it('lets only src/cordis.ts import Cordis; declaration merging into it is fine anywhere', () => {
    const dir = repo({
      'packages/core/ok/package.json': manifest('@x/ok'),
      'packages/core/ok/src/cordis.ts': "export { Context, Service } from 'cordis'\n",
      'packages/core/ok/src/index.ts': "export { Thing } from './service'\n",
      'packages/core/ok/src/service.ts': "import { Service } from './cordis'\ndeclare module 'cordis' { interface Context { thing: Thing } }\nexport class Thing extends Service {}\n",
      'packages/core/bad/package.json': manifest('@x/bad'),
      'packages/core/bad/src/index.ts': "import type { Events } from 'cordis'\nexport type E = Events\n",
      'packages/core/bad/tests/bad.test.ts': "import { Context } from 'cordis'\n",
    })
    expect(skeletonProblems(dir)).toEqual([
      "packages/core/bad/src/index.ts:1: imports 'cordis'; import Cordis through ./cordis (src/cordis.ts re-exports what the package uses)",
      'packages/core/bad/src/index.ts:2: index.ts only re-exports; move `export type E = Events` to a file named after it',
    ])
  })
})

describe('node scripts/layout-check.mjs', () => {
  const clean = {
    'packages/core/agent-loop/package.json': manifest('@deepseek-ai/dsh-agent-loop'),
    'packages/core/agent-loop/src/index.ts': "export { Loop } from './service'\n",
    'packages/core/agent-loop/src/service.ts': 'export class Loop {}\n',
  }

  it('passes a repository that keeps the rules, and says so', () => {
    expect(run(repo(clean))).toEqual({
      code: 0,
      out: "layout check: the loop's dependents, import circles, file sizes and package skeletons are in order.\n",
    })
  })

  it('fails listing every problem by check and file', () => {
    const dir = repo({
      ...clean,
      'packages/core/agent-loop/src/service.ts': "import type { Part } from './part'\nexport class Loop {}\n",
      'packages/core/agent-loop/src/part.ts': `import type { Loop } from './service'\nexport type Part = Loop\n${'\n'.repeat(460)}`,
      'packages/tools/plugin/package.json': manifest('@x/plugin', { devDependencies: workspace('@deepseek-ai/dsh-agent-loop') }),
    })
    const { code, out } = run(dir)
    expect(code).toBe(1)
    expect(out.split('\n')).toEqual([
      'layout check: 3 problem(s)',
      '  loop dependents: packages/tools/plugin/package.json: @x/plugin lists @deepseek-ai/dsh-agent-loop in devDependencies; plugins depend on @deepseek-ai/dsh-agent (ctx.agents) and test against the spine through @deepseek-ai/dsh-testkit',
      '  import circles: packages/core/agent-loop/src/part.ts:1 (type) → packages/core/agent-loop/src/service.ts:1 (type) → packages/core/agent-loop/src/part.ts (knot of 2 files: packages/core/agent-loop/src/part.ts, packages/core/agent-loop/src/service.ts)',
      '  file size: packages/core/agent-loop/src/part.ts: 462 lines (at most 450); split it by concept',
      'See docs/contributing.md ("The package skeleton" and "Checks") for the rules.',
      '',
    ])
  })

  it('tolerates a pending problem, and reports a pending entry that no longer matches one', () => {
    const dir = repo({ ...clean, 'packages/core/agent-loop/src/long.ts': 'const x = 1\n'.repeat(451) })
    const pending = [
      { check: 'file size', key: 'packages/core/agent-loop/src/long.ts', why: 'being split' },
      { check: 'file size', key: 'packages/core/agent-loop/src/gone.ts', why: 'split already' },
    ]
    const report = layoutReport(dir, pending)
    expect(report).toEqual({
      problems: [],
      tolerated: [{ check: 'file size', key: 'packages/core/agent-loop/src/long.ts', message: 'packages/core/agent-loop/src/long.ts: 451 lines (at most 450); split it by concept' }],
      stale: [pending[1]],
    })
  })
})

describe('this repository', () => {
  it('keeps the layout rules, apart from the pending entries', () => {
    expect(layoutReport(repoRoot).problems.map((finding) => finding.message)).toEqual([])
  })
})
