/**
 * Loading a user's TypeScript app on Node. edgeserve itself is JavaScript
 * once installed, so a `.mjs` app needs nothing more; a `.ts` app needs a
 * loader: tsx when the project has it (an optional peer dependency), else
 * Node's own type stripping where it is on (by default from Node 22.18).
 */

const TYPESCRIPT_FILE = /\.(?:[cm]?ts|tsx)$/i

/** Whether a path or file URL names a TypeScript module. */
export function isTypeScript(fileOrUrl: string): boolean {
  return TYPESCRIPT_FILE.test(fileOrUrl.replace(/[?#].*$/, ''))
}

/** Whether this Node loads TypeScript by itself (type stripping). */
export function nodeStripsTypes(): boolean {
  return Boolean((process.features as { typescript?: unknown }).typescript)
}

/** What to tell a user whose TypeScript app cannot be loaded. */
export function tsxMissing(file: string): string {
  return (
    `${file} is TypeScript, and Node ${process.version} cannot load it by itself: ` +
    'install tsx in your project (npm install --save-dev tsx), which edgeserve then uses, or compile the app to JavaScript'
  )
}

/**
 * Make `file` importable: register tsx if the project has it; else rely on
 * Node's type stripping, or throw what to install.
 */
export async function loadTypeScriptFor(file: string): Promise<void> {
  let tsx: { register(): unknown }
  try {
    tsx = await import('tsx/esm/api')
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND') throw error
    if (nodeStripsTypes()) return
    throw new Error(tsxMissing(file), { cause: error })
  }
  tsx.register()
}
