/**
 * A request whose body is slow to arrive holds back no other request, in a
 * deployment whose `batching` hands `fetch` whole requests (the house-price
 * example's way): shared by the Node tests (in process and on worker
 * threads) and the workerd one, against test/support/malformed-item-app.ts.
 * Its handler reads the bodies of its whole batch together, so a request
 * that joined a batch before its body was in would hold that batch, and
 * every request queued behind it, until its deadline.
 */
import { describe, expect, it } from 'vitest'
import type { MalformedItemAnswer } from './malformed-item-app.js'
import { RawConnection } from './raw-connection.js'
import { waitFor } from './wait-for.js'

const PATH = '/malformed/requests/predict'
const HOUSE = [8.3, 41, 6.9, 1.0, 322, 2.5, 37.88, -122.23]

export function describeSlowBody(runtime: string, baseUrl: () => string): void {
  describe(`a request whose body is slow to arrive on ${runtime} (deployment batching of requests)`, () => {
    it('holds back no other request: the rest are answered while it sends, and it is answered once its body is in', async () => {
      const arrived = async () => (await (await fetch(`${baseUrl()}/malformed/requests/arrived`)).json()) as number
      const body = JSON.stringify({ features: HOUSE })
      const before = await arrived()
      const slow = await RawConnection.open(baseUrl())
      try {
        // The head and half the body; the rest only once every other request is answered.
        const half = Math.floor(body.length / 2)
        await slow.send(
          `POST ${PATH} HTTP/1.1\r\nhost: edgeserve.test\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body.slice(0, half)}`,
        )
        await waitFor(async () => (await arrived()) === before + 1, 'the slow request to reach the deployment')

        const burst = await Promise.all(
          Array.from({ length: 8 }, () => fetch(baseUrl() + PATH, { method: 'POST', body, headers: { 'content-type': 'application/json' } })),
        )
        const answers = await Promise.all(burst.map(async (response) => [response.status, (await response.json()) as MalformedItemAnswer] as const))
        expect(answers.map(([status]) => status)).toEqual(new Array(8).fill(200))
        const price = answers[0]![1].prediction
        expect(price).toBeGreaterThan(0)

        await slow.write(body.slice(half))
        const answer = await slow.next()
        expect([answer.status, (JSON.parse(answer.body) as MalformedItemAnswer).prediction]).toEqual([200, price])
      } finally {
        slow.close()
      }
    })
  })
}
