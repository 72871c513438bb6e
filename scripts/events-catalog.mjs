#!/usr/bin/env node
// Generates docs/cordis-catalog/events.md from the `declare module 'cordis' {
// interface Events { … } }` blocks in packages/*/*/src, with each event's JSDoc
// and its `@mode` tag. `--check` fails when the committed file is stale.
import { readFileSync, readdirSync, statSync, writeFileSync, mkdirSync } from 'node:fs'
import { dirname, join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const MODES = new Set(['emit', 'parallel', 'serial', 'bail', 'waterfall'])

/** Every `.ts` file under `dir`, skipping declaration files, sorted for a stable output. */
export function listSources(dir) {
  const out = []
  const walk = (d) => {
    for (const name of readdirSync(d).sort()) {
      const path = join(d, name)
      if (statSync(path).isDirectory()) walk(path)
      else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path)
    }
  }
  walk(dir)
  return out
}

/** The source files of every package: `<root>/packages/<group>/<name>/src/**.ts`. */
export function packageSources(root) {
  const files = []
  const packagesDir = join(root, 'packages')
  for (const group of safeList(packagesDir)) {
    for (const name of safeList(join(packagesDir, group))) {
      const src = join(packagesDir, group, name, 'src')
      if (isDir(src)) files.push(...listSources(src))
    }
  }
  return files
}

function safeList(dir) {
  return isDir(dir) ? readdirSync(dir).filter((n) => isDir(join(dir, n))).sort() : []
}

function isDir(path) {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

/** The `name` of the nearest package.json above `file`, inside `root`. */
export function packageName(root, file) {
  let dir = dirname(file)
  while (dir.startsWith(root) && dir !== root) {
    try {
      return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name
    } catch {
      dir = dirname(dir)
    }
  }
  return undefined
}

function jsDocOf(node) {
  const docs = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc)
  const doc = docs.at(-1)
  if (!doc) return { text: '', tags: {} }
  const text = typeof doc.comment === 'string' ? doc.comment : ts.getTextOfJSDocComment(doc.comment) ?? ''
  const tags = {}
  for (const tag of doc.tags ?? []) {
    const value = typeof tag.comment === 'string' ? tag.comment : ts.getTextOfJSDocComment(tag.comment) ?? ''
    tags[tag.tagName.text] = value.trim()
  }
  return { text: text.trim(), tags }
}

function nameOf(member, source) {
  const name = member.name
  if (!name) return undefined
  if (ts.isStringLiteral(name) || ts.isIdentifier(name)) return name.text
  if (ts.isComputedPropertyName(name)) return undefined // symbol-keyed internals
  return name.getText(source)
}

function signatureOf(member, source) {
  const printer = (node) => node.getText(source).replace(/\s+/g, ' ').trim()
  if (ts.isMethodSignature(member)) {
    const params = member.parameters.map(printer).join(', ')
    const ret = member.type ? printer(member.type) : 'void'
    return `(${params}) => ${ret}`
  }
  if (ts.isPropertySignature(member) && member.type) return printer(member.type)
  return ''
}

/**
 * Extracts every event declared in `files` (`{ path, text }`, paths relative to
 * the repository). Throws one error listing every event without a valid `@mode`.
 */
