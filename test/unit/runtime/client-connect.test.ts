import { describe, expect, it } from 'vitest'
import { connect } from '../../../src/client/index.js'

describe('connect()', () => {
  it("refuses what is not the server's http(s) URL, and a missing token, saying what to pass", () => {
    const expected = (url: string) => `connect() needs the server's http:// or https:// URL, like "http://127.0.0.1:8000", received ${JSON.stringify(url)}`
    // Parses as a URL whose scheme is "localhost:": fetch would fail on every call.
    expect(() => connect('localhost:8000', { token: 't' })).toThrow(expected('localhost:8000'))
    expect(() => connect('not a url', { token: 't' })).toThrow(expected('not a url'))
    expect(() => connect('ftp://example.com', { token: 't' })).toThrow(expected('ftp://example.com'))
    expect(() => connect('http://127.0.0.1:8000', { token: '' })).toThrow('connect() needs { token }: the RPC token the server was started with')
    expect(typeof connect('https://example.com', { token: 't' }).getDeploymentHandle).toBe('function')
  })
})
