#!/usr/bin/env node
// Generates docs/session-events.md: every session event type of
// `SessionEventMap` (dsh-session's own declaration and every package's
// `declare module '@deepseek-ai/dsh-session' { interface SessionEventMap … }`
// merge), with its `data` shape, the JSDoc of each entry and field, the
// package that declares it, and the dsh types those shapes refer to. Reads
// packages/*/*/src with the TypeScript parser. `--check` fails when the
// committed file is stale.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { packageName, packageSources } from './events-catalog.mjs'

export const SESSION_EVENTS_PATH = 'docs/session-events.md'
const SESSION_PACKAGE = '@deepseek-ai/dsh-session'
const MAP = 'SessionEventMap'
const ENVELOPE = 'SessionEvent'

const printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed })

function jsDocText(node) {
  const doc = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc).at(-1)
  if (!doc) return ''
  const text = typeof doc.comment === 'string' ? doc.comment : ts.getTextOfJSDocComment(doc.comment) ?? ''
  return text.trim()
}

function lineOf(source, node) {
  return source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1
}

/**
 * The type as TypeScript text, comments removed, laid out by the printer and
 * then in the repository's style (2-space indents, no semicolons at line ends).
 */
function typeText(node, source) {
  return printer
    .printNode(ts.EmitHint.Unspecified, node, source)
    .split('\n')
    .map((line) => line.replace(/^(?: {4})+/, (indent) => ' '.repeat(indent.length / 2)).replace(/;$/, ''))
    .join('\n')
}

/** A type on one line (for table cells): members separated by `; `. */
function oneLine(text) {
  return text
    .replace(/([^{;,(|&\s])\n\s*(?=[^\s}])/g, '$1; ')
    .replace(/\s+/g, ' ')
    .replace(/;\s*}/g, ' }')
    .trim()
}

function memberName(member) {
  const name = member.name
  if (!name) return undefined
  if (ts.isStringLiteral(name) || ts.isIdentifier(name) || ts.isNumericLiteral(name)) return name.text
  return undefined // computed (symbol-keyed) members are internal
}

/**
 * The fields of a data shape: each property of a type literal, then the
 * properties of any type literal nested in a property (`error.code`), or in
 * an array of one (`contexts[].label`).
 */
function fieldsOf(typeNode, source, prefix = '') {
  const rows = []
  if (!typeNode || !ts.isTypeLiteralNode(typeNode)) return rows
  for (const member of typeNode.members) {
    if (!ts.isPropertySignature(member)) continue
    const name = memberName(member)
    if (name === undefined) continue
    const path = `${prefix}${name}${member.questionToken ? '?' : ''}`
    rows.push({ name: path, type: member.type ? oneLine(typeText(member.type, source)) : 'unknown', doc: jsDocText(member) })
    let inner = member.type
    let suffix = '.'
    if (inner && ts.isArrayTypeNode(inner)) {
      inner = inner.elementType
      suffix = '[].'
    }
    if (inner && ts.isParenthesizedTypeNode(inner)) inner = inner.type
    rows.push(...fieldsOf(inner, source, `${prefix}${name}${suffix}`))
  }
  return rows
}

/** Names of the types a node refers to (type references and `extends` clauses), in source order. */
function referencedNames(node) {
  const names = []
  const visit = (n) => {
    if (ts.isTypeReferenceNode(n) && ts.isIdentifier(n.typeName)) names.push(n.typeName.text)
    else if (ts.isExpressionWithTypeArguments(n) && ts.isIdentifier(n.expression)) names.push(n.expression.text)
    if (ts.isTypeQueryNode(n)) return
    ts.forEachChild(n, visit)
  }
  visit(node)
  return names
}

function isTypeDeclaration(node) {
  return ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node) || ts.isEnumDeclaration(node)
}

/**
 * Reads `files` (`{ path, text, package }`, paths relative to the repository)
 * and returns the session events, the envelope's fields and the referenced
 * types. Throws when an event type is declared twice.
 */
