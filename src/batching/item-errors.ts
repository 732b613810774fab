import { BatchHandlerError, type FailedItemsError } from '../errors.js'

/** What this module needs of a batched call (an Entry): whether it has settled, and a way to fail it. */
interface Call {
  readonly settled: boolean
  settle(outcome: { ok: false; error: unknown }): void
}

/** Entries already re-run once without items their handler reported failed: they get no third run. */
const rerun = new WeakSet<object>()

/**
 * The handler threw a `FailedItemsError`: the items it names fail with their
 * own errors, and the other callers still waiting are run once more by
 * `run`, without them. A handler that names items again on that re-run gets
 * no third one: the items it names fail with their errors, the rest as any
 * batch whose handler throws does (a 500 whose cause the log shows). Without
 * `run` (a stream that has already sent partials) the rest fail so too.
 */
export async function failItemsAndRerun<C extends Call>(
  error: FailedItemsError,
  entries: readonly C[],
  run: ((rest: C[]) => Promise<void>) | undefined,
): Promise<void> {
  if (!failNamedItems(error, entries)) return
  const rest = entries.filter((entry) => !entry.settled)
  if (rest.length === 0) return
  let refused: string | undefined
  if (error.errors.size === 0) refused = 'reported failed items but named none'
  else if (rest.some((entry) => rerun.has(entry))) refused = 'reported failed items again when re-run without those it reported first'
  else if (run === undefined) refused = 'reported failed items after it had streamed partials, so the others could not be run again'
  if (refused !== undefined) return failUnsettled(rest, new Error(`the batched handler ${refused}`, { cause: error }))
  for (const entry of rest) rerun.add(entry)
  await run!(rest)
}

/**
 * Fail the items a `FailedItemsError` names, each with its own error. An
 * index past the batch is the handler's broken contract: every caller fails
 * with a BatchHandlerError, and it returns false.
 */
export function failNamedItems(error: FailedItemsError, entries: readonly Call[]): boolean {
  for (const index of error.errors.keys()) {
    if (index >= entries.length) {
      const message =
        `the batched handler reported item ${index} failed, but its batch has ${entries.length} items; ` +
        'FailedItemsError takes indices into the items the handler received'
      failUnsettled(entries, new BatchHandlerError(message))
      return false
    }
  }
  for (const [index, itemError] of error.errors) entries[index]!.settle({ ok: false, error: itemError })
  return true
}

/** Settle with `error` every entry that has not settled yet. */
export function failUnsettled(entries: readonly Call[], error: unknown): void {
  for (const entry of entries) entry.settle({ ok: false, error })
}
