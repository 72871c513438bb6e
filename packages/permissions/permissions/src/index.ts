export type {} from './events'
import { Permissions } from './service'

export { Permissions }
export type { PermissionVerdict, WorkspaceSettingsStatus } from './service'
export { DEFAULT_RULES, PermissionsConfig, defaultUserDirectory } from './config'
export type { PermissionsOptions } from './config'
export { PERMISSION_MODES, isPermissionMode, morePermissive, stricterMode } from './modes'
export type { PermissionMode } from './modes'
export { PermissionRuleSchema, formatRule, matchRules } from './rules'
export type { CallFacts, LayeredRule, PermissionDecision, PermissionRule, RuleLayer, RuleMatch } from './rules'
export type { PermissionDecisionRecord } from './events'
export { PermissionsError } from './errors'
export type { PermissionsErrorCode, PermissionsErrorCodeMap } from './errors'
export { PROJECT_SETTINGS, SETTINGS_FILE, TRUST_FILE, TrustStore, readSettingsRules } from './settings-files'
export { MAX_COMMAND_CHARS, parseShellCommand } from './shell/command'
export type { ShellCommand, ShellPart, ShellWord, ShellWrite } from './shell/command'
export { READ_ONLY_COMMANDS, readOnlyProblem } from './shell/read-only'
export { describeScope, modeMessage } from './texts'
export type { ModeChangeCause } from './texts'

export default Permissions
