import type { StreamChunk } from '@deepseek-ai/dsh-llm'

/** Drains a stream into an array. */
export async function collect(stream: AsyncIterable<StreamChunk>): Promise<StreamChunk[]> {
  const chunks: StreamChunk[] = []
  for await (const chunk of stream) chunks.push(chunk)
  return chunks
}

/**
 * The expected final chunk of a failed call. `failure` is loose so a test can
 * put asymmetric matchers (`expect.stringMatching`) in it.
 */
export function errorFinish(failure: Record<string, unknown>): Record<string, unknown> {
  return { type: 'finish', reason: { kind: 'error', failure } }
}
