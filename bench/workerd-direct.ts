/**
 * The bench's Worker in workerd itself, with nothing in front of it:
 * wrangler builds the bundle once (`wrangler deploy --dry-run`, as a deploy
 * would), and workerd serves it from a config written here, its socket bound
 * straight to the Worker. The URL is printed as `READY <url>`.
 *
 *   WRANGLER_BUILD_CONDITIONS=edgeserve-source,workerd,worker,browser tsx bench/workerd-direct.ts [wrangler.toml]
 *
 * With `WORKERD_INSPECTOR=127.0.0.1:9229`, workerd also opens its inspector
 * there: Chrome DevTools, or any client of the DevTools protocol, records the
 * isolate's CPU and allocation profiles under load (bench/README.md).
 *
 * Another Worker's wrangler.toml may be given: the workerd tests serve
 * theirs so when they need what only workerd's own socket does (it notices
 * a client that resets its connection; wrangler's proxy does not pass that on).
 *
 * Not Miniflare, which puts a Worker of its own in front of the user's (it
 * gives each request its `cf` object and logs it) and forwards every request
 * to it. On this machine (autocannon, c=64, sharing the two cores) the bench's
 * bare route served 3,000–3,300 requests a second through Miniflare and
 * 9,000–10,600 served by workerd this way. `wrangler dev` runs Miniflare and
 * a proxy of its own; its rows beside these show what both add.
 *
 * workerd takes its V8 flags from MINIFLARE_WORKERD_V8_FLAGS here, as
 * Miniflare does under `wrangler dev`, so both ways run with the flags the
 * bench sets (`--initial-old-space-size=8`: test/support/wrangler-dev.ts says why).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import type { Readable } from 'node:stream'
import { unstable_readConfig } from 'wrangler'
import { ROOT } from './lib.js'

/**
 * The part of wrangler's config read here. wrangler's own type for it comes from a package
 * that wrangler bundles and does not install (@cloudflare/workers-utils), so it reaches us as any.
 */
interface WorkerConfig {
  name: string | undefined
  compatibility_date: string | undefined
  compatibility_flags: string[]
  durable_objects: { bindings: { name: string; class_name: string }[] }
}

const CONFIG = resolve(process.argv[2] ?? join(ROOT, 'bench/wrangler.toml'))
const outdir = mkdtempSync(join(tmpdir(), 'edgeserve-direct-worker-'))
execFileSync(process.execPath, [join(ROOT, 'node_modules/wrangler/bin/wrangler.js'), 'deploy', '--dry-run', '--outdir', outdir, '-c', CONFIG], {
  cwd: ROOT,
  stdio: ['ignore', 'ignore', 'inherit'],
})

/** How workerd loads each file of the bundle as a deploy uploads it: the entry, and the files it imports by name. */
const KINDS = { js: 'esModule', wasm: 'wasm', onnx: 'data' } as const
// The entry first: workerd takes a Worker's first module as its main one.
const files = readdirSync(outdir)
  .filter((file) => /\.(js|wasm|onnx)$/.test(file))
  .sort((a, b) => Number(b === 'worker.js') - Number(a === 'worker.js'))
// Bindings, Durable Object classes and compatibility settings from the same config wrangler dev reads.
const config = unstable_readConfig({ config: CONFIG }) as WorkerConfig
const name = config.name ?? 'worker'
const bindings = config.durable_objects.bindings
const v8Flags = (process.env.MINIFLARE_WORKERD_V8_FLAGS ?? '').split(' ').filter(Boolean)

/** The two ways workerd runs here: the Worker and its objects in one process, or each in its own (objects-apart.ts). */
const apart = process.env.WORKERD_OBJECTS_APART === '1'
const debugPort = apart ? await freeAddress() : undefined

// workerd's config in Cap'n Proto text. Strings are written as JSON strings, which that format reads
// alike. Durable Objects are kept in memory: each run starts from fresh objects.
const text = (value: string) => JSON.stringify(value)
const list = (items: string[]) => `[\n    ${items.join(',\n    ')}\n  ]`
/**
 * A config of the Worker: with its socket, or none for the objects' process. With `objectsAt` (the
 * objects' debug port), the bindings by which objects-apart.ts reaches them there.
 */
