/**
 * AsyncLocalStorage where the runtime has it: Node, and workerd with
 * `nodejs_compat`. Browsers get `async-context.browser.ts` instead, chosen by
 * the `#async-context` import condition in package.json; its `workerd` entry
 * comes before `browser` because wrangler bundles with both conditions.
 */
export { AsyncLocalStorage } from 'node:async_hooks'
