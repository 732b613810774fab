#!/usr/bin/env node
// The edgeserve CLI. Apps are TypeScript, so TypeScript is compiled on load.
import { register } from 'tsx/esm/api'

register()
await import('../src/runtime/node/cli.ts')
