import { open } from 'node:fs/promises'
import { join } from 'node:path'
import type { ContentBlock } from '@deepseek-ai/dsh-llm'
import { clip, textOf } from './text'

/** How much of a session file is read for its title: the first prompt is within the first few events. */
const TITLE_WINDOW_BYTES = 64 * 1024

/**
 * The title of a saved session for `/sessions`: its first prompt (what the
 * person typed, from the first `user/message`, else the first queued
 * `inbox/enqueue`), on one line, at most `max` characters. Reads only the
 * head of the JSONL file (`<directory>/<id>.jsonl`, one event per line) and
 * never takes the session's lock, so it works on sessions other processes
 * are writing. `undefined` when the file cannot be read or holds no prompt
 * in its head.
 */
export async function sessionTitle(directory: string, id: string, max = 60): Promise<string | undefined> {
  let head: string
  try {
    const file = await open(join(directory, `${id}.jsonl`), 'r')
    try {
      const buffer = Buffer.alloc(TITLE_WINDOW_BYTES)
      const { bytesRead } = await file.read(buffer, 0, buffer.length, 0)
      head = buffer.subarray(0, bytesRead).toString('utf8')
    } finally {
      await file.close()
    }
  } catch {
    return undefined
  }
  let queued: string | undefined
  // The last line may be cut by the window: only complete lines are read.
  for (const line of head.split('\n').slice(0, -1)) {
    const event = parse(line)
    if (event?.type === 'user/message') {
      const data = event.data as { message?: { content?: ContentBlock[] }; envelope?: { display?: ContentBlock[] } }
      const text = textOf(data.envelope?.display ?? data.message?.content ?? [])
      if (text.trim()) return clip(text, max)
    } else if (event?.type === 'inbox/enqueue' && queued === undefined) {
      const message = (event.data as { message?: { content?: ContentBlock[]; target?: string } }).message
      if (message?.target === 'next-turn') queued = textOf(message.content ?? [])
    }
  }
  return queued?.trim() ? clip(queued, max) : undefined
}

function parse(line: string): { type?: unknown; data?: unknown } | undefined {
  try {
    const value: unknown = JSON.parse(line)
    return value !== null && typeof value === 'object' ? (value as { type?: unknown; data?: unknown }) : undefined
  } catch {
    return undefined
  }
}
