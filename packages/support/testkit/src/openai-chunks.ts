// The OpenAI chat-completions stream format, for fake providers (`FakeProvider` handlers) that
// speak it: the adapter tests of dsh-llm-openai and every test that runs it over HTTP.

/** One `chat.completion.chunk` for choice 0, in the providers' documented shape. */
export function openAiChunk(
  delta: Record<string, unknown>,
  finishReason: string | null = null,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    created: 1_764_460_800,
    model: 'test-model',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    ...extra,
  }
}

/** The final usage-only chunk OpenAI sends with `stream_options.include_usage`. */
export function openAiUsageChunk(usage: Record<string, unknown>): Record<string, unknown> {
  return { id: 'chatcmpl-test', object: 'chat.completion.chunk', created: 1_764_460_800, model: 'test-model', choices: [], usage }
}