function writeConfig(file: string, socket: boolean, objectsAt?: string): string {
  const namespaces = bindings.map((b) => `(name = ${text(b.name)}, durableObjectNamespace = ${text(b.class_name)})`)
  const classes = JSON.stringify(Object.fromEntries(bindings.map((b) => [b.name, b.class_name])))
  const apartBindings =
    objectsAt === undefined
      ? []
      : [
          `(name = "OBJECTS_AT", text = ${text(objectsAt)})`,
          `(name = "OBJECTS_SERVICE", text = ${text(name)})`,
          `(name = "OBJECT_CLASSES", text = ${text(classes)})`,
          '(name = "OBJECTS_DEBUG_PORT", workerdDebugPort = void)',
        ]
  const path = join(outdir, file)
  writeFileSync(
    path,
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = ${text(name)}, worker = .worker)],
  sockets = [${socket ? `(name = "http", address = "127.0.0.1:0", http = (), service = ${text(name)})` : ''}],
  v8Flags = ${list(v8Flags.map(text))},
);
const worker :Workerd.Worker = (
  modules = ${list(files.map((file) => `(name = ${text(file)}, ${KINDS[file.slice(file.lastIndexOf('.') + 1) as keyof typeof KINDS]} = embed ${text(file)})`))},
  compatibilityDate = ${text(config.compatibility_date!)},
  compatibilityFlags = ${list(config.compatibility_flags.map(text))},
  bindings = ${list([...namespaces, ...apartBindings])},
  durableObjectNamespaces = ${list(bindings.map((b) => `(className = ${text(b.class_name)}, uniqueKey = ${text(`${name}-${b.class_name}`)}, enableSql = true)`))},
  durableObjectStorage = (inMemory = void),
);
`,
  )
  return path
}

/** The workerd binary of the `workerd` package: the one wrangler dev runs (a CommonJS module without types). */
const workerdBinary = (createRequire(import.meta.url)('workerd') as { default: string }).default

const processes: ChildProcess[] = []
/** Start workerd on `configPath`; any exit but ours ends this script. */
function startWorkerd(configPath: string, args: string[]): ChildProcess {
  const workerd = spawn(workerdBinary, ['serve', '--control-fd=3', ...args, configPath], { stdio: ['ignore', 'inherit', 'inherit', 'pipe'] })
  workerd.once('exit', (code, signal) => {
    console.error(`workerd exited (${signal ?? code})`)
    for (const each of processes) each.kill()
    rmSync(outdir, { recursive: true, force: true })
    process.exit(1)
  })
  processes.push(workerd)
  return workerd
}

if (debugPort !== undefined) {
  startWorkerd(writeConfig('objects.capnp', false), ['--debug-port', debugPort])
}
const front = writeConfig(debugPort === undefined ? 'config.capnp' : 'front.capnp', true, debugPort)
// workerd tells on its control pipe (fd 3) which port the socket took.
const inspector = process.env.WORKERD_INSPECTOR ? ['--inspector-addr', process.env.WORKERD_INSPECTOR] : []
// workerd calls the debug-port binding experimental, and serves it only so.
const worker = startWorkerd(front, [...inspector, ...(debugPort === undefined ? [] : ['--experimental'])])
createInterface({ input: worker.stdio[3] as Readable }).on('line', (line) => {
  const message = JSON.parse(line) as { event?: string; socket?: string; port?: number }
  if (message.event === 'listen' && message.socket === 'http') console.log(`READY http://127.0.0.1:${message.port}`)
})

/** A loopback address no one listens on now, for the objects' debug port. */
async function freeAddress(): Promise<string> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return `127.0.0.1:${port}`
}

// Exit once workerd has: waited for, it leaves no process behind, not even an unreaped one.
const stop = () => {
  let left = processes.length
  for (const each of processes) {
    each.removeAllListeners('exit')
    each.once('exit', () => {
      if (--left > 0) return
      rmSync(outdir, { recursive: true, force: true })
      process.exit(0)
    })
    each.kill()
  }
}
process.once('SIGTERM', stop)
process.once('SIGINT', stop)