export function extractSessionEvents(files) {
  /** package → name → declarations (a merged interface has several). */
  const index = new Map()
  /** package → exported name → { pkg, name } it re-exports from another package. */
  const reexports = new Map()
  /** file path → local name → { pkg, name } it imports. */
  const imports = new Map()
  /** event type → { ignorable, projected, by } from `registerType` / `projector` calls. */
  const registrations = new Map()

  const addDecl = (pkg, decl) => {
    if (!index.has(pkg)) index.set(pkg, new Map())
    const byName = index.get(pkg)
    if (!byName.has(decl.name)) byName.set(decl.name, [])
    byName.get(decl.name).push(decl)
  }

  const parsed = []
  for (const file of files) {
    const source = ts.createSourceFile(file.path, file.text, ts.ScriptTarget.Latest, true)
    parsed.push({ file, source })
    const fileImports = new Map()
    imports.set(file.path, fileImports)
    for (const statement of source.statements) {
      if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier)) {
        const spec = statement.moduleSpecifier.text
        const pkg = spec.startsWith('.') ? file.package : spec
        const bindings = statement.importClause?.namedBindings
        if (bindings && ts.isNamedImports(bindings)) {
          for (const element of bindings.elements) {
            fileImports.set(element.name.text, { pkg, name: (element.propertyName ?? element.name).text })
          }
        }
      } else if (
        ts.isExportDeclaration(statement) &&
        statement.moduleSpecifier &&
        ts.isStringLiteral(statement.moduleSpecifier) &&
        !statement.moduleSpecifier.text.startsWith('.') &&
        statement.exportClause &&
        ts.isNamedExports(statement.exportClause)
      ) {
        if (!reexports.has(file.package)) reexports.set(file.package, new Map())
        for (const element of statement.exportClause.elements) {
          reexports.get(file.package).set(element.name.text, {
            pkg: statement.moduleSpecifier.text,
            name: (element.propertyName ?? element.name).text,
          })
        }
      } else if (isTypeDeclaration(statement)) {
        addDecl(file.package, { name: statement.name.text, node: statement, file, source, augmentation: false })
      } else if (
        ts.isModuleDeclaration(statement) &&
        ts.isStringLiteral(statement.name) &&
        statement.name.text.startsWith('@deepseek-ai/') &&
        statement.body &&
        ts.isModuleBlock(statement.body)
      ) {
        for (const inner of statement.body.statements) {
          if (isTypeDeclaration(inner)) {
            addDecl(statement.name.text, { name: inner.name.text, node: inner, file, source, augmentation: true })
          }
        }
      }
    }
    const visit = (node) => {
      if (
        ts.isCallExpression(node) &&
        ts.isPropertyAccessExpression(node.expression) &&
        ['registerType', 'projector'].includes(node.expression.name.text) &&
        node.arguments.length >= 1 &&
        ts.isStringLiteral(node.arguments[0])
      ) {
        const type = node.arguments[0].text
        const entry = registrations.get(type) ?? { ignorable: false, projected: false, by: new Set() }
        entry.by.add(file.package)
        if (node.expression.name.text === 'projector') entry.projected = true
        const options = node.arguments[1]
        if (node.expression.name.text === 'registerType' && options && ts.isObjectLiteralExpression(options)) {
          for (const property of options.properties) {
            const name = property.name && ts.isIdentifier(property.name) ? property.name.text : undefined
            if (name === 'ignorable' && ts.isPropertyAssignment(property) && property.initializer.kind === ts.SyntaxKind.TrueKeyword) {
              entry.ignorable = true
            }
            if (name === 'projector') entry.projected = true
          }
        }
        registrations.set(type, entry)
      }
      ts.forEachChild(node, visit)
    }
    if (file.text.includes('registerType') || file.text.includes('projector(')) visit(source)
  }

  const lookup = (pkg, name, seen = new Set()) => {
    const found = index.get(pkg)?.get(name)
    if (found) return { pkg, name, decls: found }
    const re = reexports.get(pkg)?.get(name)
    const key = `${pkg}\0${name}`
    if (re && !seen.has(key)) return lookup(re.pkg, re.name, new Set([...seen, key]))
    return undefined
  }
  /** Resolves a name used in `decl`'s file: its imports, then its own package, then the augmented package. */
  const resolve = (name, decl, augmented) => {
    const imported = imports.get(decl.file.path)?.get(name)
    if (imported) return lookup(imported.pkg, imported.name)
    return lookup(decl.file.package, name) ?? (augmented ? lookup(augmented, name) : undefined)
  }

  // The events: every member of every SessionEventMap declaration of dsh-session.
  const maps = index.get(SESSION_PACKAGE)?.get(MAP) ?? []
  const events = []
  const seen = new Map()
  const types = new Map() // key → { pkg, name, decls }
  const queue = []
  const want = (resolved) => {
    if (!resolved || resolved.name === MAP || resolved.name === ENVELOPE) return undefined
    const key = `${resolved.pkg}\0${resolved.name}`
    if (!types.has(key)) {
      types.set(key, resolved)
      queue.push(resolved)
    }
    return key
  }
  for (const map of maps) {
    if (!ts.isInterfaceDeclaration(map.node)) continue
    for (const member of map.node.members) {
      if (!ts.isPropertySignature(member)) continue
      const type = memberName(member)
      if (type === undefined) continue
      const line = lineOf(map.source, member)
      const other = seen.get(type)
      if (other) throw new Error(`session events: "${type}" is declared twice (${other.path}:${other.line} and ${map.file.path}:${line})`)
      const refs = []
      for (const name of member.type ? referencedNames(member.type) : []) {
        const key = want(resolve(name, map, SESSION_PACKAGE))
        if (key && !refs.includes(key)) refs.push(key)
      }
      const event = {
        type,
        builtIn: !map.augmentation && map.file.package === SESSION_PACKAGE,
        package: map.file.package,
        path: map.file.path,
        line,
        doc: jsDocText(member),
        shape: member.type ? typeText(member.type, map.source) : 'unknown',
        fields: fieldsOf(member.type, map.source),
        refs,
        registration: registrations.get(type),
      }
      seen.set(type, event)
      events.push(event)
    }
  }
  // Every dsh type reachable from the shapes.
  while (queue.length) {
    const current = queue.shift()
    current.refs = []
    for (const decl of current.decls) {
      for (const name of referencedNames(decl.node)) {
        if (name === current.name) continue
        const key = want(resolve(name, decl, decl.augmentation ? current.pkg : undefined))
        if (key && !current.refs.includes(key)) current.refs.push(key)
      }
    }
  }
  // The envelope.
  const envelopeDecl = (index.get(SESSION_PACKAGE)?.get(ENVELOPE) ?? []).find((d) => ts.isInterfaceDeclaration(d.node))
  const envelope = envelopeDecl
    ? envelopeDecl.node.members
        .filter((m) => ts.isPropertySignature(m) && memberName(m) !== undefined)
        .map((m) => ({
          name: `${memberName(m)}${m.questionToken ? '?' : ''}`,
          type: m.type ? oneLine(typeText(m.type, envelopeDecl.source)) : 'unknown',
          doc: jsDocText(m),
        }))
    : []
  const envelopeSource = envelopeDecl ? { path: envelopeDecl.file.path, doc: jsDocText(envelopeDecl.node) } : undefined

  events.sort((a, b) => (a.builtIn !== b.builtIn ? (a.builtIn ? -1 : 1) : 0))
  const referenced = [...types.entries()]
    .map(([key, t]) => ({
      key,
      name: t.name,
      pkg: t.pkg,
      refs: t.refs,
      parts: t.decls.map((d) => ({
        package: d.file.package,
        path: d.file.path,
        augmentation: d.augmentation,
        text: declarationText(d),
      })),
    }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.pkg < b.pkg ? -1 : a.pkg > b.pkg ? 1 : 0))
  return { events, envelope, envelopeSource, types: referenced }
}

