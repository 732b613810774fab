/**
 * The batching tutorial's client: nine queries in parallel against a running adder.
 * Run: npx tsx examples/adder/query.ts [http://127.0.0.1:8000]
 */
const base = process.argv[2] ?? 'http://127.0.0.1:8000'

async function sendQuery(number: number): Promise<number> {
  const response = await fetch(`${base}/adder?number=${number}`)
  return Number.parseInt(await response.text(), 10)
}

const results = await Promise.all(Array.from({ length: 9 }, (_, i) => sendQuery(i)))
console.log('Result returned:', results)
export {}
