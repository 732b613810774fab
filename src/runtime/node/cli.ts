/**
 * `edgeserve run <file>[:export] [--port 8000] [--hostname 127.0.0.1] [--name APP] [--rpc-token T]`
 *
 * Ray's `serve run module:app --name APP`: load the file, take the named
 * export (default: the default export, else `app`), and serve it. The export
 * may be a Hono app or a single deployment, which is then served at every path.
 * A JavaScript file loads as it is; a TypeScript one through tsx when the
 * project has it (see typescript-loader.ts). bin/edgeserve.js calls runCli().
 */
import { existsSync } from 'node:fs'
import { Hono } from 'hono'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { isDeployment } from '../../deployment/deployment.js'
import { ingress } from '../../http/ingress.js'
import { DEFAULT_APP, findApp } from './registry.js'
import { serve, type ServableApp } from './serve.js'
import type { LogLevel } from '../../metrics/log.js'
import { isTypeScript, loadTypeScriptFor } from './typescript-loader.js'

const USAGE = `usage: edgeserve run <file>[:export] [--port 8000] [--hostname 127.0.0.1] [--name APP] [--rpc-token TOKEN] [--log-level LEVEL] [--threads]

  <file>[:export]  a module whose export is a Hono app or a deployment
                   (default export, else the export named "app")
  --port, -p       port to listen on (default: $PORT, else 8000)
  --hostname       address to listen on (default 127.0.0.1), as serve()'s
                   hostname option; --host is the same option
  --name           app name for getDeploymentHandle(name, { app }) (default "default")
  --rpc-token      enable remote handles (edgeserve/client) with this token
                   (default: $EDGESERVE_RPC_TOKEN, else off)
  --log-level      debug | info | warn | error | silent; debug logs one JSON
                   line per batch (default: $EDGESERVE_LOG_LEVEL, else info)
  --threads        run each replica on its own worker thread (CPU-bound models
                   then use numReplicas cores)`

/** Exit 2 with `message`, and the usage unless the command line was not the problem. */
function fail(message: string, { usage = true } = {}): never {
  console.error(usage ? `edgeserve: ${message}\n\n${USAGE}` : `edgeserve: ${message}`)
  process.exit(2)
}

/** `file.ts:export` into its parts; a Windows drive letter aside, the last ':' separates the export name. */
function splitTarget(target: string): { file: string; exportName: string | undefined } {
  const colon = target.lastIndexOf(':')
  return colon > 1 ? { file: target.slice(0, colon), exportName: target.slice(colon + 1) } : { file: target, exportName: undefined }
}

async function loadApp(target: string, typeScriptLoaded: boolean): Promise<ServableApp> {
  const { file, exportName } = splitTarget(target)
  if (isTypeScript(file) && !typeScriptLoaded) {
    await loadTypeScriptFor(file).catch((error: unknown) => fail((error as Error).message, { usage: false }))
  }
  let module: Record<string, unknown>
  try {
    module = (await import(pathToFileURL(resolve(file)).href)) as Record<string, unknown>
  } catch (error) {
    // Only when the file itself is missing: Node's message also names the file as the importer of a module
    // it cannot find, and that message, which names the missing import, is the one to show.
    if ((error as { code?: string }).code === 'ERR_MODULE_NOT_FOUND' && !existsSync(resolve(file))) fail(`cannot find ${file}`)
    throw error
  }
  const name = exportName ?? ('default' in module ? 'default' : 'app')
  const value = module[name]
  if (value === undefined) {
    fail(`${file} has no export named ${JSON.stringify(name)} (it exports: ${Object.keys(module).join(', ') || 'nothing'})`)
  }
  if (isDeployment(value)) return new Hono().all('*', ingress(value))
  if (typeof value === 'object' && value !== null && 'fetch' in value && 'routes' in value) return value as ServableApp
  fail(`export ${JSON.stringify(name)} of ${file} is neither a Hono app nor a deployment`)
}

