#!/usr/bin/env node
// The dsh-demo command. In the dsh repository it runs the TypeScript sources through tsx, resolving
// the sibling @deepseek-ai/dsh-* packages to their sources too (the `dsh-source` export condition), so
// no build is needed; an installed package runs its build in dist/.
import { existsSync } from 'node:fs'
import { register } from 'node:module'

const sources = new URL('../src/cli/main.ts', import.meta.url)
let entry
if (existsSync(sources)) {
  register('./source-condition.js', import.meta.url)
  const tsx = await import('tsx/esm/api')
  tsx.register()
  entry = sources
} else {
  entry = new URL('../dist/cli/main.js', import.meta.url)
}
const { run } = await import(entry.href)
await run()
