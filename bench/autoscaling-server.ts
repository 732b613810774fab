/**
 * The autoscaling bench's server: `tsx bench/autoscaling-server.ts [--fixed N]`.
 * Serves the autoscaled adder example (`examples/autoscaling`), or with
 * `--fixed N` the same deployment at a fixed N replicas. Prints `READY <url>`.
 */
import { Hono } from 'hono'
import { ingress } from '../src/index.js'
import { serve } from '../src/runtime/node/index.js'
import { scaledAdder } from '../examples/autoscaling/scaled-adder.js'
import { argValue } from './lib.js'

const fixed = argValue('--fixed')
const served = fixed === undefined ? scaledAdder : scaledAdder.withOptions({ numReplicas: Number(fixed) })
// The adder logs each batch's shape; a bench has no reader for it.
console.log = () => undefined
const server = await serve(new Hono().get('/adder', ingress(served)), { port: 0, name: 'autoscaling-bench', dashboard: false })
process.stdout.write(`READY ${server.url}\n`)
