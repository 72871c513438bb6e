/**
 * The adapter's redaction is dsh-llm's shared implementation (the same credential shapes, URL
 * userinfo removal and cross-delta handling of model output as every other adapter); this module
 * only names it for the adapter's files.
 */
export { ContentRedactor, Secrets, redactUserinfo } from '@deepseek-ai/dsh-llm'
export type { ContentChunk } from '@deepseek-ai/dsh-llm'