/** A declaration as written, with its JSDoc, re-indented to the left margin. */
function declarationText(decl) {
  const { node, source } = decl
  const docs = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc)
  const start = docs.length ? docs[0].getStart(source) : node.getStart(source)
  const lineStart = source.text.lastIndexOf('\n', start - 1) + 1
  const indent = source.text.slice(lineStart, start)
  const text = source.text.slice(start, node.getEnd())
  const lines = text.split('\n')
  const strip = /^\s*$/.test(indent) ? indent.length : 0
  return lines.map((line, i) => (i === 0 ? line : line.startsWith(' '.repeat(strip)) ? line.slice(strip) : line.trimStart())).join('\n')
}

function anchorsFor(types) {
  const count = new Map()
  for (const t of types) count.set(t.name, (count.get(t.name) ?? 0) + 1)
  const anchors = new Map()
  for (const t of types) {
    const pkg = t.pkg.replace(/^@deepseek-ai\//, '')
    anchors.set(t.key, count.get(t.name) > 1 ? `type-${pkg}-${t.name}`.toLowerCase() : `type-${t.name}`.toLowerCase())
  }
  return anchors
}

function eventAnchor(type) {
  return `event-${type.replace(/[^A-Za-z0-9]+/g, '-').toLowerCase()}`
}

function cell(text) {
  return text.replace(/\|/g, '\\|').replace(/\n+/g, ' ')
}

function code(text) {
  return text.includes('`') ? `\`\` ${text} \`\`` : `\`${text}\``
}

function firstSentence(text) {
  const flat = text.replace(/\s+/g, ' ').trim()
  const match = /^(.*?[.!?])(\s|$)/.exec(flat)
  return match ? match[1] : flat
}

function sourceLink(path) {
  return `[${path}](../${path})`
}

/** A code fence longer than any run of backticks in `text` (doc comments may hold fenced examples). */
function fence(text) {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length))
  return '`'.repeat(Math.max(3, longest + 1))
}

