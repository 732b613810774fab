/**
 * What tsc says about a piece of a consumer's code under compiler options the
 * repository's own tsconfig does not set (`exactOptionalPropertyTypes`,
 * `experimentalDecorators`): the code is checked as if it were a file in
 * test/unit, so its imports of src/ resolve as this repository's do.
 */
import ts from 'typescript'
import { join } from 'node:path'
import { ROOT } from './spawn-server.js'

/** Where the code is checked from: a file that does not exist, in test/unit (imports: '../../src/index.js'). */
const FILE = join(ROOT, 'test/unit/consumer-code.ts')

/** tsc's errors in `code` alone, as `line: message` with the message's chain joined by newlines. */
export function typeErrorsOf(code: string, options: ts.CompilerOptions): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })
  if (!config) throw new Error('cannot read tsconfig.json')
  const compilerOptions = { ...config.options, ...options, noEmit: true }
  const host = ts.createCompilerHost(compilerOptions)
  const [getSourceFile, fileExists, readFile] = [host.getSourceFile.bind(host), host.fileExists.bind(host), host.readFile.bind(host)]
  host.fileExists = (name) => name === FILE || fileExists(name)
  host.readFile = (name) => (name === FILE ? code : readFile(name))
  host.getSourceFile = (name, version, ...rest) => (name === FILE ? ts.createSourceFile(name, code, version, true) : getSourceFile(name, version, ...rest))
  const program = ts.createProgram([FILE], compilerOptions, host)
  // The file's errors, and those of the options (which belong to no file).
  return ts.getPreEmitDiagnostics(program, program.getSourceFile(FILE)).map((diagnostic) => {
    const where = diagnostic.file ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start!).line + 1 : 'options'
    return `${where}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`
  })
}
