import { toLlmFailure, type LlmFailure } from '../failure'
import { ContentRedactor, type Secrets } from '../redact'
import type { StreamChunk } from '../stream'
import { BatchedChunks, batchesOf } from './batched-chunks'
import { causeOf, HttpExchange, type BodyReadResult, type HttpDeadlines } from './exchange'
import { isRedirect, redirectStep } from './redirects'
import { headerOf } from './retry-after'

/** The final chunk of a failed call. */
export const errorFinish = (failure: LlmFailure): StreamChunk => ({ type: 'finish', reason: { kind: 'error', failure } })

/** The final chunk of a call its caller aborted. */
export const abortedFinish = (): StreamChunk => ({ type: 'finish', reason: { kind: 'aborted' } })

/**
 * Encodes a request body as JSON. `build` may refuse unmappable content by
 * throwing an `LlmError`, whose failure is kept; anything else it throws, or a
 * value JSON cannot encode, is a `BAD_REQUEST` naming the provider. Nothing
 * is sent for a refused body. A lone surrogate (half of an emoji, left by
 * some tool that cut a string between the halves) is sent as U+FFFD: strict
 * parsers (Anthropic's) refuse the escape `JSON.stringify` writes for it, and
 * the message holding it stays in the history of every later request.
 */
export function jsonRequestBody(provider: string, build: () => unknown): { ok: true; body: string } | { ok: false; failure: LlmFailure } {
  try {
    return { ok: true, body: withoutLoneSurrogates(JSON.stringify(build())) }
  } catch (error) {
    const failure = toLlmFailure(error)
    if (failure.code !== 'UNKNOWN') return { ok: false, failure }
    return { ok: false, failure: { code: 'BAD_REQUEST', message: `the request for ${provider} cannot be encoded as JSON: ${failure.message}` } }
  }
}

// `JSON.stringify` writes a surrogate pair as its two characters and a lone surrogate as the escape
// `\udXXX` (lowercase), so every such escape in its output is a lone one, unless its backslash is
// itself escaped: an odd run of backslashes before `ud8`–`udf` starts one.
const SURROGATE_ESCAPE = /\\+ud[89a-f][0-9a-f]{2}/g

/** `json` (the output of `JSON.stringify`) with each lone-surrogate escape replaced by `\ufffd`. */
function withoutLoneSurrogates(json: string): string {
  // One scan for the common body with none (its cost: an indexOf over the body, once per call).
  if (json.indexOf('\\ud') === -1) return json
  return json.replace(SURROGATE_ESCAPE, (escape) => {
    const slashes = escape.length - 5
    return slashes % 2 === 1 ? `${escape.slice(0, slashes - 1)}\\ufffd` : escape
  })
}

/** One streaming POST of an adapter: the request, and what the adapter does with each kind of answer. */
export interface StreamingPost {
  /** The call's own signal. */
  signal: AbortSignal | undefined
  /** The provider name failure messages use. */
  provider: string
  deadlines: HttpDeadlines
  /** The call's credentials, for redacting transport failures. */
  secrets: Secrets
  url: string
  headers: Record<string, string>
  body: string
  /** The request id headers of the provider, first match wins. */
  requestIdHeaders: readonly string[]
  /**
   * The failure for an answer that is not an event stream: a non-2xx status,
   * or a 2xx with a JSON body (an error object, or a server that ignored
   * `stream: true`). `text` is its body, read with a size cap.
   */
  answerFailure(response: Response, text: string, requestId: string | undefined): LlmFailure
  /**
   * The chunks of an event-stream answer, ending with exactly one finish. A
   * `BatchedChunks` (e.g. over `readEventBody(…).batches`) is taken a batch at
   * a time; any other iterable one chunk at a time.
   */
  events(response: Response, exchange: HttpExchange, requestId: string | undefined): AsyncIterable<StreamChunk>
}

/**
 * Runs one streaming POST under an `HttpExchange` and yields raw (not yet
 * redacted) chunks ending with exactly one finish: a connect failure or
 * deadline as a `TRANSPORT`/`TIMEOUT` finish, the caller's abort as an
 * `aborted` finish, an error answer as `answerFailure`'s finish, otherwise
 * `events`. The exchange is closed however the consumer leaves, which closes
 * the connection of an abandoned stream. The chunks of one network read come
 * as one batch (see `BatchedChunks`).
 */
