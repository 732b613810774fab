/**
 * The package's public surface, recorded: every name each entry of
 * package.json's `exports` offers, with its kind and type as tsc sees them,
 * written to public-api.report.txt beside this file. A change to the surface
 * (a name added, removed or retyped, a member of an exported class or
 * interface changed) fails this test until the report is regenerated, so it
 * shows in review as a diff of that file:
 *
 *   UPDATE_API_REPORT=1 npx vitest run test/unit/public-api.test.ts
 *
 * The entries are read from source, through the "edgeserve-source"
 * condition, as the repository's own imports resolve them; `edgeserve/onnx`
 * has one entry per runtime condition, and the three must offer the same
 * names.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { ROOT } from '../support/spawn-server.js'

const REPORT = join(ROOT, 'test/unit/public-api.report.txt')
const SOURCE_CONDITION = 'edgeserve-source'

type Conditions = string | { [condition: string]: Conditions }

/** Each entry a user can import, as `specifier (condition)`, and the source file it resolves to. */
function entries(): Map<string, string> {
  const { exports } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, Conditions> }
  const found = new Map<string, string>()
  for (const [subpath, conditions] of Object.entries(exports)) {
    if (typeof conditions === 'string' || !(SOURCE_CONDITION in conditions)) continue // ./package.json
    const specifier = subpath === '.' ? 'edgeserve' : `edgeserve/${subpath.slice(2)}`
    const source = conditions[SOURCE_CONDITION]
    if (typeof source === 'string') found.set(specifier, source)
    else for (const [condition, file] of Object.entries(source)) if (typeof file === 'string') found.set(`${specifier} (${condition})`, file)
  }
  return found
}

/** Whole types, named as a user's code names them (no file paths: a file moved inside src/ is no change to the surface). */
const FORMAT = ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.WriteArrowStyleSignature

