import { describe, expect, it } from 'vitest'
import { writeFailure } from '../src/errors'

// What a failed flush tells its owner about the events of that flush. A statement the server refused
// (an error with a SQLSTATE) stored nothing; a connection lost before the server answered may have
// come after the commit, so the message must not say the events are lost (a person would redo work
// the session already holds).
describe('the message of a failed session write', () => {
  it('says nothing after the last successful flush is stored when the server refused the statement', () => {
    const error = writeFailure(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }), 's')
    expect(error).toMatchObject({ code: 'DATABASE_FAILED', id: 's', sqlState: '57P01' })
    expect(error.message).toBe(
      'Writing session "s" failed: the server is shutting down or starting (SQLSTATE 57P01). Nothing after the last successful flush is stored; load the session again to continue it.',
    )
  })

  it('names a socket error as the connection lost, not as a SQLSTATE (EPIPE has five letters, as a SQLSTATE does)', () => {
    expect(writeFailure(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }), 's').message).toMatch(/^Writing session "s" failed: the connection to the server was lost \(EPIPE\)\. The server did not answer/)
    expect(writeFailure(Object.assign(new Error('odd'), { code: 'EWHATEVER' }), 's').message).toMatch(/^Writing session "s" failed: client error EWHATEVER\./)
  })

  it.each(['CONNECTION_CLOSED', 'CONNECTION_DESTROYED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', undefined])(
    'does not claim the events of the flush are lost when the connection went away mid-write (%s)',
    (code) => {
      const error = writeFailure(code === undefined ? new TypeError('boom') : Object.assign(new Error('socket'), { code }), 's')
      expect(error.code).toBe('DATABASE_FAILED')
      expect(error.message).toMatch(/^Writing session "s" failed: .+\. The server did not answer, so the events of that flush may or may not be stored \(a commit can land just before a connection drops\), and nothing after them is; load the session again to see what it holds and continue it\.$/)
      expect(error.message).not.toContain('Nothing after the last successful flush is stored')
    },
  )
})