export function streamExchange(post: StreamingPost): BatchedChunks {
  const held: HeldExchange = { exchange: undefined }
  // `return()` while a request or read is pending closes the exchange: the pending fetch or read rejects at once, so
  // the generator reaches its `finally` (and the connection closes) without waiting for the network or the deadline.
  return new BatchedChunks(exchangeBatches(post, held), () => held.exchange?.close())
}

/** The exchange of a `streamExchange`, once its first pull made it (not before: an unread stream adds no listener to the signal). */
interface HeldExchange {
  exchange: HttpExchange | undefined
}

async function* exchangeBatches(post: StreamingPost, held: HeldExchange): AsyncGenerator<readonly StreamChunk[], void, undefined> {
  const { secrets } = post
  const exchange = new HttpExchange(post.signal, post.provider, post.deadlines)
  held.exchange = exchange
  try {
    let response: Response
    for (let url = post.url, hops = 0; ; hops++) {
      try {
        response = await exchange.request(url, { method: 'POST', headers: post.headers, body: post.body })
      } catch (error) {
        yield [exchange.finish(error, 'connect', secrets)]
        return
      }
      if (!isRedirect(response.status)) break
      // `post.url` was just fetched (hop 0), so it parses.
      const step = redirectStep(exchange.provider, new URL(post.url).origin, url, response.status, response.headers.get('location'), hops, secrets)
      // The redirect's own body is not wanted; cancelling it frees the connection.
      await response.body?.cancel().catch(() => {})
      if (!step.ok) {
        yield [errorFinish(step.failure)]
        return
      }
      url = step.url
    }
    const requestId = headerOf(response.headers, post.requestIdHeaders)
    const labelledJson = /json/i.test(response.headers.get('content-type') ?? '')
    if (response.ok && labelledJson) {
      // Some servers (old llama-cpp-python builds, gateways) label an event stream as JSON: its first bytes tell.
      let peeked: PeekedBody
      try {
        peeked = await peekBody(response, exchange)
      } catch (error) {
        yield [exchange.finish(error, 'body', secrets, requestId)]
        return
      }
      response = peeked.response
      if (peeked.eventStream) {
        yield* batchesOf(post.events(response, exchange, requestId))
        return
      }
    }
    if (!response.ok || labelledJson) {
      let text: string
      try {
        text = await exchange.text(response)
      } catch (error) {
        // A non-2xx status already says what the answer is: a body that breaks off or stalls loses only the provider's
        // words (a 401 stays AUTH, a 429 keeps its wait). A 2xx labelled JSON is its body; the caller's abort is theirs.
        if (response.ok || exchange.abortedByCaller) {
          yield [exchange.finish(error, 'body', secrets, requestId)]
          return
        }
        text = ''
      }
      yield [errorFinish(post.answerFailure(response, text, requestId))]
      return
    }
    yield* batchesOf(post.events(response, exchange, requestId))
  } finally {
    exchange.close()
  }
}

/** A body whose first bytes were read to tell what it is, and the response that still yields all of it. */
interface PeekedBody {
  response: Response
  /** Whether it starts as an event stream (an SSE field or comment after any blank lines), not as JSON. */
  eventStream: boolean
}

/** An SSE field (`data:`, `event:`, `id:`, `retry:`) or comment (`:`) at the start of a body, after blank lines. */
const EVENT_STREAM_START = /^[\r\n]*(?:data|event|id|retry)?:/

/** Blank lines and then the start of an SSE field's name without its colon yet: a read that ended too early to tell. */
const FIELD_NAME_START = /^[\r\n]*(?:d(?:a(?:ta?)?)?|e(?:v(?:e(?:nt?)?)?)?|id?|r(?:e(?:t(?:ry?)?)?)?)$/

/**
 * Reads a 2xx body labelled JSON until its first bytes that are not white
 * space (under the idle deadline) and returns a response that yields the
 * whole body again, saying whether it is an event stream after all.
 */
async function peekBody(response: Response, exchange: HttpExchange): Promise<PeekedBody> {
  if (!response.body) return { response, eventStream: false }
  const reader = response.body.getReader()
  const decoder = new TextDecoder()
  const held: Uint8Array[] = []
  let head = ''
  let ended = false
  // Until the first bytes that are not white space, and past a field name cut by the end of a read (`da` + `ta: …`).
  while ((head.trim() === '' || FIELD_NAME_START.test(head)) && head.length < 4096) {
    const read = await exchange.read(reader)
    if (read.done) {
      ended = true
      break
    }
    held.push(read.value)
    head += decoder.decode(read.value, { stream: true })
  }
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = held.shift()
      if (next !== undefined) return controller.enqueue(next)
      if (ended) return controller.close()
      const read = await reader.read()
      if (read.done) controller.close()
      else controller.enqueue(read.value)
    },
    cancel: (reason) => reader.cancel(reason),
  })
  const whole = new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers })
  return { response: whole, eventStream: EVENT_STREAM_START.test(head) }
}

