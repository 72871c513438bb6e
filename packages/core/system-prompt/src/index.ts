export type {} from './events'
import { SystemPrompt } from './service'

export { SystemPrompt }
export { BUILTIN_ORDER, DEFAULT_IDENTITY, DEFAULT_PERSONA, renderEnvironment } from './defaults'
export { SystemPromptError } from './errors'
export type { SystemPromptErrorCode, SystemPromptErrorCodeMap } from './errors'
export type {
  AssembledContext,
  PromptSection,
  PromptVars,
  RenderedSection,
  SystemPromptChange,
  TextSection,
} from './types'

export default SystemPrompt
