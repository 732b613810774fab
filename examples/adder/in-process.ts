/**
 * The seed scenario in one process: nine concurrent calls, batches of at most four.
 * Run: npx tsx examples/adder/in-process.ts
 */
import { BatchAdder } from './batch-adder.js'

const adder = new BatchAdder()
const results = await Promise.all(Array.from({ length: 9 }, (_, i) => adder.handleBatch(i)))
console.log('Result returned:', results)