/** The surface of every entry, as text: one block per entry, one line per name and per member. */
function apiReport(): { text: string; names: Map<string, string[]> } {
  const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })
  if (!config) throw new Error('cannot read tsconfig.json')
  const files = entries()
  const program = ts.createProgram(
    [...files.values()].map((file) => join(ROOT, file)),
    { ...config.options, noEmit: true },
  )
  const checker = program.getTypeChecker()
  const typeText = (type: ts.Type) => checker.typeToString(type, undefined, FORMAT)
  const signatureText = (signature: ts.Signature) => checker.signatureToString(signature, undefined, FORMAT)

  /** Declared in this package, not in TypeScript's lib, @types/node or a dependency (Error's `stack`, ORT's Tensor). */
  const isOurs = (symbol: ts.Symbol | undefined): boolean =>
    symbol?.declarations?.some((declaration) => !declaration.getSourceFile().fileName.includes('/node_modules/')) === true

  /** A member's lines, or none for what users cannot reach (private and #private members) or did not get from us. */
  const memberLines = (member: ts.Symbol): string[] => {
    const declaration = member.valueDeclaration ?? member.declarations?.[0]
    if (!isOurs(member) || member.name.startsWith('__#') || member.name === 'prototype') return []
    if (declaration && ts.getCombinedModifierFlags(declaration) & ts.ModifierFlags.Private) return []
    // [Symbol.asyncIterator], not the compiler's numbered internal name for it.
    const name = checker.symbolToString(member)
    const optional = member.flags & ts.SymbolFlags.Optional ? '?' : ''
    const readonly = declaration && ts.getCombinedModifierFlags(declaration) & ts.ModifierFlags.Readonly ? 'readonly ' : ''
    const type = declaration ? checker.getTypeOfSymbolAtLocation(member, declaration) : checker.getTypeOfSymbol(member)
    if (member.flags & ts.SymbolFlags.Method) return type.getCallSignatures().map((signature) => `${name}${optional}${signatureText(signature)}`)
    return [`${readonly}${name}${optional}: ${typeText(type)}`]
  }

  /** The members of a type: its call, construct and index signatures, then its properties by name. */
  const membersOf = (type: ts.Type, constructors = true): string[] => [
    ...type.getCallSignatures().map((signature) => signatureText(signature)),
    ...(constructors ? type.getConstructSignatures().map((signature) => `new ${signatureText(signature)}`) : []),
    ...checker.getIndexInfosOfType(type).map((info) => `[key: ${typeText(info.keyType)}]: ${typeText(info.type)}`),
    ...checker
      .getPropertiesOfType(type)
      .sort((a, b) => a.name.localeCompare(b.name))
      .flatMap(memberLines),
  ]

  /** A class's, interface's or type's parameters as declared, constraints and defaults included. */
  const typeParameters = (symbol: ts.Symbol): string => {
    const declaration = symbol.declarations?.find(
      (each): each is ts.ClassDeclaration | ts.InterfaceDeclaration | ts.TypeAliasDeclaration =>
        ts.isClassDeclaration(each) || ts.isInterfaceDeclaration(each) || ts.isTypeAliasDeclaration(each),
    )
    const parameters = declaration?.typeParameters?.map((parameter) => parameter.getText().replace(/\s+/g, ' '))
    return parameters ? `<${parameters.join(', ')}>` : ''
  }

  /** One exported name: what it is (a value's kind and type, a type's definition), members indented below. */
  const describe = (name: string, exported: ts.Symbol): string[] => {
    const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported
    const lines: string[] = []
    const block = (head: string, members: string[]) => lines.push(head, ...members.map((member) => `    ${member}`))
    // `export type { Model }`, here or in a file it re-exports: users may name the class, not construct it.
    let typeOnly = false
    for (let alias: ts.Symbol | undefined = exported; alias && alias.flags & ts.SymbolFlags.Alias; alias = checker.getImmediateAliasedSymbol(alias)) {
      if (alias.declarations?.some((declaration) => ts.isTypeOnlyImportOrExportDeclaration(declaration))) typeOnly = true
    }
    if (symbol.flags & ts.SymbolFlags.Class) {
      const staticSide = checker.getTypeOfSymbol(symbol)
      const instance = checker.getDeclaredTypeOfSymbol(symbol) as ts.InterfaceType
      const bases = checker.getBaseTypes(instance).map(typeText)
      block(`${typeOnly ? 'type-only ' : ''}class ${name}${typeParameters(symbol)}${bases.length > 0 ? ` extends ${bases.join(', ')}` : ''}`, [
        ...(typeOnly ? [] : membersOf(staticSide).map((member) => (member.startsWith('new ') ? member : `static ${member}`))),
        ...membersOf(instance, false),
      ])
    } else if (symbol.flags & (ts.SymbolFlags.Function | ts.SymbolFlags.Variable)) {
      const type = checker.getTypeOfSymbol(symbol)
      const kind = symbol.flags & ts.SymbolFlags.Function ? 'function' : 'const'
      // A function (its overloads, and properties such as batch.stream) or an object of ours: member by member.
      // A primitive, or a type from elsewhere (ORT's Tensor class), on one line by its name.
      if (kind === 'function' || (type.flags & ts.TypeFlags.Object && isOurs(type.getSymbol()))) block(`${kind} ${name}`, membersOf(type))
      else lines.push(`${kind} ${name}: ${typeText(type)}`)
    }
    if (symbol.flags & ts.SymbolFlags.Interface) {
      const type = checker.getDeclaredTypeOfSymbol(symbol) as ts.InterfaceType
      const bases = checker.getBaseTypes(type).map(typeText)
      block(`interface ${name}${typeParameters(symbol)}${bases.length > 0 ? ` extends ${bases.join(', ')}` : ''}`, membersOf(type))
    } else if (symbol.flags & ts.SymbolFlags.TypeAlias) {
      const type = checker.getDeclaredTypeOfSymbol(symbol)
      lines.push(`type ${name}${typeParameters(symbol)} = ${checker.typeToString(type, undefined, FORMAT | ts.TypeFormatFlags.InTypeAlias)}`)
    }
    if (lines.length === 0) throw new Error(`${name}: an export of a kind this report does not describe yet (flags ${symbol.flags})`)
    return lines
  }

  const out: string[] = []
  const names = new Map<string, string[]>()
  for (const [entry, file] of files) {
    const source = program.getSourceFile(join(ROOT, file))
    const module = source && checker.getSymbolAtLocation(source)
    if (!module) throw new Error(`${entry}: ${file} is not a module tsc can read`)
    const exported = checker.getExportsOfModule(module).sort((a, b) => a.name.localeCompare(b.name))
    names.set(
      entry,
      exported.map((symbol) => symbol.name),
    )
    out.push(`# ${entry}: ${file}`, '')
    for (const symbol of exported) out.push(...describe(symbol.name, symbol))
    out.push('')
  }
  return { text: `${out.join('\n').trimEnd()}\n`, names }
}

describe('the public API', () => {
  const { text, names } = apiReport()

  it('is what public-api.report.txt records (UPDATE_API_REPORT=1 rewrites it)', () => {
    if (process.env.UPDATE_API_REPORT === '1') writeFileSync(REPORT, text)
    let recorded = ''
    try {
      recorded = readFileSync(REPORT, 'utf8')
    } catch {
      // No report yet: the comparison below fails and says how to write one.
    }
    expect(text, 'the public surface changed: review the diff, then run UPDATE_API_REPORT=1 npx vitest run test/unit/public-api.test.ts').toBe(recorded)
  })

  it('edgeserve/onnx offers the same names under each runtime condition', () => {
    const onnx = [...names].filter(([entry]) => entry.startsWith('edgeserve/onnx'))
    expect(onnx.map(([entry]) => entry)).toEqual(['edgeserve/onnx (workerd)', 'edgeserve/onnx (browser)', 'edgeserve/onnx (default)'])
    for (const [, each] of onnx) expect(each).toEqual(onnx[0]![1])
  })
})
