import type { Message } from './message'

/**
 * Whether `message` was produced by the `provider`/`model` route, so that its
 * opaque provider state (reasoning `signature`s) may be replayed to it. A
 * message from another route, or not from a model, must be sent without that
 * state: signatures are only meaningful to the model that issued them.
 */
export function isFromRoute(message: Message, provider: string, model: string): boolean {
  const source = message.source
  return source.kind === 'model' && source.provider === provider && source.model === model
}
