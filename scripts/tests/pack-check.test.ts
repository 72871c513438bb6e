import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { exportTargets, manifestProblems, packageDirs } from '../pack-check.mjs'

/** A manifest as `pnpm pack` writes it for a package that is ready to publish. */
function published(): Record<string, any> {
  return {
    name: '@deepseek-ai/dsh-example',
    version: '1.0.0',
    license: 'MIT',
    repository: { type: 'git', url: 'git+https://github.com/deepseek-ai/dsh.git', directory: 'packages/util/example' },
    homepage: 'https://github.com/deepseek-ai/dsh/tree/main/packages/util/example#readme',
    bugs: { url: 'https://github.com/deepseek-ai/dsh/issues' },
    engines: { node: '>=20' },
    type: 'module',
    exports: { '.': { types: './dist/index.d.ts', import: './dist/index.js', default: './dist/index.js' }, './package.json': './package.json' },
    publishConfig: { access: 'public' },
    main: './dist/index.js',
    types: './dist/index.d.ts',
    files: ['dist', 'README.md'],
    dependencies: { '@deepseek-ai/dsh-llm': '^1.0.0' },
    peerDependencies: { cordis: '4.0.0-rc.10' },
  }
}
const tarball = ['package.json', 'dist/index.js', 'dist/index.d.ts', 'README.md', 'LICENSE']

describe('manifestProblems', () => {
  it('finds nothing wrong with a publishable manifest', () => {
    expect(manifestProblems(published(), tarball)).toEqual([])
  })

  it('refuses the private source condition, and the old public one, wherever it sits in exports', () => {
    const manifest = published()
    manifest.exports['.'] = { 'dsh-source': './src/index.ts', types: './dist/index.d.ts', import: './dist/index.js' }
    manifest.exports['./invariant'] = { node: { source: './src/invariant.ts', import: './dist/invariant.js' } }
    expect(manifestProblems(manifest, [...tarball, 'dist/invariant.js'])).toEqual([
      'exports["."]["dsh-source"] keeps the "dsh-source" condition: publishConfig.exports must list the published exports without it',
      'exports["./invariant"]["node"]["source"] keeps the "source" condition: publishConfig.exports must list the published exports without it',
      'exports["./invariant"]["node"]["source"] names ./src/invariant.ts, which is not in the tarball',
    ])
  })

  it('refuses workspace: ranges in every dependency field', () => {
    const manifest = published()
    manifest.dependencies['@deepseek-ai/dsh-llm'] = 'workspace:^'
    manifest.devDependencies = { '@deepseek-ai/dsh-testkit': 'workspace:*' }
    expect(manifestProblems(manifest, tarball)).toEqual([
      'dependencies["@deepseek-ai/dsh-llm"] is "workspace:^": a workspace: range cannot be installed outside the repository',
      'devDependencies["@deepseek-ai/dsh-testkit"] is "workspace:*": a workspace: range cannot be installed outside the repository',
    ])
  })

  it('asks for every field a registry page and an install need', () => {
    const manifest = published()
    for (const field of ['publishConfig', 'license', 'types', 'files', 'engines', 'repository', 'homepage', 'bugs']) delete manifest[field]
    expect(manifestProblems(manifest, tarball)).toEqual([
      'publishConfig.access is not "public" (a scoped package would be published restricted)',
      'no "license"',
      'no "types"',
      'no "files" list (the tarball would take everything not ignored)',
      'engines.node is undefined, expected ">=20"',
      'repository needs "url" and "directory" (a registry page links the package\'s folder)',
      'no "homepage"',
      'no "bugs.url"',
    ])
  })

  it('says which named file is missing from the tarball, and that a dist file wants a build', () => {
    const manifest = published()
    manifest.bin = { 'dsh-demo': './bin/dsh-demo.js' }
    expect(manifestProblems(manifest, ['package.json', 'README.md', 'LICENSE'])).toEqual([
      'exports["."]["types"] names ./dist/index.d.ts, which is not in the tarball (run pnpm build first)',
      'exports["."]["import"] names ./dist/index.js, which is not in the tarball (run pnpm build first)',
      'exports["."]["default"] names ./dist/index.js, which is not in the tarball (run pnpm build first)',
      'main names ./dist/index.js, which is not in the tarball (run pnpm build first)',
      'types names ./dist/index.d.ts, which is not in the tarball (run pnpm build first)',
      'bin["dsh-demo"] names ./bin/dsh-demo.js, which is not in the tarball',
    ])
  })

  it('wants the license text and the README in the tarball, under the names npm packs', () => {
    expect(manifestProblems(published(), ['package.json', 'dist/index.js', 'dist/index.d.ts'])).toEqual([
      "no LICENSE file in the tarball (the license's text must ship with the code: copy the repository's LICENSE into the package folder)",
      'no README.md in the tarball',
    ])
    for (const name of ['LICENSE.md', 'licence.txt', 'COPYING']) {
      expect(manifestProblems(published(), [...tarball.filter((file) => file !== 'LICENSE'), name])).toEqual([])
    }
  })

  it('refuses sources in a tarball whose files do not ask for them', () => {
    expect(manifestProblems(published(), [...tarball, 'src/index.ts'])).toEqual(['the tarball holds src/index.ts although "files" does not list src'])
  })
})

describe('exportTargets', () => {
  it('walks nested conditions and arrays to every target', () => {
    expect(exportTargets({ '.': { node: { import: './a.js' }, default: ['./b.js', null] } })).toEqual([
      { conditions: ['.', 'node', 'import'], target: './a.js' },
      { conditions: ['.', 'default'], target: './b.js' },
      { conditions: ['.', 'default'], target: null },
    ])
  })
})

describe('packageDirs', () => {
  const temps: string[] = []
  afterEach(() => {
    for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true })
  })

  it('finds every packages/<group>/<name> with a manifest, so a new package is checked without being registered', () => {
    const root = mkdtempSync(join(tmpdir(), 'dsh-pack-dirs-'))
    temps.push(root)
    for (const dir of ['packages/llm/llm', 'packages/tasks/tasks', 'packages/subagent/being-created']) mkdirSync(join(root, dir), { recursive: true })
    writeFileSync(join(root, 'packages/llm/llm/package.json'), '{}')
    writeFileSync(join(root, 'packages/tasks/tasks/package.json'), '{}')
    expect(packageDirs(root)).toEqual(['packages/llm/llm', 'packages/tasks/tasks'])
  })

  it('lists every package of this repository', () => {
    expect(packageDirs()).toEqual(expect.arrayContaining(['packages/util/brand', 'packages/runtime/agent-spine', 'packages/support/testkit']))
  })
})
