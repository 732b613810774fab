/**
 * Fresh projects that install the packed tarball, as a user's would: their
 * own directory under the system's temp dir, their own node_modules, npm's
 * ordinary cache (`--prefer-offline`: a package already fetched is not
 * fetched again), and an environment without this repository's settings.
 */
import { execFile } from 'node:child_process'
import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { inject } from 'vitest'
import { ROOT } from '../../support/spawn-server.js'
import { startInGroup, type GroupChild } from '../../support/process-group.js'

const exec = promisify(execFile)

declare module 'vitest' {
  export interface ProvidedContext {
    /** The tarball `npm pack` made for this run. */
    tarball: string
    /** Where this run's projects live (removed after the run). */
    projectsDir: string
  }
}

/**
 * The environment a user's shell would give: none of the variables that turn
 * on this repository's "edgeserve-source" condition, and none of the
 * `npm_*` variables an enclosing `npm run` sets.
 */
export function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (key === 'NODE_OPTIONS' || key === 'WRANGLER_BUILD_CONDITIONS' || key.startsWith('npm_')) continue
    env[key] = value
  }
  return { ...env, NO_COLOR: '1', WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false', ...extra }
}

/** The exact version this repository pins for `name` (so that consumers check against the same tools). */
export function pinnedVersion(name: string): string {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }
  const version = manifest.devDependencies[name]
  if (!version) throw new Error(`package.json pins no version of ${name}`)
  return `${name}@${version}`
}

export interface Run {
  code: number
  stdout: string
  stderr: string
}

/** Run a command to its end in `cwd`, with the user's environment; never throws for a non-zero exit. */
export async function run(command: string, args: string[], cwd: string, timeoutMs = 120_000, env: Record<string, string> = {}): Promise<Run> {
  try {
    const { stdout, stderr } = await exec(command, args, { cwd, env: userEnv(env), timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 })
    return { code: 0, stdout, stderr }
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string; signal?: string }
    const code = typeof failed.code === 'number' ? failed.code : -1
    return { code, stdout: failed.stdout ?? '', stderr: `${failed.stderr ?? ''}${failed.signal ? `\n(killed by ${failed.signal})` : ''}` }
  }
}

/** `run`, and fail with its output if it did not exit 0. */
export async function mustRun(command: string, args: string[], cwd: string, timeoutMs?: number, env?: Record<string, string>): Promise<Run> {
  const result = await run(command, args, cwd, timeoutMs, env)
  if (result.code !== 0) {
    throw new Error(`${command} ${args.join(' ')} (in ${cwd}) exited ${result.code}:\n${result.stdout}\n${result.stderr}`)
  }
  return result
}

export interface Project {
  dir: string
  /** Write files (paths relative to the project). */
  write(files: Record<string, string | Buffer>): void
  /** Bytes of every file under node_modules, as on disk but without block rounding. */
  installedBytes(): number
}

/**
 * A new project named `name`: package.json (ESM), then
 * `npm install <tarball> ...packages`.
 */
export async function createProject(name: string, packages: string[], files: Record<string, string | Buffer> = {}): Promise<Project> {
  const dir = join(inject('projectsDir'), name)
  mkdirSync(dir, { recursive: true })
  const project = projectAt(dir)
  project.write({ 'package.json': `${JSON.stringify({ name, private: true, type: 'module' }, null, 2)}\n`, ...files })
  await mustRun('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', inject('tarball'), ...packages], dir, 240_000)
  return project
}

function treeBytes(path: string): number {
  const stat = statSync(path, { throwIfNoEntry: false })
  if (!stat) return 0
  if (!stat.isDirectory()) return stat.size
  return readdirSync(path).reduce((sum, entry) => sum + treeBytes(join(path, entry)), 0)
}

/** A server or `wrangler dev` started in `project`, ready once its output matches `ready`. */
export function startIn(project: Project, argv: string[], ready: RegExp, env: Record<string, string> = {}, timeoutMs = 60_000): Promise<GroupChild> {
  return startInGroup(argv, ready, env, timeoutMs, { cwd: project.dir, baseEnv: userEnv() })
}

/** The repository's pinned wrangler, run in a consumer project (it bundles from the project's own node_modules). */
export const WRANGLER = join(ROOT, 'node_modules/wrangler/bin/wrangler.js')

/**
 * The files of the README's Install section, by subsection: each code fence
 * whose info string names a file (```js app.mjs) is that file, word for word.
 */