function statusOf(event) {
  if (event.builtIn) return 'Built in: every session knows this type.'
  const parts = ['Merged into `SessionEventMap` by a plugin.']
  const reg = event.registration
  if (!reg) {
    parts.push('No `registerType` call for it was found in the package sources: a session must register it (`ctx.sessions.registerType`) before appending or loading it.')
  } else {
    parts.push(
      reg.ignorable
        ? 'Registered ignorable: a session that holds it still loads without the plugin, which reads it as log-only.'
        : 'Registered, not ignorable: a session that holds it loads only where the plugin is mounted.',
    )
    if (reg.projected) parts.push('It has a projector: it can add messages to the derived history.')
  }
  return parts.join(' ')
}

/** Renders the reference markdown for the result of `extractSessionEvents`. */
export function renderSessionEvents({ events, envelope, envelopeSource, types }) {
  const anchors = anchorsFor(types)
  const typeLinks = (refs) => refs.map((key) => `[\`${types.find((t) => t.key === key).name}\`](#${anchors.get(key)})`).join(', ')
  const lines = [
    '# Session event types',
    '',
    '<!-- Generated by `pnpm catalog` (scripts/session-events.mjs). Do not edit by hand: -->',
    '<!-- `pnpm catalog:check` fails when this file is stale. -->',
    '',
    'Every entry of a session log is a `SessionEvent`: a `type` from `SessionEventMap` and the `data`',
    'that type declares. dsh-session declares the built-in types; a plugin adds its own by declaration',
    "merging (`declare module '@deepseek-ai/dsh-session' { interface SessionEventMap { … } }`) and",
    'registers them with `ctx.sessions.registerType`. By default only `user/message`,',
    '`steering/message`, `assistant/message` (non-empty) and `tool/result` reach the model; see',
    '[R-SES-3](contracts.md#r-ses-3). The Cordis events (`session/event`, `agent/*`, …) are in the',
    '[events catalog](cordis-catalog/events.md).',
    '',
  ]
  if (envelope.length) {
    lines.push('## The envelope', '')
    if (envelopeSource) lines.push(`\`SessionEvent\`, declared in \`${SESSION_PACKAGE}\` ${sourceLink(envelopeSource.path)}. ${envelopeSource.doc}`.trim(), '')
    lines.push('| field | type | description |', '| --- | --- | --- |')
    for (const f of envelope) lines.push(`| \`${f.name}\` | ${code(cell(f.type))} | ${cell(f.doc)} |`)
    lines.push('')
  }
  if (events.length === 0) {
    lines.push('No session event types are declared yet.', '')
    return lines.join('\n')
  }
  lines.push('## Event types', '', '| type | declared by | summary |', '| --- | --- | --- |')
  for (const e of events) {
    lines.push(`| [\`${e.type}\`](#${eventAnchor(e.type)}) | \`${e.package}\`${e.builtIn ? '' : ' (merged)'} | ${cell(firstSentence(e.doc))} |`)
  }
  lines.push('')
  for (const e of events) {
    lines.push(`<a id="${eventAnchor(e.type)}"></a>`, `### \`${e.type}\``, '')
    lines.push(`Declared in \`${e.package}\` ${sourceLink(e.path)}. ${statusOf(e)}`, '')
    lines.push(e.doc ? e.doc : '_No description._', '')
    const entry = `'${e.type}': ${e.shape}`
    lines.push('Its `data`, as the `SessionEventMap` entry declares it:', '', `${fence(entry)}ts`, entry, fence(entry), '')
    if (e.fields.some((f) => f.doc)) {
      lines.push('| field | type | description |', '| --- | --- | --- |')
      for (const f of e.fields) lines.push(`| \`${f.name}\` | ${code(cell(f.type))} | ${cell(f.doc)} |`)
      lines.push('')
    }
    if (e.refs.length) lines.push(`Types: ${typeLinks(e.refs)}.`, '')
  }
  if (types.length) {
    lines.push('## Referenced types', '', 'The dsh types that the shapes above refer to, as declared (with their doc comments).', '')
    for (const t of types) {
      lines.push(`<a id="${anchors.get(t.key)}"></a>`, `### \`${t.name}\``, '')
      const where = t.parts.map((p) => `\`${p.package}\` ${sourceLink(p.path)}${p.augmentation ? ' (merged)' : ''}`)
      lines.push(`Declared in ${where.join(', ')}.`, '')
      for (const p of t.parts) lines.push(`${fence(p.text)}ts`, p.text, fence(p.text), '')
      if (t.refs.length) lines.push(`Uses: ${typeLinks(t.refs)}.`, '')
    }
  }
  return lines.join('\n')
}