/** Where `readEventBody` puts the decoded body: an adapter's SSE parser and decoder. */
export interface EventBodySink {
  /**
   * Takes the next decoded text (possibly empty, possibly mid-line). A body
   * that ends with a CR gets an LF after it in the last text: the CR ends a
   * line, and an SSE parser would otherwise wait for a possible CRLF.
   */
  feed(text: string): void
  /** The body ended; called once, after the last `feed`. */
  end(): void
  /** True once the sink wants no more body (a terminal event, or a broken stream). */
  readonly stopped: boolean
}

/** `{ requestId }` when there is one, for spreading into a failure. */
export const withRequestId = (requestId: string | undefined): { requestId?: string } => (requestId ? { requestId } : {})

/**
 * Reads an event-stream answer's body under the exchange's idle deadline,
 * feeding the decoded text to `sink` and yielding, after each read, the chunks
 * the sink pushed to `out` (then emptying it): one batch per network read, so
 * that `next()` answers all but the first of them without a promise (an
 * adapter's `events` passes `.batches` on whole, see `BatchedChunks`). Stops
 * when the sink is stopped or the body ends. Returns `true` when the call
 * already ended: an answer without a body (`EMPTY_RESPONSE`) or a failed read
 * (the failure, or the caller's abort) has been yielded as the finish, and
 * the adapter must yield nothing more; `false` when the adapter still owes
 * the finish.
 */
export function readEventBody(
  response: Response,
  exchange: HttpExchange,
  sink: EventBodySink,
  out: StreamChunk[],
  secrets: Secrets,
  requestId: string | undefined,
): BatchedChunks<boolean> {
  return new BatchedChunks(eventBatches(response, exchange, sink, out, secrets, requestId))
}

async function* eventBatches(
  response: Response,
  exchange: HttpExchange,
  sink: EventBodySink,
  out: StreamChunk[],
  secrets: Secrets,
  requestId: string | undefined,
): AsyncGenerator<readonly StreamChunk[], boolean, undefined> {
  if (!response.body) {
    yield [errorFinish({ code: 'EMPTY_RESPONSE', message: `${exchange.provider} answered without a body`, ...withRequestId(requestId) })]
    return true
  }
  const reader = response.body.getReader()
  const text = new TextDecoder()
  let eof = false
  // Whether the text fed so far ends with a CR (one comparison per network read, none per chunk).
  let endsWithCR = false
  while (!sink.stopped && !eof) {
    let result: BodyReadResult
    try {
      result = await exchange.read(reader)
    } catch (error) {
      yield [exchange.finish(error, 'body', secrets, requestId)]
      return true
    }
    if (result.done) {
      eof = true
      const rest = text.decode()
      if (rest.length !== 0) endsWithCR = rest.charCodeAt(rest.length - 1) === 13
      // A CR that ends the body ends a line, but an SSE parser holds it for the LF of a CRLF that will never come (a
      // server ending its lines with bare CRs lost its last event): the LF makes it the same line end.
      sink.feed(endsWithCR ? `${rest}\n` : rest)
      sink.end()
    } else {
      const piece = text.decode(result.value, { stream: true })
      if (piece.length !== 0) endsWithCR = piece.charCodeAt(piece.length - 1) === 13
      sink.feed(piece)
    }
    // A copy: the consumer keeps the batch while the sink fills `out` again.
    if (out.length > 0) yield out.splice(0, out.length)
  }
  return false
}

/** How much of a malformed payload a failure message quotes. */
export const SNIPPET_CHARS = 200

/**
 * Parses one event's `data` as JSON. Data that is not JSON is a
 * `MALFORMED_STREAM` failure quoting its start, redacted.
 */
export function eventPayload(
  data: string,
  provider: string,
  secrets: Secrets,
  requestId: string | undefined,
): { ok: true; payload: unknown } | { ok: false; failure: LlmFailure } {
  try {
    return { ok: true, payload: JSON.parse(data) }
  } catch {
    const message = `${provider} sent stream data that is not JSON: ${JSON.stringify(secrets.excerpt(data, SNIPPET_CHARS))}`
    return { ok: false, failure: { code: 'MALFORMED_STREAM', message, ...withRequestId(requestId) } }
  }
}