/** What to tell the user when the server cannot listen where they asked; undefined for any other error. */
function whyCannotListen(error: unknown, hostname: string, port: number): string | undefined {
  const where = `cannot listen on ${hostname}:${port}`
  switch ((error as { code?: unknown }).code) {
    case 'EADDRINUSE':
      return `${where}: something else listens there; pass another --port (0 picks a free one), or stop what holds it`
    case 'EACCES':
      return `${where}: permission denied (ports below 1024 need privileges); pass a --port from 1024 up`
    case 'EADDRNOTAVAIL':
      return `${where}: this machine has no address ${hostname}; pass --hostname 127.0.0.1 (this machine only) or 0.0.0.0 (every interface)`
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `${where}: the host name ${JSON.stringify(hostname)} does not resolve; pass an address such as 127.0.0.1 or 0.0.0.0`
    default:
      return undefined
  }
}

export interface CliOptions {
  /** TypeScript already loads in this process (the repository's own bin runs through tsx). */
  typeScriptLoaded?: boolean
}

async function main(argv: string[], options: CliOptions): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      port: { type: 'string', short: 'p' },
      host: { type: 'string' },
      hostname: { type: 'string' },
      name: { type: 'string' },
      'rpc-token': { type: 'string' },
      'log-level': { type: 'string' },
      threads: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  if (values.help) {
    console.log(USAGE)
    return
  }
  const [command, target, ...rest] = positionals
  if (command !== 'run') fail(command ? `unknown command ${JSON.stringify(command)}` : 'missing command')
  if (!target || rest.length > 0) fail('run takes exactly one <file>[:export]')
  const portText = values.port ?? process.env.PORT ?? '8000'
  const port = Number(portText)
  if (!/^\d+$/.test(portText) || port > 65535) fail(`--port must be a number from 0 to 65535, received ${JSON.stringify(portText)}`)

  const logLevel = values['log-level']
  if (logLevel !== undefined && !['debug', 'info', 'warn', 'error', 'silent'].includes(logLevel)) {
    fail(`--log-level must be debug, info, warn, error or silent, received ${JSON.stringify(logLevel)}`)
  }

  if (values.host !== undefined && values.hostname !== undefined && values.host !== values.hostname) {
    fail(`--hostname and --host are the same option, given two addresses: ${JSON.stringify(values.host)} and ${JSON.stringify(values.hostname)}`)
  }

  const app = await loadApp(target, options.typeScriptLoaded === true)
  const name = values.name ?? DEFAULT_APP
  if (findApp(name)) {
    // Its module called serve() when imported: a second server of the same app would be refused.
    fail(
      `${splitTarget(target).file} serves its app itself when imported (it calls serve()): run it with node (or tsx), ` +
        'or give edgeserve run a module that exports the app without serving it',
      { usage: false },
    )
  }
  const hostname = values.host ?? values.hostname ?? '127.0.0.1'
  const server = await serve(app, {
    port,
    hostname,
    name,
    rpcToken: values['rpc-token'],
    logLevel: logLevel as LogLevel | undefined,
    // Each thread imports the same file to find its deployment's class.
    threads: values.threads ? { module: pathToFileURL(resolve(splitTarget(target).file)).href } : undefined,
  }).catch((error: unknown) => {
    const reason = whyCannotListen(error, hostname, port)
    if (reason === undefined) throw error
    return fail(reason, { usage: false })
  })
  const names = [...server.app.deployments.keys()].join(', ') || 'none'
  console.log(`edgeserve: app ${JSON.stringify(server.app.name)} (deployments: ${names}) listening on ${server.url}`)
}

/** The `edgeserve` command: `argv` without node and the script (`process.argv.slice(2)`). */
export async function runCli(argv: string[], options: CliOptions = {}): Promise<void> {
  await main(argv, options).catch((error: unknown) => {
    if (String((error as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS')) fail((error as Error).message)
    throw error
  })
}
