/**
 * The prompt queue of the worker example: one table in the backend's schema,
 * claimed with `SELECT … FOR UPDATE SKIP LOCKED` so that many workers take
 * different prompts without waiting for each other.
 *
 * A claim is a lease of its own (`claimed_until`, renewed by the worker while
 * it serves the prompt): a prompt still `running` after its claim expired
 * belongs to a worker that died, and another worker settles it.
 */
import postgres from 'postgres'

export type PromptState = 'queued' | 'running' | 'done' | 'interrupted' | 'failed'

export interface Job {
  id: number
  sessionId: string
  prompt: string
  /** Whether the worker that claimed it before died while serving it. */
  orphan: boolean
}

export interface PromptRow {
  id: number
  session_id: string
  prompt: string
  state: PromptState
  worker: string | null
  outcome: string | null
}

/** How long a claim lasts without renewal. */
export const CLAIM_TTL_MS = 4000

export class PromptQueue {
  readonly sql: postgres.Sql
  private readonly table: string

  constructor(url: string, readonly schema: string) {
    this.sql = postgres(url, { max: 2, onnotice: () => {} })
    this.table = `"${schema}".prompts`
  }

  /** Creates the schema and the table if they are missing (idempotent). */
  async migrate(): Promise<void> {
    await this.sql.begin(async (tx) => {
      await tx.unsafe(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`dsh-worker-queue:${this.schema}`])
      await tx.unsafe(`CREATE SCHEMA IF NOT EXISTS "${this.schema}"`)
      await tx.unsafe(`CREATE TABLE IF NOT EXISTS ${this.table} (
        id bigserial PRIMARY KEY,
        session_id text NOT NULL,
        prompt text NOT NULL,
        state text NOT NULL DEFAULT 'queued',
        worker text,
        claimed_until timestamptz,
        outcome text
      )`)
      await tx.unsafe(`CREATE INDEX IF NOT EXISTS prompts_state ON ${this.table} (state, id)`)
    })
  }

  async enqueue(sessionId: string, prompt: string): Promise<number> {
    const [row] = await this.sql.unsafe<{ id: string }[]>(`INSERT INTO ${this.table} (session_id, prompt) VALUES ($1, $2) RETURNING id`, [sessionId, prompt])
    return Number(row!.id)
  }

  /**
   * Claims the next job for `worker`: first a prompt whose worker died (its
   * claim expired while `running`), else the oldest queued prompt of a
   * session no other worker is serving. `null` when there is none.
   */
  async claim(worker: string): Promise<Job | null> {
    const rows = await this.sql.unsafe<{ id: string; session_id: string; prompt: string; orphan: boolean }[]>(
      `WITH next AS (
         SELECT id, state = 'running' AS orphan FROM ${this.table} p
         WHERE (state = 'running' AND claimed_until < clock_timestamp())
            OR (state = 'queued' AND NOT EXISTS (
                 SELECT 1 FROM ${this.table} r WHERE r.session_id = p.session_id AND r.state = 'running'))
         ORDER BY (state = 'running') DESC, id
         FOR UPDATE SKIP LOCKED
         LIMIT 1
       )
       UPDATE ${this.table} p SET state = 'running', worker = $1, claimed_until = clock_timestamp() + $2 * interval '1 millisecond'
       FROM next WHERE p.id = next.id
       RETURNING p.id, p.session_id, p.prompt, next.orphan`,
      [worker, CLAIM_TTL_MS],
    )
    const row = rows[0]
    return row ? { id: Number(row.id), sessionId: row.session_id, prompt: row.prompt, orphan: row.orphan } : null
  }

  /** Renews `worker`'s claim of job `id`. */
  async renew(id: number, worker: string): Promise<void> {
    await this.sql.unsafe(`UPDATE ${this.table} SET claimed_until = clock_timestamp() + $3 * interval '1 millisecond' WHERE id = $1 AND worker = $2 AND state = 'running'`, [
      id,
      worker,
      CLAIM_TTL_MS,
    ])
  }

  /** Settles job `id` (only while `worker` still holds it). */
  async finish(id: number, worker: string, state: Exclude<PromptState, 'running'>, outcome: string): Promise<void> {
    await this.sql.unsafe(`UPDATE ${this.table} SET state = $3, outcome = $4, claimed_until = NULL WHERE id = $1 AND worker = $2`, [id, worker, state, outcome])
  }

  /**
   * Gives job `id` back unserved (its session was still held by another
   * process): a queued prompt is queued again; an orphan stays an orphan,
   * claimable at once.
   */
  async putBack(job: Job, worker: string): Promise<void> {
    await this.sql.unsafe(
      `UPDATE ${this.table} SET state = CASE WHEN $3 THEN 'running' ELSE 'queued' END, claimed_until = clock_timestamp() WHERE id = $1 AND worker = $2`,
      [job.id, worker, job.orphan],
    )
  }

  async rows(): Promise<PromptRow[]> {
    return this.sql.unsafe<PromptRow[]>(`SELECT id::int AS id, session_id, prompt, state, worker, outcome FROM ${this.table} ORDER BY id`)
  }

  close(): Promise<void> {
    return this.sql.end({ timeout: 5 })
  }
}