/**
 * An error a server reported inside a stream (an SSE `error` event, an
 * `error:` field), as an error object for the adapter's classifier: the data's
 * JSON when that is an object, otherwise `{ error: { message: data } }` (plain
 * text is the provider's words themselves, not a malformed stream).
 */
export function streamErrorPayload(data: string): unknown {
  try {
    const parsed: unknown = JSON.parse(data)
    if (parsed !== null && typeof parsed === 'object') return parsed
  } catch {
    // Not JSON: the text is the message.
  }
  return { error: { message: data } }
}

/**
 * The call as the consumer sees it: an `aborted` finish alone when `signal`
 * was aborted before the call (`raw` is then never started), otherwise
 * `raw`'s chunks with model output redacted across delta boundaries (`ContentRedactor`), failures redacted
 * (`Secrets.failure`), held-back output released before the usage and the
 * finish, opaque `redacted-reasoning-delta` state passed byte for byte, and
 * anything `raw` throws turned into a redacted `UNKNOWN` finish (or an
 * `aborted` one when the caller aborted): never a throw whose message could
 * carry a secret. A `BatchedChunks` `raw` is redacted a batch at a time and
 * its batches stay whole.
 */
export function redactedStream(
  raw: AsyncIterable<StreamChunk>,
  secrets: Secrets,
  signal: AbortSignal | undefined,
  provider: string,
): BatchedChunks {
  return new BatchedChunks(redactedBatches({ secrets, open: () => raw }, signal, provider), interruptOf(raw))
}

/** A stream's `interrupt` (see `BatchedChunks`), to pass on from a stream that wraps it; `undefined` for other streams. */
export function interruptOf(stream: AsyncIterable<StreamChunk> | undefined): (() => void) | undefined {
  return stream instanceof BatchedChunks ? stream.interrupt : undefined
}

/**
 * A call as `redactedBatches` reads it: the credentials it is redacted with
 * and its raw stream, made on the first pull.
 */
export interface RedactedCall {
  /**
   * The credentials output and failures are redacted with. `open` may replace
   * them once it has found the call's key (before anything it does next can
   * throw with the key in a message): they are read after `open` returns or
   * throws.
   */
  secrets: Secrets
  /**
   * Makes the raw stream (unredacted chunks ending with one finish). Called
   * once, on the first pull, after the abort check and inside the redacting
   * `try`: a call aborted before does no work, and a throw while the call is
   * set up (its key lookup, an adapter's `request`) becomes a redacted
   * `UNKNOWN` finish like any other throw of the raw stream.
   */
  open(): AsyncIterable<StreamChunk>
}

/** `redactedStream`'s batches, over a call set up on the first pull (see `RedactedCall`). */
export async function* redactedBatches(
  call: RedactedCall,
  signal: AbortSignal | undefined,
  provider: string,
): AsyncGenerator<readonly StreamChunk[], void, undefined> {
  if (signal?.aborted) {
    yield [abortedFinish()]
    return
  }
  let content: ContentRedactor | undefined
  try {
    const raw = batchesOf(call.open())
    const secrets = call.secrets
    content = new ContentRedactor(secrets)
    for await (const batch of raw) {
      const out = redactBatch(batch, content, secrets)
      if (out.length > 0) yield out
    }
  } catch (error) {
    const out: StreamChunk[] = content === undefined ? [] : content.flush()
    out.push(
      signal?.aborted
        ? abortedFinish()
        : errorFinish(call.secrets.failure({ code: 'UNKNOWN', message: `the ${provider} adapter failed: ${causeOf(error)}` })),
    )
    yield out
  }
}

/** One batch redacted (see `redactedStream`), in a new array. */
function redactBatch(batch: readonly StreamChunk[], content: ContentRedactor, secrets: Secrets): StreamChunk[] {
  const out: StreamChunk[] = []
  for (let i = 0; i < batch.length; i++) {
    const chunk = batch[i]!
    if (chunk.type === 'usage' || chunk.type === 'finish') {
      const held = content.flush()
      for (let h = 0; h < held.length; h++) out.push(held[h]!)
      out.push(chunk.type === 'finish' && chunk.reason.kind === 'error' ? errorFinish(secrets.failure(chunk.reason.failure)) : chunk)
    } else if (chunk.type === 'redacted-reasoning-delta') out.push(chunk)
    else {
      const passed = content.pass(chunk)
      if (passed !== undefined) out.push(passed)
    }
  }
  return out
}
