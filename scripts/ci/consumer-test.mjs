#!/usr/bin/env node
/**
 * The consumer test (issue 17.3, 17.4): the packages as a user gets them.
 *
 *   node scripts/ci/consumer-test.mjs [--tarballs DIR] [--keep] [--node MAJOR]...
 *
 * 1. Packs every public package (scripts/pack-check.mjs; run `pnpm build` first), or takes the
 *    tarballs already in `--tarballs DIR`.
 * 2. Creates a project in the system's temporary directory, outside the repository (no
 *    workspace, no pnpm, no `dsh-source`), and installs with npm the tarballs the app needs
 *    (the packages it imports and every @deepseek-ai/* package they depend on, each from its
 *    tarball) plus cordis at the pinned version, schemastery, zod, typescript and @types/node
 *    from the registry.
 * 3. Type-checks the app in scripts/ci/fixtures/consumer-app against the packed .d.ts files
 *    (`strict`): with `moduleResolution: Bundler` (what the READMEs recommend); with `NodeNext`,
 *    where it must fail as the READMEs say (cordis's declarations); and with `NodeNext` after the
 *    documented workaround (cordis-types-nodenext.mjs), which also emits the JavaScript.
 * 4. Runs the compiled app with plain `node` (no TypeScript loader): the spine bundle with a zod
 *    tool and a `session/event` listener, one agent on the scripted model and one on
 *    dsh-llm-openai against an OpenAI-compatible server on 127.0.0.1; checks both answers.
 * 5. `require()`s a package from CommonJS and checks what it gets.
 * 6. With `--node 22 --node 24` (what CI passes), runs steps 4 and 5 again under each of those
 *    Node majors (binaries from the npm registry through scripts/node-binary.mjs): users run the
 *    built packages on 22 and 24, not only on the machine's 20.
 *
 * Exit code 0 when all of it holds; 1 with what went wrong otherwise. The project is removed
 * unless `--keep`.
 */
import { execFile } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { manifestProblems, packAll } from '../pack-check.mjs'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const APP = fileURLToPath(new URL('./fixtures/consumer-app', import.meta.url))

/** The packages the app imports; their @deepseek-ai/* dependencies come along from their tarballs. */
const IMPORTS = ['@deepseek-ai/dsh-agent-spine', '@deepseek-ai/dsh-llm-openai', '@deepseek-ai/dsh-llm-scripted', '@deepseek-ai/dsh-session', '@deepseek-ai/dsh-tools', '@deepseek-ai/dsh-agent']

/** What the app must print: both answers, each after a tool call and its result. */
const EXPECTED = {
  scripted: { answer: 'Scripted: done.', types: ['tool/call', 'tool/result'] },
  openai: { answer: 'The sum is 42.', types: ['tool/call', 'tool/result'] },
  requests: 2,
}

