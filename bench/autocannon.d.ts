// autocannon 8 ships no types; the part the bench uses.
declare module 'autocannon' {
  namespace autocannon {
    interface Options {
      url: string
      connections?: number
      duration?: number
      /** Requests to send in all, in place of a duration. */
      amount?: number
      method?: string
      body?: string | Buffer
      headers?: Record<string, string>
    }
    interface Result {
      requests: { total: number; average: number }
      duration: number
      errors: number
      timeouts: number
      non2xx: number
    }
    interface Instance {
      on(event: 'response', listener: (client: unknown, statusCode: number, resBytes: number, responseTime: number) => void): void
    }
  }
  function autocannon(options: autocannon.Options, callback: (error: Error | null, result: autocannon.Result) => void): autocannon.Instance
  export default autocannon
}
