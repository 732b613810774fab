/** Client-side helpers of the autoscaling tests, on Node and under workerd. */

/** What `/-/routes` says of one deployment's count. */
export async function replicasNow(base: string, deployment: string): Promise<number> {
  const body = (await (await fetch(`${base}/-/routes`)).json()) as { deployments: { name: string; replicas: number | null }[] }
  const found = body.deployments.find((d) => d.name === deployment)
  if (!found || found.replicas === null) throw new Error(`/-/routes has no replica count for ${deployment}`)
  return found.replicas
}

/** One sample of a Prometheus counter or gauge for `deployment` in `/-/metrics`, or undefined. */
export async function deploymentMetric(base: string, name: string, deployment: string): Promise<number | undefined> {
  const text = await (await fetch(`${base}/-/metrics`)).text()
  const line = text.split('\n').find((l) => l.startsWith(`${name}{deployment="${deployment}"}`))
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1))
}

export interface LoadAnswer {
  id: number
  status: number
  body: string
}

/**
 * Closed-loop load: `connections` clients, each sending its next request
 * (with a fresh id) as soon as its last is answered, until `stop()` holds;
 * then every answer, one per request sent. No retries: an error is an answer
 * with status 0. `answers` fills as they arrive, for a test that watches the
 * load while it runs.
 */
export async function closedLoop(
  url: (id: number) => string,
  connections: number,
  stop: () => boolean,
  answers: LoadAnswer[] = [],
): Promise<{ sent: number; answers: LoadAnswer[] }> {
  let next = 0
  const client = async () => {
    while (!stop()) {
      const id = next++
      try {
        const response = await fetch(url(id))
        answers.push({ id, status: response.status, body: await response.text() })
      } catch (error) {
        answers.push({ id, status: 0, body: String(error) })
      }
    }
  }
  await Promise.all(Array.from({ length: connections }, client))
  return { sent: next, answers }
}
