/**
 * `promise`, or the string 'no answer in 5 s' if it has not settled by then.
 * For a wait that a broken rule would make endless: the test then fails with
 * a value that names the hang, rather than at the test's timeout.
 */
export async function answeredWithin5s<T>(promise: PromiseLike<T>): Promise<T | 'no answer in 5 s'> {
  let guard: ReturnType<typeof setTimeout> | undefined
  const unanswered = new Promise<'no answer in 5 s'>((resolve) => (guard = setTimeout(resolve, 5000, 'no answer in 5 s')))
  try {
    return await Promise.race([promise, unanswered])
  } finally {
    clearTimeout(guard)
  }
}