export function extractEvents(files) {
  const events = []
  const problems = []
  for (const file of files) {
    if (!file.text.includes('interface Events')) continue
    const source = ts.createSourceFile(file.path, file.text, ts.ScriptTarget.Latest, true)
    const visit = (node) => {
      if (
        ts.isModuleDeclaration(node) &&
        ts.isStringLiteral(node.name) &&
        node.name.text === 'cordis' &&
        node.body &&
        ts.isModuleBlock(node.body)
      ) {
        for (const statement of node.body.statements) {
          if (!ts.isInterfaceDeclaration(statement) || statement.name.text !== 'Events') continue
          for (const member of statement.members) {
            const name = nameOf(member, source)
            if (!name) continue
            const doc = jsDocOf(member)
            const mode = doc.tags.mode
            const line = source.getLineAndCharacterOfPosition(member.getStart(source)).line + 1
            if (!mode || !MODES.has(mode)) {
              problems.push(`${file.path}:${line} event "${name}" needs a @mode tag (one of ${[...MODES].join(', ')})`)
              continue
            }
            events.push({
              name,
              mode,
              doc: doc.text,
              signature: signatureOf(member, source),
              path: file.path,
              line,
              package: file.package,
            })
          }
        }
      }
      ts.forEachChild(node, visit)
    }
    visit(source)
  }
  if (problems.length) throw new Error(`events catalog: ${problems.length} problem(s)\n  ${problems.join('\n  ')}`)
  const seen = new Map()
  for (const event of events) {
    const other = seen.get(event.name)
    if (other) throw new Error(`events catalog: "${event.name}" is declared twice (${other.path}:${other.line} and ${event.path}:${event.line})`)
    seen.set(event.name, event)
  }
  return events.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

function prefixOf(name) {
  const slash = name.indexOf('/')
  return slash < 0 ? name : name.slice(0, slash)
}

function escapeCell(text) {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ')
}

/** Renders the catalog markdown for `events` (as returned by `extractEvents`). */
export function renderCatalog(events) {
  const lines = [
    '# Events catalog',
    '',
    '<!-- Generated by `pnpm catalog` (scripts/events-catalog.mjs). Do not edit by hand: -->',
    '<!-- `pnpm catalog:check` fails when this file is stale. -->',
    '',
    'Every Cordis event that a dsh package declares, grouped by prefix. The **mode** is how the',
    'owner dispatches it: `emit` (synchronous notification), `parallel` (awaits every listener),',
    '`serial` (awaited one by one; the first non-nullish result wins), `bail` (synchronous, first',
    'non-nullish result wins) or `waterfall` (middleware: each listener receives `next` last).',
    'Events about one agent or session are scope-filtered: a listener registered in an agent\'s',
    'scoped context receives only that agent\'s events.',
    '',
  ]
  if (events.length === 0) {
    lines.push('No events are declared yet.', '')
    return lines.join('\n')
  }
  const groups = new Map()
  for (const event of events) {
    const prefix = prefixOf(event.name)
    if (!groups.has(prefix)) groups.set(prefix, [])
    groups.get(prefix).push(event)
  }
  lines.push('| prefix | events |', '| --- | --- |')
  for (const [prefix, list] of groups) {
    lines.push(`| [\`${prefix}/*\`](#${prefix}) | ${list.map((e) => `\`${e.name}\``).join(', ')} |`)
  }
  lines.push('')
  for (const [prefix, list] of groups) {
    lines.push(`## ${prefix}`, '')
    lines.push('| event | mode | signature | declared in |', '| --- | --- | --- | --- |')
    for (const e of list) {
      const where = `${e.package ? `\`${e.package}\` ` : ''}[${e.path}](../../${e.path})`
      lines.push(`| \`${e.name}\` | ${e.mode} | \`${escapeCell(e.signature)}\` | ${where} |`)
    }
    lines.push('')
    for (const e of list) {
      lines.push(`### \`${e.name}\``, '', `Mode: \`${e.mode}\`. Signature: \`${e.signature}\`.`, '')
      lines.push(e.doc ? e.doc : '_No description._', '')
    }
  }
  return lines.join('\n')
}

/** Reads the packages under `root` and returns the catalog text. */
export function buildCatalog(root) {
  const files = packageSources(root).map((path) => ({
    path: relative(root, path).split(sep).join('/'),
    text: readFileSync(path, 'utf8'),
    package: packageName(root, path),
  }))
  return renderCatalog(extractEvents(files))
}

export const CATALOG_PATH = 'docs/cordis-catalog/events.md'

function main(argv) {
  const rootFlag = argv.indexOf('--root')
  const root = rootFlag >= 0 ? argv[rootFlag + 1] : join(dirname(fileURLToPath(import.meta.url)), '..')
  const target = join(root, CATALOG_PATH)
  const text = buildCatalog(root)
  if (argv.includes('--check')) {
    let current = ''
    try {
      current = readFileSync(target, 'utf8')
    } catch {}
    if (current !== text) {
      console.error(`${CATALOG_PATH} is stale: run \`pnpm catalog\` and commit the result.`)
      process.exit(1)
    }
    console.log(`${CATALOG_PATH} is up to date.`)
    return
  }
  mkdirSync(dirname(target), { recursive: true })
  writeFileSync(target, text)
  console.log(`wrote ${CATALOG_PATH}`)
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    main(process.argv.slice(2))
  } catch (error) {
    console.error(error instanceof Error ? error.message : error)
    process.exit(1)
  }
}
