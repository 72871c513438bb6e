// The spine harness and whole-log assertions
export { spine, echo } from './spine'
export type { Spine, SpineOptions } from './spine'
export { bundleApp } from './bundle-app'
export type { BundleApp, BundleAppOptions } from './bundle-app'
export { trace } from './trace'
export { transcript } from './transcript'
export { readJsonlLog, traceStoredLog } from './stored-log'
export { refusingLog } from './refusing-log'
export type { AppendAttempt, RefusingLogRecord } from './refusing-log'

// Controllable tools and timing-free ordering
export { deferred } from './deferred'
export type { Deferred } from './deferred'
export { settle } from './settle'
export { alive, processesWith } from './processes'
export { gatedTool } from './gated-tool'
export type { GatedTool } from './gated-tool'

// Fake providers over real HTTP
export { FakeProvider, dump, echoHeaders, openStream, reply, send, sse } from './fake-provider'
export type { Handler, ReceivedRequest } from './fake-provider'
export { openAiChunk, openAiUsageChunk } from './openai-chunks'

// Conformance suites
export { describePersistenceContract } from './persistence-contract'
export type { PersistenceHarness } from './persistence-contract'
export { describeAdapterConformance } from './adapter-conformance/describe-adapter-conformance'
export type { AdapterConformanceDriver, AdapterUnderTest, ArrangedCall } from './adapter-conformance/driver'
export type { AdapterBehaviour, AnswerFinish, FailureClass, ProviderEvent } from './adapter-conformance/behaviour'
export { FAILURE_CLASSES } from './adapter-conformance/behaviour'
export { CONFORMANCE_CASES } from './adapter-conformance/cases'
export type { ConformanceCase, ConformanceCaseId } from './adapter-conformance/cases'
export { idealChunks } from './adapter-conformance/ideal-stream'
export { protocolProblems } from './adapter-conformance/protocol'
export type { PlayedStream, StreamEnding } from './adapter-conformance/protocol'
