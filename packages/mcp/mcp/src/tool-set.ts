import type { JsonSchema } from '@deepseek-ai/dsh-llm'
import type { ToolDefinition } from '@deepseek-ai/dsh-tools'
import type { Tool } from '@modelcontextprotocol/sdk/types.js'
import type { ServerConnection } from './connection'
import { assignToolNames, type ToolKey } from './names'
import type { Redactor } from './redact'
import { toToolOutput, type ResultLimits } from './results'
import { wellFormed } from './well-formed'

/** How the tool definitions are made. */
export interface ToolSetOptions extends ResultLimits {
  /** Characters of a tool's description the model sees; longer ones are cut with `…`. */
  readonly maxDescriptionChars: number
  /** A call's deadline when its server sets none; undefined leaves dsh-tools' default. */
  readonly toolTimeoutMs: number | undefined
}

/** One MCP tool as one agent sees it. */
export interface McpToolEntry {
  /** The dsh tool name (`mcp__<server>__<tool>`, normalized). */
  readonly name: string
  readonly connection: ServerConnection
  readonly tool: Tool
  readonly definition: ToolDefinition
}

/**
 * Makes the dsh tool definitions of the MCP servers one agent sees (R-MCP-1):
 * names from `assignToolNames` over the whole set, sorted by name; the
 * server's description (cut to `maxDescriptionChars`, redacted) and input
 * schema (without its `$schema` key); effect `read` for a tool annotated
 * `readOnlyHint: true` (whose calls may also overlap), else `execute`.
 *
 * A definition is made once per server tool object and name, so an agent
 * whose servers did not change gets the very same definitions back (and
 * nothing is registered again).
 */
export class ToolFactory {
  private readonly made = new WeakMap<Tool, Map<string, ToolDefinition>>()

  constructor(private readonly options: ToolSetOptions) {}

  /** The tools of `connections` (connected ones only), sorted by dsh name. */
  entries(connections: Iterable<ServerConnection>): McpToolEntry[] {
    const keys: Array<ToolKey & { connection: ServerConnection; spec: Tool }> = []
    for (const connection of connections) {
      if (connection.state !== 'connected') continue
      for (const spec of connection.tools) keys.push({ server: connection.name, tool: spec.name, connection, spec })
    }
    const names = assignToolNames(keys)
    const entries = keys.map((key) => {
      const name = names.get(key)!
      return { name, connection: key.connection, tool: key.spec, definition: this.definition(name, key.connection, key.spec) }
    })
    return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  }

  private definition(name: string, connection: ServerConnection, tool: Tool): ToolDefinition {
    let byName = this.made.get(tool)
    const known = byName?.get(name)
    if (known) return known
    const { options } = this
    const redactor = connection.server.redactor
    const readOnly = tool.annotations?.readOnlyHint === true
    const timeoutMs = connection.server.timeoutMs ?? options.toolTimeoutMs
    const toolName = tool.name
    const definition: ToolDefinition = {
      name,
      description: describe(tool, connection.name, options.maxDescriptionChars, redactor),
      parameters: inputSchema(tool, redactor),
      effect: readOnly ? 'read' : 'execute',
      ...(readOnly ? { isConcurrencySafe: () => true } : {}),
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      async execute(args, run) {
        const result = await connection.call(toolName, args as Record<string, unknown>, run.signal)
        return toToolOutput(result, options, redactor)
      },
    }
    if (!byName) this.made.set(tool, (byName = new Map()))
    byName.set(name, definition)
    return definition
  }
}

/** The description the model reads: well-formed, redacted, then cut (a cut inside a secret would leave its pieces). */
function describe(tool: Tool, server: string, max: number, redactor: Redactor): string {
  const text = wellFormed(redactor.redact((tool.description ?? '').trim() || (tool.title ?? '').trim() || `The ${tool.name} tool of the MCP server "${server}".`))
  if (text.length <= max) return text
  let end = max - 1
  const code = text.charCodeAt(end - 1)
  if (code >= 0xd800 && code <= 0xdbff) end--
  return `${text.slice(0, end)}…`
}

