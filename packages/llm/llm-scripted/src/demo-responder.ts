import type { ContentBlock, LlmRequest, Message } from '@deepseek-ai/dsh-llm'
import type { ScriptReply, ScriptToolCall } from './script'

/** One tool call of the current turn with its result, once the result arrived. */
interface ToolRound {
  name: string
  arguments: string
  result?: { text: string; isError: boolean }
}

/** A directory entry seen in a `list_dir` result. */
interface Entry {
  name: string
  directory: boolean
}

const workspaceWords = /\b(files?|dir|dirs|director(?:y|ies)|folders?|workspace|project|repo(?:sitory)?|code|codebase|list|read|open|show|look|search|find|grep|readme|package|contents?|what(?:'s| is) in)\b/i
const searchPattern = /\b(?:search|find|grep)\s+(?:for\s+)?["'`]?([^"'`\s?]+)/i

function textOfBlocks(blocks: readonly ContentBlock[]): string {
  let out = ''
  for (const block of blocks) if (block.type === 'text') out += block.text
  return out
}

function isToolResultMessage(message: Message): boolean {
  return message.role === 'user' && message.content.some((block) => block.type === 'tool-result')
}

/** The prompt of the current turn and the tool rounds that followed it, in order. */
function currentTurn(messages: readonly Message[]): { prompt: string; rounds: ToolRound[] } | undefined {
  let start = -1
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!
    if (message.role === 'user' && !isToolResultMessage(message) && textOfBlocks(message.content).trim() !== '') {
      start = i
      break
    }
  }
  if (start < 0) return undefined
  const rounds = new Map<string, ToolRound>()
  for (let i = start + 1; i < messages.length; i++) {
    for (const block of messages[i]!.content) {
      if (block.type === 'tool-call') rounds.set(block.id, { name: block.name, arguments: block.arguments })
      else if (block.type === 'tool-result') {
        const round = rounds.get(block.toolCallId)
        if (round) round.result = { text: textOfBlocks(block.content), isError: block.isError === true }
      }
    }
  }
  return { prompt: textOfBlocks(messages[start]!.content).trim(), rounds: [...rounds.values()] }
}

/**
 * Reads a `list_dir` result: one entry per line (a leading `- `/`* ` is
 * dropped; a trailing `/` marks a directory), or a JSON array of names or of
 * `{ name, type }` objects.
 */
function parseListing(text: string): Entry[] {
  try {
    const parsed: unknown = JSON.parse(text)
    if (Array.isArray(parsed)) {
      return parsed.flatMap((item): Entry[] => {
        if (typeof item === 'string') return [{ name: item.replace(/\/$/, ''), directory: item.endsWith('/') }]
        if (item && typeof item === 'object' && typeof (item as { name?: unknown }).name === 'string') {
          const { name, type } = item as { name: string; type?: unknown }
          return [{ name, directory: type === 'dir' || type === 'directory' }]
        }
        return []
      })
    }
  } catch {
    // Not JSON: read it as lines.
  }
  const entries: Entry[] = []
  for (const raw of text.split('\n')) {
    const line = raw.trim().replace(/^[-*]\s+/, '')
    if (line === '' || line.endsWith(':')) continue
    entries.push({ name: line.replace(/\/$/, ''), directory: line.endsWith('/') })
  }
  return entries
}

function pickFile(entries: Entry[], prompt: string): string | undefined {
  const files = entries.filter((entry) => !entry.directory)
  const lower = prompt.toLowerCase()
  return (
    files.find((file) => lower.includes(file.name.toLowerCase()))?.name ??
    files.find((file) => /^readme/i.test(file.name))?.name ??
    files.find((file) => file.name === 'package.json')?.name ??
    files[0]?.name
  )
}

function quote(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim()
  return line.length > max ? `${line.slice(0, max - 1)}…` : line
}

function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`
}

function argumentOf(round: ToolRound, key: string): string | undefined {
  try {
    const value: unknown = JSON.parse(round.arguments)[key]
    return typeof value === 'string' ? value : undefined
  } catch {
    return undefined
  }
}

/** The search tools the demo model knows: dsh-workspace-tools' `grep`, and the older `search_files`. */
const searchTools = ['grep', 'search_files']

/** A numbered line as `read_file` prints it (`cat -n` style: right-aligned number, a tab). */
const numberedLine = /^ *\d+\t/

/**
 * The file's own lines from a `read_file` result: numbered output loses its
 * line numbers and the bracketed notes a reader adds (`[… more lines]`);
 * plain output is taken as it is.
 */
function fileLines(text: string): string[] {
  const lines = text.split('\n')
  if (!lines.some((line) => numberedLine.test(line))) return lines
  return lines.filter((line) => numberedLine.test(line)).map((line) => line.replace(numberedLine, ''))
}

/** The final answer of a turn, built from what the tools said. */
function summary(rounds: ToolRound[]): string {
  const parts: string[] = []
  for (const round of rounds) {
    if (!round.result) continue
    if (round.result.isError) {
      parts.push(`The ${round.name} call failed: ${quote(round.result.text, 120)}`)
      continue
    }
    if (round.name === 'list_dir') {
      const entries = parseListing(round.result.text)
      const directories = entries.filter((entry) => entry.directory).length
      const names = entries.slice(0, 8).map((entry) => (entry.directory ? `${entry.name}/` : entry.name))
      parts.push(
        `The workspace has ${plural(entries.length, 'entry', 'entries')} (${plural(directories, 'directory', 'directories')}, ${plural(entries.length - directories, 'file')})` +
          (names.length === 0
            ? '.'
            : entries.length > names.length
              ? `: ${names.join(', ')} and ${entries.length - names.length} more.`
              : `: ${names.join(', ')}.`),
      )
    } else if (round.name === 'read_file') {
      const path = argumentOf(round, 'path') ?? 'the file'
      const lines = fileLines(round.result.text)
      const first = lines.find((line) => line.trim() !== '')
      parts.push(`${path} has ${plural(lines.length, 'line')}${first ? ` and starts with "${quote(first, 80)}"` : ' and is empty'}.`)
    } else if (searchTools.includes(round.name)) {
      const pattern = argumentOf(round, 'pattern') ?? '?'
      const hits = round.result.text.split('\n').filter((line) => line.trim() !== '' && !/^\[.*\]$/.test(line) && !line.startsWith('No matches for '))
      parts.push(hits.length === 0 ? `Nothing matches "${pattern}".` : `"${pattern}" matches ${plural(hits.length, 'line')}; the first is ${quote(hits[0]!, 100)}.`)
    } else {
      parts.push(`${round.name} returned: ${quote(round.result.text, 100)}`)
    }
  }
  return parts.length > 0 ? parts.join(' ') : 'I looked, but the tools returned nothing I could use.'
}

/**
 * The offline demo's model: deterministic, and it makes a real tool round
 * trip. For a prompt about the workspace it lists `.` (`list_dir`), or
 * searches (`grep`, or `search_files` where only that is offered) when asked
 * to find something, then reads the
 * file the prompt names, else a README, else `package.json`, else the first
 * file (`read_file`), then answers with what the results said. Any other
 * prompt gets a short text answer. It only calls tools the request offers
 * and never writes. With a reasoning effort set it also streams a one-line
 * reasoning block.
 */
export function demoResponder(request: LlmRequest): ScriptReply {
  const turn = currentTurn(request.messages)
  const think = request.reasoningEffort !== undefined
  if (turn === undefined) return { text: 'Hello! I am the offline demo model. Ask me about the files in this workspace.' }
  const offered = new Set((request.tools ?? []).map((tool) => tool.name))
  const called = new Set(turn.rounds.map((round) => round.name))
  const call = (toolCall: ScriptToolCall, reasoning: string): ScriptReply =>
    think ? { reasoning, toolCalls: [toolCall] } : { toolCalls: [toolCall] }

  const searchTool = searchTools.find((name) => offered.has(name))
  if (!workspaceWords.test(turn.prompt) || !(offered.has('list_dir') || searchTool !== undefined)) {
    const reply = `I am the offline demo model (no network, no API key). You said: "${quote(turn.prompt, 80)}". Ask me about the files in this workspace and I will look with the tools.`
    return think ? { reasoning: 'The prompt does not need any tool.', text: reply } : { text: reply }
  }
  const search = searchTool !== undefined ? searchPattern.exec(turn.prompt)?.[1] : undefined
  if (search !== undefined && !called.has(searchTool!)) {
    return call({ name: searchTool!, arguments: { pattern: search } }, `The user wants to find "${search}"; searching is the direct way.`)
  }
  if (search === undefined && offered.has('list_dir') && !called.has('list_dir')) {
    return call({ name: 'list_dir', arguments: { path: '.' } }, 'The user asks about the workspace; listing it is the cheapest first step.')
  }
  const listing = turn.rounds.find((round) => round.name === 'list_dir' && round.result && !round.result.isError)
  if (listing && offered.has('read_file') && !called.has('read_file')) {
    const file = pickFile(parseListing(listing.result!.text), turn.prompt)
    if (file !== undefined) return call({ name: 'read_file', arguments: { path: file } }, `${file} should say what this workspace is.`)
  }
  return think ? { reasoning: 'I have what I need.', text: summary(turn.rounds) } : { text: summary(turn.rounds) }
}
