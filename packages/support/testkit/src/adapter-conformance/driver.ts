import type { LlmAdapter } from '@deepseek-ai/dsh-llm'
import type { AdapterBehaviour } from './behaviour'
import type { ConformanceCaseId } from './cases'

/**
 * How an adapter's package runs the conformance suite: `start` makes what one
 * test needs, `unsupported` names what the adapter cannot be made to do.
 */
export interface AdapterConformanceDriver {
  /**
   * Starts what one test needs (a local server speaking the provider's
   * format, a model) and returns the adapter side of it. Called before each
   * test; `stop()` after it.
   */
  start(): AdapterUnderTest | Promise<AdapterUnderTest>
  /**
   * The cases this adapter cannot be made to show, each with the reason. The
   * suite does not run them: it names each, with its reason, in a test of its
   * own, so that a gap is never silent. Leave out every case the adapter can
   * show.
   */
  unsupported?: Partial<Record<ConformanceCaseId, string>>
}

/** One test's adapter and the means to script its provider. */
export interface AdapterUnderTest {
  /** The provider name the suite registers the adapter under and calls. */
  readonly provider: string
  /** The model the suite calls. */
  readonly model: string
  /** Values that must never appear in anything the adapter yields or throws (API keys, credential headers). */
  readonly secrets?: readonly string[]
  /**
   * Arranges the adapter's next call to meet `behaviour` and returns the
   * adapter to call: usually the same one every time; a driver may return one
   * configured for the case (a short deadline for `TIMEOUT`). Called once
   * per call, right before it.
   */
  arrange(behaviour: AdapterBehaviour): ArrangedCall | Promise<ArrangedCall>
  /** Releases what `start` made (stops the server). */
  stop?(): void | Promise<void>
}

/** One arranged call. */
export interface ArrangedCall {
  readonly adapter: LlmAdapter
  /**
   * Settles once the provider side of the call is released: its connection
   * closed, its stream or worker stopped. The suite awaits it after every
   * call that reached the provider (a test that never gets there fails on the
   * suite's timeout: the adapter leaked the connection). Omit it when the
   * adapter holds nothing outside the process.
   */
  readonly released?: PromiseLike<unknown>
  /**
   * For a `hold` behaviour: breaks the held stream the way a network does
   * (cuts the connection, or makes the stream throw a `TRANSPORT` failure).
   */
  cut?(): void
}
