import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { checkPackageImports, importsOf } from '../package-imports.mjs'

const repoRoot = join(import.meta.dirname, '../..')
const script = join(import.meta.dirname, '../package-imports.mjs')
const temps: string[] = []

/** A repository with packages `a/one` and `b/two` and the given files. */
function repo(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-imports-'))
  temps.push(dir)
  const all = { 'packages/a/one/package.json': '{}', 'packages/b/two/package.json': '{}', ...files }
  for (const [path, text] of Object.entries(all)) {
    mkdirSync(join(dir, path, '..'), { recursive: true })
    writeFileSync(join(dir, path), text)
  }
  return dir
}

afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true })
})

describe('importsOf', () => {
  it('finds static, multi-line, side-effect, re-export and dynamic imports with their lines, and no import quoted in a comment', () => {
    const text = [
      "import { a } from './a'",
      'import {',
      '  b,',
      "} from '../b'",
      "import './side-effect'",
      "export { c } from '@scope/c'",
      "const d = await import('./d')",
      "// import { e } from '../../e'",
      "/* import { f } from '../../f' */",
      "const url = 'http://127.0.0.1/x' // from '../../g'",
    ].join('\n')
    expect(importsOf(text)).toEqual([
      { specifier: './a', line: 1 },
      { specifier: '../b', line: 4 },
      { specifier: './side-effect', line: 5 },
      { specifier: '@scope/c', line: 6 },
      { specifier: './d', line: 7 },
    ])
  })
})

describe('the package imports rule', () => {
  it('lets a package import its own files and other packages by name', () => {
    const root = repo({
      'packages/a/one/tests/x.test.ts': "import { h } from './helpers'\nimport { s } from '../src/s'\nimport { k } from '@deepseek-ai/dsh-testkit'",
      'packages/a/one/tests/helpers.ts': 'export const h = 1',
      'packages/a/one/src/s.ts': 'export const s = 1',
    })
    expect(checkPackageImports(root).problems).toEqual([])
  })

  it("refuses another package's tests folder, by path or by subpath, and another package's files by path", () => {
    const root = repo({
      'packages/b/two/tests/y.test.ts': [
        "import { harness } from '../../../a/one/tests/harness'",
        "import { src } from '../../../a/one/src'",
        "import { deep } from '@deepseek-ai/dsh-one/tests/support/deep'",
      ].join('\n'),
    })
    expect(checkPackageImports(root).problems).toEqual([
      "packages/b/two/tests/y.test.ts:1: imports packages/a/one/tests (../../../a/one/tests/harness): another package's tests are not an API; move what is shared to @deepseek-ai/dsh-testkit",
      'packages/b/two/tests/y.test.ts:2: reaches into packages/a/one by a path (../../../a/one/src): import the package by its name',
      "packages/b/two/tests/y.test.ts:3: imports a package's tests folder (@deepseek-ai/dsh-one/tests/support/deep): move what is shared to @deepseek-ai/dsh-testkit",
    ])
  })

  it('fails the command with file:line for each problem, as CI runs it', () => {
    const root = repo({ 'packages/b/two/tests/y.test.ts': "import { harness } from '../../../a/one/tests/harness'" })
    let failure: { status: number; stderr: string } | undefined
    try {
      execFileSync(process.execPath, [script, '--root', root], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
    } catch (error) {
      failure = error as { status: number; stderr: string }
    }
    expect({ status: failure?.status, first: failure?.stderr.split('\n')[1]?.trim() }).toEqual({
      status: 1,
      first: "packages/b/two/tests/y.test.ts:1: imports packages/a/one/tests (../../../a/one/tests/harness): another package's tests are not an API; move what is shared to @deepseek-ai/dsh-testkit",
    })
  })

  it('allows a cycle through devDependencies (the test kit\'s), and refuses one through dependencies or peerDependencies', () => {
    const manifest = (name: string, links: Record<string, Record<string, string>>) => JSON.stringify({ name, ...links })
    const devCycle = repo({
      'packages/a/one/package.json': manifest('one', { dependencies: { two: 'workspace:^' } }),
      'packages/b/two/package.json': manifest('two', { devDependencies: { one: 'workspace:^' } }),
    })
    expect(checkPackageImports(devCycle).problems).toEqual([])
    const buildCycle = repo({
      'packages/a/one/package.json': manifest('one', { dependencies: { two: 'workspace:^' } }),
      'packages/b/two/package.json': manifest('two', { peerDependencies: { one: 'workspace:^' } }),
    })
    expect(checkPackageImports(buildCycle).problems).toEqual([
      'package.json: the dependencies form a cycle (one → two → one); a build cannot order it: make one of the links a devDependency, or move the shared part to its own package',
    ])
  })

  it('holds in this repository', () => {
    expect(checkPackageImports(repoRoot).problems).toEqual([])
  })
})