/** Reads the packages under `root` and returns the reference text. */
export function buildSessionEvents(root) {
  const files = packageSources(root).map((path) => ({
    path: relative(root, path).split(sep).join('/'),
    text: readFileSync(path, 'utf8'),
    package: packageName(root, path),
  }))
  return renderSessionEvents(extractSessionEvents(files))
}

function main(argv) {
  const rootFlag = argv.indexOf('--root')
  const root = rootFlag >= 0 ? argv[rootFlag + 1] : join(dirname(fileURLToPath(import.meta.url)), '..')
  const target = join(root, SESSION_EVENTS_PATH)
  const text = buildSessionEvents(root)
  if (argv.includes('--check')) {
    let current = ''
    try {
      current = readFileSync(target, 'utf8')
    } catch {}
    if (current !== text) {
      console.error(`${SESSION_EVENTS_PATH} is stale: run \`pnpm catalog\` and commit the result.`)
      process.exit(1)
    }
    console.log(`${SESSION_EVENTS_PATH} is up to date.`)
    return
  }
  mkdirSync(dirname(target), { recursive: true })
  writeFileSync(target, text)
  console.log(`wrote ${SESSION_EVENTS_PATH}`)
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    main(process.argv.slice(2))
  } catch (error) {
    console.error(error instanceof Error ? error.message : error)
    process.exit(1)
  }
}
