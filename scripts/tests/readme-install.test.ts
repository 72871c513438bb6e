import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { packageDirs } from '../pack-check.mjs'

const root = fileURLToPath(new URL('../..', import.meta.url))

/** A pnpm command a reader would type, without the `npx -y pnpm@12.4.2` that puts pnpm within reach. */
const BARE_PNPM = /(^|[\s`($])pnpm (install|test|build|typecheck|demo|bench|catalog|changeset|contracts:check|imports:check|layout:check|pack:check)\b/gm

describe('package READMEs (issue 17.6)', () => {
  it('tell a user what to install: the package and its required peer dependencies, in English and Chinese', () => {
    const missing: string[] = []
    for (const dir of packageDirs(root)) {
      const manifest = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8'))
      if (manifest.private === true) continue
      const peers = Object.entries<string>(manifest.peerDependencies ?? {}).filter(([name]) => manifest.peerDependenciesMeta?.[name]?.optional !== true)
      const line = ['npm install', manifest.name, ...peers.map(([name, range]) => `${name}@${range}`)].join(' ')
      for (const [file, heading] of [['README.md', '## Install'], ['README.zh-CN.md', '## 安装']] as const) {
        const text = readFileSync(join(root, dir, file), 'utf8')
        if (!text.split('\n').includes(heading)) missing.push(`${dir}/${file}: no "${heading}" section`)
        if (!text.includes(line)) missing.push(`${dir}/${file}: no "${line}"`)
      }
    }
    expect(missing).toEqual([])
  })

  it('spell every pnpm command as npx -y pnpm@12.4.2 (npx leaves pnpm off the PATH)', () => {
    const bare: string[] = []
    for (const dir of packageDirs(root)) {
      for (const file of ['README.md', 'README.zh-CN.md']) {
        const text = readFileSync(join(root, dir, file), 'utf8')
        for (const match of text.matchAll(BARE_PNPM)) bare.push(`${dir}/${file}: ${match[0].trim()}`)
      }
    }
    expect(bare).toEqual([])
  })
})
