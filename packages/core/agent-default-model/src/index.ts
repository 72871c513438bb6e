import { AgentDefaultModel } from './service'

export default AgentDefaultModel
export { AgentDefaultModel }
export type { ModelSelection } from './selection'
