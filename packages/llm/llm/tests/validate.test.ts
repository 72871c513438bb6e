import { describe, expect, it } from 'vitest'
import { contentProblem, isContent } from '@deepseek-ai/dsh-llm'

describe('contentProblem', () => {
  it('accepts well-formed blocks of every known type, nested tool results and blocks of a plugin type', () => {
    const content = [
      { type: 'text', text: '' },
      { type: 'reasoning', text: 'r', signature: 's' },
      { type: 'redacted-reasoning', data: 'd' },
      { type: 'image', mediaType: 'image/png', data: 'AA==' },
      { type: 'tool-call', id: 'c1', name: 'n', arguments: '{}' },
      { type: 'tool-result', toolCallId: 'c1', content: [{ type: 'text', text: 'ok' }], isError: false },
      { type: 'plugin-note', anything: 1 },
    ]
    expect(contentProblem(content)).toBeUndefined()
    expect(isContent(content)).toBe(true)
  })

  it('names the first problem with its full path, under the path it is given', () => {
    const cases: Array<[unknown, string | undefined, string]> = [
      ['text', undefined, 'content must be an array of content blocks'],
      [[null], 'data.message.content', 'data.message.content[0] must be an object'],
      [[{ type: 'text', text: 'a' }, []], undefined, 'content[1] must be an object'],
      [[{ type: '' }], undefined, 'content[0].type must be a non-empty string'],
      [[{ type: 'text', text: 1 }], 'x', 'x[0].text must be a string'],
      [[{ type: 'reasoning', text: 't', signature: 2 }], undefined, 'content[0].signature must be a string'],
      [[{ type: 'redacted-reasoning' }], undefined, 'content[0].data must be a string'],
      [[{ type: 'image', mediaType: '', data: '' }], undefined, 'content[0].mediaType must be a non-empty string'],
      [[{ type: 'image', mediaType: 'image/png' }], undefined, 'content[0].data must be a base64 string'],
      [[{ type: 'tool-call', id: 'c', name: 'n', arguments: {} }], undefined, 'content[0].arguments must be a JSON string'],
      [[{ type: 'tool-result', toolCallId: '', content: [] }], undefined, 'content[0].toolCallId must be a non-empty string'],
      [[{ type: 'tool-result', toolCallId: 'c', isError: 'yes', content: [] }], undefined, 'content[0].isError must be a boolean'],
      [[{ type: 'tool-result', toolCallId: 'c', content: 'ok' }], 'm', 'm[0].content must be an array of content blocks'],
      [
        [{ type: 'text', text: 'a' }, { type: 'tool-result', toolCallId: 'c', content: [{ type: 'text', text: 'ok' }, { type: 'image', mediaType: 'image/png', data: 3 }] }],
        'data.message.content',
        'data.message.content[1].content[1].data must be a base64 string',
      ],
    ]
    expect(cases.map(([value, path]) => (path === undefined ? contentProblem(value) : contentProblem(value, path)))).toEqual(cases.map((entry) => entry[2]))
  })
})
