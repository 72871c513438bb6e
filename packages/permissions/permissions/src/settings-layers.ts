import { join, resolve } from 'node:path'
import type { LayeredRule, PermissionRule } from './rules'
import { PROJECT_SETTINGS, SETTINGS_FILE, TrustStore, readSettingsRules } from './settings-files'

/** The workspace settings file and whether it applies. */
export interface WorkspaceSettingsStatus {
  /** `<root>/.dsh/settings.json`. */
  readonly file: string
  /** Whether the file exists. */
  readonly exists: boolean
  /** Whether the person trusts the workspace (the file's rules apply only then). */
  readonly trusted: boolean
  /** How many rules the file holds (counted even when not trusted: nothing else of it is used then). */
  readonly rules: number
}

/**
 * The file layers (R-PRM-1): the user's `settings.json` in their dsh
 * directory, and the workspace's `.dsh/settings.json`, which applies only
 * once the person trusted the workspace (the trust store lives in the user's
 * directory; with none, trust is kept in memory for this process).
 */
export class SettingsLayers {
  user: readonly LayeredRule[] = []
  project: readonly LayeredRule[] = []
  status: WorkspaceSettingsStatus | undefined
  private readonly store: TrustStore | undefined
  private readonly trustedHere = new Set<string>()

  constructor(
    private readonly root: string | undefined,
    private readonly userDirectory: string | false,
  ) {
    this.store = userDirectory !== false ? new TrustStore(userDirectory) : undefined
  }

  /** Reads both files. Throws `INVALID_SETTINGS` for a malformed user file, or a malformed workspace file once trusted. */
  async load(): Promise<void> {
    if (this.userDirectory !== false) {
      const file = join(this.userDirectory, SETTINGS_FILE)
      this.user = layer('user', (await readSettingsRules(file)) ?? [], file)
    }
    await this.loadProject()
  }

  /** Records the trust in the workspace and applies its file. */
  async trust(): Promise<WorkspaceSettingsStatus | undefined> {
    if (this.root === undefined) return undefined
    if (this.store) await this.store.trust(this.root)
    else this.trustedHere.add(resolve(this.root))
    await this.loadProject()
    return this.status
  }

  private async loadProject(): Promise<void> {
    const root = this.root
    if (root === undefined) return
    const file = join(root, PROJECT_SETTINGS)
    // The user's own settings file is never read a second time as a workspace's (a workspace at ~).
    if (this.userDirectory !== false && resolve(file) === resolve(this.userDirectory, SETTINGS_FILE)) {
      this.status = { file, exists: false, trusted: false, rules: 0 }
      return
    }
    const trusted = this.store ? await this.store.isTrusted(root) : this.trustedHere.has(resolve(root))
    let rules: PermissionRule[] | undefined
    try {
      rules = await readSettingsRules(file)
    } catch (error) {
      // An untrusted file is never used: its being malformed matters only once trusted.
      if (trusted) throw error
      this.status = { file, exists: true, trusted, rules: 0 }
      return
    }
    this.status = { file, exists: rules !== undefined, trusted, rules: rules?.length ?? 0 }
    this.project = trusted ? layer('project', rules ?? [], file) : []
  }
}

/** Rules with their layer (and file). */
export function layer(name: LayeredRule['layer'], rules: readonly PermissionRule[], file?: string): LayeredRule[] {
  return rules.map((rule) => Object.freeze({ layer: name, rule, ...(file !== undefined ? { file } : {}) }))
}
