#!/usr/bin/env node
// The edgeserve CLI: `edgeserve run <file>[:export]` (src/runtime/node/cli.ts).
//
// Installed from npm, it runs the compiled CLI in dist/, which loads a
// JavaScript app as it is and a TypeScript one through tsx when the project
// has it.
//
// In the edgeserve repository (a checkout, or a directory linked with
// `npm link`: the only places with a tsconfig.json beside this bin) it runs
// from source: tsx compiles src/ on load, and the "edgeserve-source" export
// condition sends every import of 'edgeserve' and '#...' in this process,
// the app's included, to src/ as well, so that one copy of the code runs.
// The dashboard page is generated first (it is not in git).
import { existsSync } from 'node:fs'
import module from 'node:module'

const fromSource = existsSync(new URL('../tsconfig.json', import.meta.url))

if (fromSource) {
  const tsx = await import('tsx/esm/api')
  tsx.register()
  // Registered last, so it runs first: every resolution in this thread gets the condition.
  const resolve = (specifier, context, next) => next(specifier, { ...context, conditions: [...context.conditions, 'edgeserve-source'] })
  // registerHooks() where Node has it (22.15 and later): Node 26 deprecates register().
  if (module.registerHooks) module.registerHooks({ resolve })
  else module.register(`data:text/javascript,export const resolve = ${encodeURIComponent(String(resolve))}`)
  // serve() serves the dashboard page (and the OCR example its upload page), which the repository generates rather than keeps in git.
  const { buildPages } = await import('../scripts/build-pages.ts')
  await buildPages()
}

const cli = fromSource ? '../src/runtime/node/cli.ts' : '../dist/src/runtime/node/cli.js'
const { runCli } = await import(cli)
await runCli(process.argv.slice(2), { typeScriptLoaded: fromSource })