/**
 * The server's input schema as the model receives it: without `$schema`,
 * always an object with `properties`, well-formed and redacted like the description (a
 * server may quote what it was configured with, such as a connection string
 * from `env`, in a property's description or default, and the schemas are
 * part of every request and of the log's `request/header`).
 */
function inputSchema(tool: Tool, redactor: Redactor): JsonSchema {
  const { $schema: _ignored, ...schema } = safeStrings((tool.inputSchema ?? {}) as Record<string, unknown>, redactor) as Record<string, unknown>
  if (schema.type === undefined) schema.type = 'object'
  if (schema.properties === undefined) schema.properties = {}
  flattenTopLevel(schema)
  fillArrayItems(schema)
  return schema as JsonSchema
}

const COMBINATORS = ['allOf', 'anyOf', 'oneOf'] as const

/**
 * Replaces `allOf`, `anyOf` and `oneOf` at the top level of an input schema,
 * in place, by one object: every property of every branch (a property the
 * schema or an earlier branch defines keeps that definition), required what
 * the schema requires, what any `allOf` part requires and what every
 * alternative of an `anyOf`/`oneOf` requires. Anthropic (also through Bedrock
 * and Vertex) refuses the whole request when any tool's input schema has one
 * of them at the top level; the server still checks the constraints that are
 * lost here, and its error is a result the model reads.
 */
function flattenTopLevel(schema: Record<string, unknown>): void {
  if (!COMBINATORS.some((key) => schema[key] !== undefined)) return
  const properties = { ...(isRecord(schema.properties) ? schema.properties : {}) }
  const required = new Set(stringList(schema.required))
  for (const key of COMBINATORS) {
    const branches = schema[key]
    delete schema[key]
    if (!Array.isArray(branches)) continue
    let common: Set<string> | undefined
    for (const branch of branches) {
      const own = isRecord(branch) ? branch : {}
      if (isRecord(own.properties)) for (const [name, property] of Object.entries(own.properties)) if (!(name in properties)) properties[name] = property
      const needs = stringList(own.required)
      if (key === 'allOf') for (const name of needs) required.add(name)
      else common = common === undefined ? new Set(needs) : new Set(needs.filter((name) => common!.has(name)))
    }
    for (const name of common ?? []) required.add(name)
  }
  schema.properties = properties
  if (required.size > 0) schema.required = [...required]
  else delete schema.required
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : []
}

/** Keywords whose values are data, not schemas: never changed. */
const VALUE_KEYWORDS = new Set(['const', 'default', 'enum', 'examples'])

/**
 * Gives every array schema without `items` (or `prefixItems`) the schema of
 * any item, `items: {}`, in place. JSON Schema allows leaving it out, and
 * servers written by hand often do, but OpenAI's function validation refuses
 * the whole request for it ("array schema missing items"), as does Gemini:
 * one such tool would make every request of the agent fail.
 */
function fillArrayItems(node: unknown): void {
  if (node === null || typeof node !== 'object') return
  if (Array.isArray(node)) {
    for (const item of node) fillArrayItems(item)
    return
  }
  const schema = node as Record<string, unknown>
  const type = schema.type
  if ((type === 'array' || (Array.isArray(type) && type.includes('array'))) && schema.items === undefined && schema.prefixItems === undefined) schema.items = {}
  for (const [key, value] of Object.entries(schema)) if (!VALUE_KEYWORDS.has(key)) fillArrayItems(value)
}

/** A copy of a JSON value with every string in it (object keys included) redacted and made well-formed. */
function safeStrings(value: unknown, redactor: Redactor): unknown {
  if (typeof value === 'string') return wellFormed(redactor.redact(value))
  if (Array.isArray(value)) return value.map((item) => safeStrings(item, redactor))
  if (value === null || typeof value !== 'object') return value
  const out: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) out[wellFormed(redactor.redact(key))] = safeStrings(item, redactor)
  return out
}
