import { readFile } from 'node:fs/promises'
import { basename, join, resolve } from 'node:path'
import Schema from 'schemastery'
import { parse as parseYaml, parseDocument } from 'yaml'
import { ProviderConfig } from '@deepseek-ai/dsh-llm-openai'
import { SpineConfig } from '@deepseek-ai/dsh-agent-spine'
import { CliError } from './errors'
import type { ModelPrice } from './prices'

/** The names `dsh-demo` looks for in the working directory, in this order. */
export const CONFIG_FILE_NAMES = Object.freeze(['dsh.config.json', 'dsh.config.yaml', 'dsh.config.yml'])

/**
 * The command line's own fields of the config file (next to the spine's).
 * Each has a flag of the same meaning; a flag given on the command line wins.
 */
export interface CliFileConfig {
  /** `scripted` (default), a preset (`deepseek`, `openai`) or the name of an OpenAI-compatible server. */
  provider?: string
  /** The server's API root, e.g. `http://127.0.0.1:11434/v1`. */
  baseUrl?: string
  model?: string
  /** The environment variable that holds the API key (presets: `DEEPSEEK_API_KEY`, `OPENAI_API_KEY`). */
  apiKeyEnv?: string
  reasoningEffort?: string
  /** Where sessions are saved; relative to the config file. Default `~/.dsh/sessions`. */
  dataDir?: string
  /** The workspace the tools work in; relative to the config file. Default: the current directory. */
  cwd?: string
  /** Options of the scripted model (`@deepseek-ai/dsh-llm-scripted`), e.g. `chunkDelayMs`, `script`. */
  scripted?: Record<string, unknown>
  /** More fields of the OpenAI-compatible provider (`@deepseek-ai/dsh-llm-openai` `ProviderConfig`): headers, models, timeouts. */
  openai?: ProviderConfig
  /** A JSON file of MCP servers in the `mcpServers` shape (dsh-mcp); relative to the config file. */
  mcpConfig?: string
  /** Prices by `provider/model` in US dollars per million tokens, over the preset models' list prices (`prices.ts`). */
  prices?: Record<string, ModelPrice>
}

export const CliFileConfig: Schema<CliFileConfig> = Schema.object({
  provider: Schema.string().description('scripted, deepseek, openai, or the name of an OpenAI-compatible server.'),
  baseUrl: Schema.string().description('API root of an OpenAI-compatible server.'),
  model: Schema.string().description('Model id.'),
  apiKeyEnv: Schema.string().description('Environment variable holding the API key.'),
  reasoningEffort: Schema.string().description('Reasoning effort of every request.'),
  dataDir: Schema.string().description('Directory of the saved sessions.'),
  cwd: Schema.string().description('Workspace directory of the tools.'),
  scripted: Schema.dict(Schema.any()).description('Options of the scripted offline model.'),
  openai: ProviderConfig.description('More options of the OpenAI-compatible provider.'),
  mcpConfig: Schema.string().description('A JSON file of MCP servers in the mcpServers shape.'),
  prices: Schema.dict(
    Schema.object({
      input: Schema.number().min(0).required(),
      output: Schema.number().min(0).required(),
      cacheRead: Schema.number().min(0),
      cacheWrite: Schema.number().min(0),
    }),
  ).description('Prices by provider/model, US dollars per million tokens (input, output, cacheRead, cacheWrite).'),
}) as Schema<CliFileConfig>

/** The whole file: the spine bundle's config plus the command line's fields. */
export type DemoFileConfig = SpineConfig & CliFileConfig

export const DemoFileConfig: Schema<Partial<DemoFileConfig>, DemoFileConfig> = Schema.intersect([SpineConfig, CliFileConfig]) as never

/** A config file read and validated. */
export interface LoadedConfigFile {
  /** The absolute path of the file, or `undefined` when there is none. */
  file: string | undefined
  /** The validated config (defaults filled); `{}`-equivalent without a file. */
  config: DemoFileConfig
}

/**
 * Reads the config file: `explicit` when given (it must exist), else the
 * first of `CONFIG_FILE_NAMES` in `directory`, else none. Throws
 * `INVALID_CONFIG` naming the file (and the field, line or column) for a file
 * that cannot be read or parsed, that is not an object (`null` included; an
 * empty YAML file is an empty config), that has a field no one knows, or
 * whose values the schemas refuse.
 */
