/**
 * The bench's Worker with its Durable Objects in another workerd process
 * (`WORKERD_OBJECTS_APART=1 tsx bench/workerd-direct.ts`), as deployed,
 * where an object runs on a thread of its own, most often on another
 * machine. workerd runs every object of its config on the one thread that
 * runs the Worker, so a route through an object there pays the object's
 * CPU on the Worker's thread.
 *
 * workerd binds a namespace only to objects of its own process: this
 * replaces each namespace in the Worker's env with one whose stubs reach the
 * same objects (the ids come from the same unique key) in the objects'
 * process, over workerd's debug port, by Cap'n Proto RPC, as wrangler dev
 * reaches an object that another `wrangler dev` runs. A stand-in for the
 * namespace only: the objects, their calls and the Worker are the real ones.
 */

/** The parts of a workerd debug-port client used here. */
interface DebugPort {
  connect(address: string): { getActor(service: string, className: string, actorId: string): unknown }
}

interface Namespace {
  idFromName(name: string): { toString(): string }
  get(id: unknown): unknown
}

/** What workerd-direct.ts binds in the Worker's process when its objects run apart. */
interface ApartEnv {
  /** The objects' process's debug port, `host:port`. */
  OBJECTS_AT: string
  /** Its service name: the Worker's name. */
  OBJECTS_SERVICE: string
  /** JSON: each namespace binding's class name, by binding name. */
  OBJECT_CLASSES: string
  OBJECTS_DEBUG_PORT: DebugPort
}

const apartEnvs = new WeakMap<object, Record<string, unknown>>()

/** `env` with each namespace reaching the objects' process, when workerd-direct.ts runs them apart; else `env` itself. */
export function objectsApart(env: Record<string, unknown>): Record<string, unknown> {
  if (typeof env.OBJECTS_AT !== 'string') return env
  // One env for the isolate's life: the edgeserve adapter keeps one replica set per namespace object.
  let apart = apartEnvs.get(env)
  if (!apart) apartEnvs.set(env, (apart = remoteNamespaces(env as Record<string, unknown> & ApartEnv)))
  return apart
}

function remoteNamespaces(env: Record<string, unknown> & ApartEnv): Record<string, unknown> {
  const classes = JSON.parse(env.OBJECT_CLASSES) as Record<string, string>
  const apart: Record<string, unknown> = { ...env }
  for (const [binding, className] of Object.entries(classes)) {
    const local = env[binding] as Namespace
    const remote: Namespace = {
      idFromName: (name) => local.idFromName(name),
      // A connection per stub: a stub is tied to the request that made it, as a namespace's own are.
      get: (id) => env.OBJECTS_DEBUG_PORT.connect(env.OBJECTS_AT).getActor(env.OBJECTS_SERVICE, className, String(id)),
    }
    apart[binding] = remote
  }
  return apart
}