export function readmeInstallFiles(subsection: string): Record<string, string> {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const install = /^## Install\n([\s\S]*?)^## /m.exec(readme)?.[1]
  if (!install) throw new Error('README.md has no "## Install" section')
  const section = install.split(/^### /m).find((part) => part.startsWith(`${subsection}\n`))
  if (!section) throw new Error(`README.md's Install section has no "### ${subsection}"`)
  const files: Record<string, string> = {}
  for (const [, path, text] of section.matchAll(/^```\w+ (\S+)\n([\s\S]*?)^```$/gm)) files[path!] = text!
  if (Object.keys(files).length === 0) throw new Error(`"### ${subsection}" in README.md names no files`)
  return files
}

/**
 * A subsection of the README's Install section as a reader follows it: the
 * shell commands before its first file (making the project in an empty
 * directory), its files, and the commands after them (checking and running
 * it). Commands are one a line, comments dropped, `&&` split into steps.
 */
export function readmeInstallSteps(subsection: string): { setup: string[][]; files: Record<string, string>; then: string[][] } {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const install = /^## Install\n([\s\S]*?)^## /m.exec(readme)?.[1]
  const section = install?.split(/^### /m).find((part) => part.startsWith(`${subsection}\n`))
  if (!section) throw new Error(`README.md's Install section has no "### ${subsection}"`)
  const steps = { setup: [] as string[][], files: {} as Record<string, string>, then: [] as string[][] }
  for (const [, lang, path, text] of section.matchAll(/^```(\w+)(?: (\S+))?\n([\s\S]*?)^```$/gm)) {
    if (path) steps.files[path] = text!
    else if (lang === 'sh') {
      const commands = text!
        .split('\n')
        .map((line) => line.replace(/\s+#.*$/, '').trim())
        .filter(Boolean)
        .flatMap((line) => line.split(/\s*&&\s*/))
        .map((command) => command.split(/\s+/))
      const into = Object.keys(steps.files).length === 0 ? steps.setup : steps.then
      into.push(...commands)
    }
  }
  return steps
}

/**
 * Run the README's setup commands in `dir`, an empty directory, as a reader
 * would, with two substitutions: `edgeserve` is the packed tarball, and a
 * package this repository pins is installed at its pinned version (so that
 * the projects check against the tools the repository is tested with;
 * EDGESERVE_PACKAGE_LATEST=1 installs what npm resolves instead).
 */
export async function runReadmeSetup(dir: string, setup: string[][]): Promise<string[]> {
  mkdirSync(dir, { recursive: true })
  const ran: string[] = []
  for (const [command, ...args] of setup) {
    if (command !== 'npm') throw new Error(`README setup step not understood: ${[command, ...args].join(' ')}`)
    if (args[0] === 'install') {
      const packages = args.slice(1).map((arg) => (arg === 'edgeserve' ? inject('tarball') : arg.startsWith('-') ? arg : pinnedOrLatest(arg)))
      args.splice(1, args.length - 1, ...packages, '--no-audit', '--no-fund', '--prefer-offline')
    }
    await mustRun('npm', args, dir, 240_000)
    ran.push(['npm', ...args].join(' '))
  }
  return ran
}

function pinnedOrLatest(name: string): string {
  if (process.env.EDGESERVE_PACKAGE_LATEST === '1') return name
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }
  return manifest.devDependencies[name] ? `${name}@${manifest.devDependencies[name]}` : name
}

/**
 * A subsection of the README's Install section followed as a reader follows
 * it, in a new directory `name`: its setup commands run (see
 * runReadmeSetup), its files written. Returns the project and the commands
 * that come after the files, each as one line.
 */
export async function readmeProject(subsection: string, name: string): Promise<{ project: Project; then: string[] }> {
  const steps = readmeInstallSteps(subsection)
  const dir = join(inject('projectsDir'), name)
  await runReadmeSetup(dir, steps.setup)
  const project = projectAt(dir)
  project.write(steps.files)
  return { project, then: steps.then.map((command) => command.join(' ')) }
}

/** The project in `dir`: made by `createProject`, or by `runReadmeSetup`. */
export function projectAt(dir: string): Project {
  return {
    dir,
    write(more) {
      for (const [path, content] of Object.entries(more)) {
        mkdirSync(dirname(join(dir, path)), { recursive: true })
        writeFileSync(join(dir, path), content)
      }
    },
    installedBytes: () => treeBytes(join(dir, 'node_modules')),
  }
}

/**
 * The file a guide gives whole, as a code fence that names it (```js make-model.mjs), word
 * for word: what a reader saves when the README links to it.
 */
export function docsFile(doc: string, name: string): string {
  const text = readFileSync(join(ROOT, doc), 'utf8')
  const found = [...text.matchAll(/^```\w+ (\S+)\n([\s\S]*?)^```$/gm)].find(([, path]) => path === name)
  if (!found) throw new Error(`${doc} has no code block named ${name}`)
  return found[2]!
}

/**
 * A README command that writes a file the project needs (`node make-model.mjs`), run in the
 * project as the reader runs it, from the shell: only `node <script>` is understood.
 */
export async function runReadmeScript(project: Project, command: string): Promise<void> {
  const [program, script, ...rest] = command.split(/\s+/)
  if (program !== 'node' || !script || rest.length > 0) throw new Error(`README command not understood: ${command}`)
  await mustRun('node', [script], project.dir, 60_000)
}

/** 9 concurrent GETs of `/adder?number=0..8`, as the client of Ray Serve's batching tutorial sends them. */
export async function nineQueries(base: string): Promise<string[]> {
  return Promise.all(Array.from({ length: 9 }, (_, i) => fetch(`${base}/adder?number=${i}`).then((r) => r.text())))
}

/**
 * Open `count` keep-alive connections to `base` (fetch's pool keeps them), so
 * that a burst sent next arrives together. A burst on new connections
 * arrives as each handshake completes, a poll of the event loop apart on a
 * busy machine, and a model that answers in a fraction of a millisecond,
 * with no batch wait, then runs every request of it alone: such a burst
 * once made 17 batches of 17 requests in CI.
 */
export async function openConnections(base: string, count: number): Promise<void> {
  await Promise.all(Array.from({ length: count }, async () => (await fetch(`${base}/-/routes`)).arrayBuffer()))
}

/** `edgeserve_batch_size` count and sum for one deployment, from `/-/metrics` (every replica). */
export async function batchSizes(base: string, deployment: string): Promise<{ batches: number; items: number }> {
  const text = await (await fetch(`${base}/-/metrics`)).text()
  let batches = 0
  let items = 0
  for (const [, kind, value] of text.matchAll(new RegExp(`^edgeserve_batch_size_(count|sum)\\{deployment="${deployment}"[^}]*\\} (\\S+)$`, 'gm'))) {
    if (kind === 'count') batches += Number(value)
    else items += Number(value)
  }
  return { batches, items }
}