export async function loadConfigFile(explicit: string | undefined, directory: string): Promise<LoadedConfigFile> {
  let file: string | undefined
  let text: string | undefined
  if (explicit !== undefined) {
    file = resolve(explicit)
    try {
      text = await readFile(file, 'utf8')
    } catch (error) {
      throw new CliError('INVALID_CONFIG', `cannot read the config file ${file}: ${(error as Error).message}`)
    }
  } else {
    for (const name of CONFIG_FILE_NAMES) {
      const candidate = join(directory, name)
      try {
        text = await readFile(candidate, 'utf8')
        file = candidate
        break
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
          throw new CliError('INVALID_CONFIG', `cannot read the config file ${candidate}: ${(error as Error).message}`)
        }
      }
    }
  }
  if (file === undefined || text === undefined) return { file: undefined, config: DemoFileConfig({}) }
  return { file, config: parseConfig(text, file) }
}

/** Parses and validates the text of a config file named `file` (JSON, or YAML for `.yaml`/`.yml`). */
export function parseConfig(text: string, file: string): DemoFileConfig {
  let raw: unknown
  const yaml = /\.ya?ml$/i.test(file)
  try {
    raw = yaml ? parseYaml(text) : JSON.parse(text)
  } catch (error) {
    throw new CliError('INVALID_CONFIG', `${file}: not valid ${yaml ? 'YAML' : 'JSON'}: ${(error as Error).message.split('\n')[0]}`)
  }
  if (raw === null || raw === undefined) {
    // An empty file (or one of comments only) configures nothing; an explicit `null` is a mistake
    // (a template left unfilled, a generator that wrote nothing useful) and is refused.
    if (!yaml || parseDocument(text).contents !== null) {
      throw new CliError('INVALID_CONFIG', `${file}: the config must be an object of fields (${basename(file)} holds null)`)
    }
    raw = {}
  }
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw new CliError('INVALID_CONFIG', `${file}: the config must be an object of fields (${basename(file)} holds ${Array.isArray(raw) ? 'a list' : typeof raw})`)
  }
  return validateFields(DemoFileConfig, raw, file)
}

/**
 * Validates `value` with `schema`, refusing fields the schema does not
 * declare (a misspelt field would otherwise be ignored silently). Throws
 * `INVALID_CONFIG` as `<where>: <problem>`, naming the field with `prefix`
 * (e.g. `scripted.`) in front of its path.
 */
export function validateFields<T>(schema: Schema<any, T>, value: unknown, where: string, prefix = ''): T {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const [first] = unknownFields(schema, value as Record<string, unknown>, prefix)
    if (first) throw new CliError('INVALID_CONFIG', `${where}: unknown field "${first.path}" (known here: ${first.known.join(', ')})`)
  }
  try {
    return schema(value as never)
  } catch (error) {
    throw new CliError('INVALID_CONFIG', `${where}: ${describeSchemaError(error, prefix)}`)
  }
}

/**
 * A Schemastery error as `field: problem` (`retry.maxDelayMs: expected number
 * but got x`); Schemastery writes the path as `$.retry.maxDelayMs` before the
 * problem.
 */
export function describeSchemaError(error: unknown, prefix = ''): string {
  const message = error instanceof Error ? error.message : String(error)
  const match = /^\$(\S*) (.*)$/s.exec(message)
  if (!match) return message
  const path = prefix + match[1]!.replace(/^\./, '')
  return path ? `field "${path.replace(/\.$/, '')}": ${match[2]}` : match[2]!
}

type AnySchema = Schema<any, any>

/** The fields an object schema (or an intersection of them) declares, with their schemas. */
function fieldsOf(schema: AnySchema): Map<string, AnySchema> | undefined {
  if (schema.type === 'object' && schema.dict) return new Map(Object.entries(schema.dict as Record<string, AnySchema>))
  if (schema.type === 'intersect' && schema.list) {
    const fields = new Map<string, AnySchema>()
    for (const part of schema.list as AnySchema[]) for (const [key, value] of fieldsOf(part) ?? []) fields.set(key, value)
    return fields
  }
  return undefined
}

/** Fields of `value` that `schema` does not declare, depth first (a misspelt field would otherwise be ignored silently). */
function unknownFields(schema: AnySchema, value: Record<string, unknown>, prefix: string): { path: string; known: string[] }[] {
  const fields = fieldsOf(schema)
  if (!fields) return []
  const found: { path: string; known: string[] }[] = []
  for (const [key, item] of Object.entries(value)) {
    const field = fields.get(key)
    if (!field) {
      found.push({ path: `${prefix}${key}`, known: [...fields.keys()] })
      continue
    }
    if (item !== null && typeof item === 'object' && !Array.isArray(item)) {
      found.push(...unknownFields(field, item as Record<string, unknown>, `${prefix}${key}.`))
    }
  }
  return found
}
