export type {} from './errors'
import { TaskTools, ToolSubagent } from './plugin'

export default ToolSubagent
export { ToolSubagent, TaskTools }
export { ToolSubagentConfig } from './config'
export { taskTool } from './task-tool'
export type { TaskToolHost } from './task-tool'
export { taskTools } from './task-tools'
export { answerText, startedText, taskLine, usageLine } from './task-text'