/** @param {string} command @param {readonly string[]} args @param {string} cwd */
function run(command, args, cwd) {
  return new Promise((resolveRun, reject) => {
    execFile(command, args, { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, env: { ...process.env, NODE_OPTIONS: '' } }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(' ')} failed (in ${cwd}):\n${stdout}${stderr}`.trim()))
      else resolveRun(stdout)
    })
  })
}

/** @param {string} what */
function log(what) {
  process.stdout.write(`consumer-test: ${what}\n`)
}

/**
 * The tarballs to install: those of `names` and of every @deepseek-ai/* package they depend on
 * (dependencies and peerDependencies), transitively.
 * @param {Map<string, { tarball: string, manifest: Record<string, any> }>} byName
 * @param {readonly string[]} names
 */
export function closure(byName, names) {
  const wanted = new Set()
  const visit = (/** @type {string} */ name) => {
    if (wanted.has(name)) return
    const pkg = byName.get(name)
    if (pkg === undefined) throw new Error(`no tarball for ${name}`)
    wanted.add(name)
    for (const field of ['dependencies', 'peerDependencies']) {
      for (const dependency of Object.keys(pkg.manifest[field] ?? {})) if (dependency.startsWith('@deepseek-ai/')) visit(dependency)
    }
  }
  for (const name of names) visit(name)
  return [...wanted].sort()
}

async function tarballsIn(/** @type {string} */ dir) {
  const byName = new Map()
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.tgz'))) {
    const manifest = JSON.parse(await run('tar', ['-xzOf', join(dir, file), 'package/package.json'], dir))
    byName.set(manifest.name, { tarball: join(dir, file), manifest })
  }
  return byName
}

async function main() {
  const { values } = parseArgs({ options: { tarballs: { type: 'string' }, keep: { type: 'boolean', default: false }, node: { type: 'string', multiple: true, default: [] } } })
  const project = mkdtempSync(join(tmpdir(), 'dsh-consumer-'))
  try {
    let byName
    if (values.tarballs) {
      byName = await tarballsIn(resolve(values.tarballs))
    } else {
      const { packed } = await packAll(join(project, 'tarballs'), { log: () => {} })
      const broken = packed.flatMap((pkg) => manifestProblems(pkg.manifest, pkg.files).map((problem) => `${pkg.dir}: ${problem}`))
      if (broken.length > 0) throw new Error(`the tarballs are not publishable (pnpm pack:check says why):\n${broken.join('\n')}`)
      byName = new Map(packed.map((pkg) => [pkg.name, pkg]))
    }
    const install = closure(byName, IMPORTS)
    log(`installing ${install.length} tarballs into ${project}: ${install.join(', ')}`)

    const rootManifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
    const dependencies = Object.fromEntries(install.map((name) => [name, `file:${byName.get(name).tarball}`]))
    Object.assign(dependencies, { cordis: rootManifest.devDependencies.cordis, schemastery: rootManifest.devDependencies.schemastery, zod: '^4.1.0' })
    const devDependencies = { typescript: rootManifest.devDependencies.typescript, '@types/node': rootManifest.devDependencies['@types/node'] }
    writeFileSync(join(project, 'package.json'), `${JSON.stringify({ name: 'dsh-consumer', private: true, type: 'module', dependencies, devDependencies }, null, 2)}\n`)
    cpSync(join(APP, 'src'), join(project, 'src'), { recursive: true })
    cpSync(join(APP, 'tsconfig.json'), join(project, 'tsconfig.json'))
    cpSync(join(APP, 'tsconfig.bundler.json'), join(project, 'tsconfig.bundler.json'))
    cpSync(join(APP, 'require.cjs'), join(project, 'require.cjs'))
    cpSync(join(APP, 'cordis-types-nodenext.mjs'), join(project, 'cordis-types-nodenext.mjs'))
    await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], project)
    const lock = JSON.parse(readFileSync(join(project, 'package-lock.json'), 'utf8'))
    for (const name of install) {
      const resolved = String(lock.packages?.[`node_modules/${name}`]?.resolved ?? '')
      if (!resolved.startsWith('file:')) throw new Error(`npm installed ${name} from ${resolved || 'somewhere else'}, not from its tarball`)
      const installed = JSON.parse(readFileSync(join(project, 'node_modules', name, 'package.json'), 'utf8'))
      if (existsSync(join(project, 'node_modules', name, 'src'))) throw new Error(`${name} was installed with its src/ directory`)
      if (installed.version !== byName.get(name).manifest.version) throw new Error(`${name} ${installed.version} was installed instead of the packed ${byName.get(name).manifest.version}`)
    }

    const tsc = (/** @type {string[]} */ ...args) => run(process.execPath, [join(project, 'node_modules/typescript/bin/tsc'), ...args], project)
    log('tsc -p tsconfig.bundler.json --noEmit (strict, module ESNext, moduleResolution Bundler): the tsconfig the READMEs recommend')
    await tsc('-p', 'tsconfig.bundler.json', '--noEmit')

    // cordis 4.0.0-rc.10's declarations import their siblings without an extension, which
    // NodeNext refuses: the READMEs say so. When this starts compiling, cordis has fixed it and
    // the READMEs' NodeNext note and workaround should go.
    const plain = await tsc('-p', 'tsconfig.json', '--noEmit').then(() => undefined, (error) => error.message)
    if (plain === undefined) throw new Error('the app now type-checks under NodeNext without cordis-types-nodenext.mjs: drop the NodeNext note and workaround from the READMEs and from this test')
    log(`tsc under NodeNext without the workaround fails as the READMEs say (${plain.split('\n').filter((line) => line.includes('error TS')).length} errors, e.g. "${plain.split('\n').find((line) => line.includes('error TS'))?.trim()}")`)

    log('node cordis-types-nodenext.mjs, then tsc -p tsconfig.json (strict, module and moduleResolution NodeNext)')
    await run(process.execPath, ['cordis-types-nodenext.mjs'], project)
    await tsc('-p', 'tsconfig.json')

    const binaries = [process.execPath]
    for (const major of values.node) binaries.push((await run(process.execPath, [join(ROOT, 'scripts/node-binary.mjs'), major], ROOT)).trim())
    for (const node of binaries) {
      const version = (await run(node, ['--version'], project)).trim()
      log(`node out/app.js (Node ${version}, no loader)`)
      const printed = (await run(node, ['out/app.js'], project)).trim().split('\n').at(-1) ?? ''
      const seen = JSON.parse(printed)
      if (JSON.stringify(seen) !== JSON.stringify(EXPECTED)) throw new Error(`on Node ${version} the app printed\n  ${printed}\nexpected\n  ${JSON.stringify(EXPECTED)}`)
      log(`the app answered: ${printed}`)

      const required = (await run(node, ['require.cjs'], project)).trim()
      log(`require() from CommonJS on Node ${version}: ${required}`)
    }

    log(`ok: ${install.length} packages installed from their tarballs, type-checked (NodeNext and Bundler) and run outside the repository`)
  } finally {
    if (values.keep) log(`kept ${project}`)
    else rmSync(project, { recursive: true, force: true })
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    process.stderr.write(`consumer-test: FAILED: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exitCode = 1
  })
}
