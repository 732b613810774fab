import type { Deployment } from '../../deployment/deployment.js'
import { HTTPError } from '../../errors.js'

/** The default app name, as in Ray Serve. */
export const DEFAULT_APP = 'default'

export interface HostedApp {
  name: string
  /** Deployments by name. */
  deployments: Map<string, Deployment>
  /** The env the app's fetch receives: a ReplicaSet under each deployment's binding, and `serve({ env })`. */
  env: Record<string, unknown>
}

const apps = new Map<string, HostedApp>()

export function registerApp(app: HostedApp): void {
  if (apps.has(app.name)) {
    throw new Error(`an app named ${JSON.stringify(app.name)} is already being served in this process; pass another name`)
  }
  apps.set(app.name, app)
}

export function unregisterApp(name: string): void {
  apps.delete(name)
}

export function findApp(name: string): HostedApp | undefined {
  return apps.get(name)
}

/** The deployment `name` of app `appName`, with the env its replicas live in. */
export function findDeployment(name: string, appName: string): { deployment: Deployment; env: Record<string, unknown> } {
  const app = apps.get(appName)
  if (!app) {
    const known = [...apps.keys()].map((n) => JSON.stringify(n)).join(', ') || 'none'
    throw new HTTPError(404, `no app named ${JSON.stringify(appName)} is served in this process (served: ${known})`)
  }
  const deployment = app.deployments.get(name)
  if (!deployment) {
    const known = [...app.deployments.keys()].map((n) => JSON.stringify(n)).join(', ') || 'none'
    throw new HTTPError(404, `app ${JSON.stringify(appName)} has no deployment ${JSON.stringify(name)} (it has: ${known})`)
  }
  return { deployment, env: app.env }
}
