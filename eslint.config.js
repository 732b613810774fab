/**
 * ESLint for the whole repository: `npm run lint` (`eslint --max-warnings 0 .`).
 *
 * The rules are typescript-eslint's type-checked ones: they see the types,
 * so they find what a type check alone lets through, above all promises
 * nobody awaits, passes to a callback that ignores them, or awaits that wait
 * on nothing. Formatting is Prettier's (`npm run format`): none of the
 * configs below turns on a formatting rule, so the two never disagree and
 * eslint-config-prettier has nothing to switch off.
 *
 * `recommendedTypeChecked`, not `strictTypeChecked` or `stylisticTypeChecked`:
 * on this tree the two together added some 1,900 findings and none was a
 * bug. Most were non-null assertions (`xs[i]!`, which noUncheckedIndexedAccess
 * makes the honest way to say an index is in range), numbers in template
 * strings, and arrow functions that return a void call (`() => log(x)`); the
 * rest restyled code that Prettier already holds to one shape.
 *
 * Each file is checked against its nearest tsconfig.json (`projectService`):
 * the dashboard's browser code (src/http/dashboard/client) and the OCR
 * example's page (examples/ocr/page) against their own, which have the DOM
 * and no Node types, the rest against the root one.
 */
import js from '@eslint/js'
import { defineConfig, globalIgnores } from 'eslint/config'
import tseslint from 'typescript-eslint'

/** Node's globals that the plain JavaScript files use (they are checked by no tsconfig, so no-undef checks their names). */
const NODE_GLOBALS = Object.fromEntries(
  ['process', 'console', 'Buffer', 'URL', 'setTimeout', 'clearTimeout', 'setImmediate', 'queueMicrotask', 'TextEncoder', 'TextDecoder', 'structuredClone'].map(
    (name) => [name, 'readonly'],
  ),
)

export default defineConfig(
  // Built or generated, not written: the package build, the bundled pages, wrangler's state.
  globalIgnores(['dist/', 'generated/', 'examples/generated/', '.wrangler/', 'coverage/']),
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: {
          // The JavaScript files, which no tsconfig includes: the CLI's bin, the worker-thread entries
          // that load before any TypeScript loader, the test fixtures run as plain Node, and the configs.
          allowDefaultProject: [
            '*.js',
            '*.cjs',
            'bin/*.js',
            'src/onnx/instances/*.mjs',
            'src/runtime/node/threads/*.mjs',
            'test/reliability/fixtures/*.mjs',
            'test/unit/onnx/fixtures/*.mjs',
          ],
        },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // The four that issue #60 asks for by name, as errors; recommendedTypeChecked has the first three already.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      // A `default:` is the code saying that every other case is handled alike (a thread's message
      // dispatch returning false for messages that are not its own); the rule then finds the switch
      // that has none and misses a member of its union, which would fall through silently.
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // A batch handler is an async function by contract, as Ray Serve's are `async def`:
      // `batch(async (xs) => xs.map(f))` is the API's own idiom, and an async function that does not
      // await is how a method says it returns a promise and turns a throw into a rejection.
      '@typescript-eslint/require-await': 'off',
      // `_` names a value taken only to be left out (`{ a: _, ...rest }`), or a parameter kept for its place.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: { globals: NODE_GLOBALS },
    rules: {
      // Plain JavaScript declares no types: what it imports or receives is `any` by nature, not by a lapse.
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly', __dirname: 'readonly' } },
  },
  {
    files: ['test/**'],
    rules: {
      // Vitest's asymmetric matchers (expect.any(String), expect.stringContaining(...)) are typed `any`
      // so that they fit in any expected shape, and every value a test takes in is checked by an expect.
      '@typescript-eslint/no-unsafe-assignment': 'off',
    },
  },
)
