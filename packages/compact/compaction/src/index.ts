export type {} from './types'
import { Compaction } from './service'

export default Compaction
export { Compaction }
export { CompactionConfig } from './config'
export { CompactionError } from './errors'
export type { CompactionErrorCode, CompactionErrorCodeMap } from './errors'
export { defaultEstimator, estimateTextTokens } from './estimator'
export { TokenMeter } from './meter'
export type { HistoryEntry } from './meter'
export { SUMMARY_SYSTEM_PROMPT } from './summarizer'
export { replacementText, stubText } from './replacement'
export type { ReplacementParts } from './replacement'
export type {
  CompactionKind,
  CompactionReason,
  CompactionRecord,
  CompactionResult,
  CompactionSkipCode,
  CompactionSkipped,
  CompactionStatus,
  CompactOptions,
  KeptUserMessages,
  PrunedResult,
  TokenEstimator,
} from './types'
