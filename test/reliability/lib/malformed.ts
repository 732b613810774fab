/**
 * Malformed requests for every route of the demo app, from a seeded PRNG:
 * the same seed gives the same requests, so a failure replays.
 */
import type { RequestSpec } from './http.js'
import { brokenImage, type Fixture } from './images.js'
import type { Prng } from './prng.js'

export interface BadCase {
  route: string
  /** What is wrong with it, for the figures. */
  kind: string
  spec: RequestSpec
}

const QUERY_ROUTES = ['/adder', '/adder-origin', '/adder-origin/handle']
const enc = encodeURIComponent

/** A value for ?number= that is not an integer of at most 15 digits. */
function badNumber(prng: Prng): [kind: string, raw: string] {
  switch (prng.int(0, 13)) {
    case 0:
      return ['NaN', prng.pick(['NaN', 'nan', '-NaN'])]
    case 1:
      return ['Infinity', prng.pick(['Infinity', '-Infinity', '%E2%88%9E'])]
    case 2:
      return ['huge number', prng.pick(['1e400', '9'.repeat(prng.int(16, 400)), '-' + '9'.repeat(prng.int(16, 40)), '1e21', '123456789012345678'])]
    case 3:
      return ['not an integer', prng.pick(['1.5', '0x10', '1e3', '%2B1', '--1', '1-', '0b1', '1_000', '%D9%A1%D9%A2', '%EF%BC%91%EF%BC%92'])]
    case 4:
      return ['empty', '']
    case 5:
      return ['random text', enc(prng.text(prng.int(1, 60)))]
    case 6:
      return ['percent-encoding garbage', prng.pick(['%', '%Z', '%ZZ', '%E0%A4%A', '%FF%FE', '%C0%AF', '%00', '%%%', '%u0031', '%ED%A0%80'])]
    case 7:
      return ['invalid UTF-8 bytes', prng.pick(['%FF', '%C3%41', '%A0%A1', '%F0%41%8C%BC', '%F8%A1%A1%A1%A1'])]
    case 8:
      return ['very long value', 'x'.repeat(prng.int(1_000, 8_000))]
    case 9:
      return ['control characters', prng.pick(['%001', '1%00', '%1B%5B31m', '1%07', '%7F1', '1%08'])]
    case 10:
      return ['JSON in a query', enc(prng.pick(['{"number":1}', '[1]', 'null', 'true']))]
    case 11:
      return ['number with a suffix', `${prng.int(0, 99)}${prng.pick(['abc', '%20x', ';drop', '%26', 'n', '%23'])}`]
    case 12:
      return ['boolean', prng.pick(['true', 'false'])]
    default:
      return ['null-like', prng.pick(['null', 'undefined', '[]', '{}'])]
  }
}

function queryCase(prng: Prng): BadCase {
  const route = prng.pick(QUERY_ROUTES)
  const shape = prng.int(0, 9)
  if (shape === 0)
    return {
      route,
      kind: 'missing parameter',
      spec: { path: prng.pick([route, `${route}?`, `${route}?&&&`, `${route}?NUMBER=5`, `${route}?num=5`, `${route}?=5`, `${route}?number`]) },
    }
  if (shape === 1) {
    const [, raw] = badNumber(prng)
    return { route, kind: 'repeated parameter, bad first', spec: { path: `${route}?number=${raw}&number=${prng.int(0, 99)}&number=${prng.int(0, 99)}` } }
  }
  if (shape === 2) return { route, kind: 'array-style parameter', spec: { path: `${route}?number[]=${prng.int(0, 9)}&number[0]=1` } }
  if (shape === 3)
    return {
      route,
      kind: 'wrong method',
      spec: {
        method: prng.pick(['POST', 'PUT', 'DELETE', 'PATCH']),
        path: `${route}?number=1`,
        body: '{"number":1}',
        headers: { 'content-type': 'application/json' },
      },
    }
  const [kind, raw] = badNumber(prng)
  return { route, kind, spec: { path: `${route}?number=${raw}` } }
}

const FEATURES_OK = [8.3, 41, 6.9, 1.0, 322, 2.5, 37.88, -122.23]

/** A JSON body text for /predict that is not {"features": [8 plausible numbers]}. */
function badPredictBody(prng: Prng): [kind: string, body: string | Uint8Array, contentType: string | undefined] {
  const json = 'application/json'
  const withFeature = (value: string) => {
    const items = FEATURES_OK.map(String)
    items[prng.int(0, 7)] = value
    return `{"features": [${items.join(',')}]}`
  }
  switch (prng.int(0, 16)) {
    case 0: {
      const text = JSON.stringify({ features: FEATURES_OK })
      return ['invalid JSON (truncated)', text.slice(0, prng.int(0, text.length - 1)), json]
    }
    case 1:
      return [
        'invalid JSON',
        prng.pick(['{features: [1]}', "{'features': [1]}", '{"features": [1,2,],}', 'features=1', '{"features": [1 2]}', '\u0000', '{{}}', '[', ']']),
        json,
      ]
    case 2:
      return ['NaN or Infinity literal', withFeature(prng.pick(['NaN', 'Infinity', '-Infinity', 'nan', 'inf'])), json]
    case 3:
      return ['huge number', withFeature(prng.pick(['1e400', '-1e400', '1e308', '-1e308', '9'.repeat(prng.int(20, 400)), '1e21'])), json]
    case 4:
      return ['wrong type in features', withFeature(prng.pick(['"8.3"', 'null', 'true', '[]', '{}', '"NaN"', '[1]'])), json]
    case 5:
      return ['features not an array', `{"features": ${prng.pick(['"1,2,3"', '8', 'null', '{}', 'true', '{"0":1,"length":8}'])}}`, json]
    case 6: {
      const n = prng.pick([0, 1, 7, 9, 16, 1000])
      return ['wrong number of features', JSON.stringify({ features: Array.from({ length: n }, (_, i) => FEATURES_OK[i % 8]) }), json]
    }
    case 7:
      return ['body not an object', prng.pick(['[]', '8', '"features"', 'null', 'true', JSON.stringify([FEATURES_OK])]), json]
    case 8: {
      const depth = prng.int(100, 7_000)
      return [
        'deep nesting',
        prng.pick([
          `${'['.repeat(depth)}${']'.repeat(depth)}`,
          `{"features": ${'['.repeat(depth)}${']'.repeat(depth)}}`,
          `${'{"a":'.repeat(Math.floor(depth / 5))}1${'}'.repeat(Math.floor(depth / 5))}`,
        ]),
        json,
      ]
    }
    case 9:
      return ['out of range', withFeature(prng.pick(['-1', '1e6', '-1000', '1000000'])), json]
    case 10:
      return [
        'wrong content type',
        JSON.stringify({ features: FEATURES_OK }),
        prng.pick([
          'text/plain',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=x',
          'image/png',
          'application/json-seq',
          'application/jsonx',
          'text/json',
          'application/xml',
        ]),
      ]
    case 11: {
      const text = new TextEncoder().encode(`{"features": [8.3, 41, 6.9, 1.0, 322, 2.5, 37.88, -122.23], "note": "xx"}`)
      const bad = [0xff, 0xfe, 0xc0, 0x80, 0xed, 0xa0, 0x80, 0xf8][prng.int(0, 7)]!
      text[text.length - 3] = bad
      return ['invalid UTF-8', text, json]
    }
    case 12:
      return ['empty body', '', json]
    case 13:
      return ['random bytes', prng.bytes(prng.int(1, 2000)), json]
    case 14:
      return [
        'prototype keys',
        prng.pick([
          `{"__proto__": {"features": ${JSON.stringify(FEATURES_OK)}}}`,
          `{"constructor": {"prototype": {"features": 1}}}`,
          `{"features": {"__proto__": []}}`,
        ]),
        json,
      ]
    case 15:
      return ['over the 16 KiB limit', JSON.stringify({ features: FEATURES_OK, pad: 'x'.repeat(prng.int(17_000, 200_000)) }), json]
    default:
      return ['duplicate keys, bad last', `{"features": ${JSON.stringify(FEATURES_OK)}, "features": "x"}`, json]
  }
}

function predictCase(prng: Prng): BadCase {
  if (prng.int(0, 19) === 0) return { route: '/predict', kind: 'wrong method', spec: { method: prng.pick(['GET', 'PUT', 'DELETE']), path: '/predict' } }
  const [kind, body, type] = badPredictBody(prng)
  const headers: Record<string, string> = {}
  if (type) headers['content-type'] = type
  return { route: '/predict', kind, spec: { method: 'POST', path: '/predict', body, headers } }
}

function generateCase(prng: Prng): BadCase {
  const route = prng.pick(['/generate', '/generate/stream'])
  switch (prng.int(0, 6)) {
    case 0:
      return { route, kind: 'missing parameter', spec: { path: prng.pick([route, `${route}?`, `${route}?TEXT=a`, `${route}?maxTokens=4`]) } }
    case 1:
      return { route, kind: 'prompt over 2,000 characters', spec: { path: `${route}?text=${'a'.repeat(prng.int(2_001, 8_000))}&maxTokens=1` } }
    case 2: {
      const raw = prng.pick(['0', '257', '-1', 'abc', '1e3', '', '1.5', '99999', 'NaN', 'Infinity', '%FF', '%ZZ', '4%00', '%204', '0x4', '9'.repeat(30)])
      return { route, kind: 'bad maxTokens', spec: { path: `${route}?text=hi&maxTokens=${raw}` } }
    }
    case 3:
      return { route, kind: 'repeated parameter, bad first', spec: { path: `${route}?text=hi&maxTokens=0&maxTokens=4` } }
    case 4:
      return { route, kind: 'very long value', spec: { path: `${route}?maxTokens=${'9'.repeat(prng.int(1_000, 8_000))}&text=a` } }
    case 5:
      return { route, kind: 'prompt over the limit, percent-encoded', spec: { path: `${route}?text=${'%C3%A9'.repeat(prng.int(2_001, 2_500))}&maxTokens=1` } }
    default:
      return {
        route,
        kind: 'wrong method',
        spec: { method: prng.pick(['POST', 'PUT', 'DELETE']), path: `${route}?text=hi`, body: 'hi', headers: { 'content-type': 'text/plain' } },
      }
  }
}

function ocrCase(prng: Prng, fixtures: Fixture[]): BadCase {
  const route = '/ocr/direction'
  switch (prng.int(0, 9)) {
    case 0:
      return {
        route,
        kind: 'wrong content type',
        spec: {
          method: 'POST',
          path: route,
          body: prng.pick(fixtures).bytes,
          headers: {
            'content-type': prng.pick(['text/plain', 'application/json', 'image/gif', 'image/webp', 'multipart/form-data; boundary=x', 'image/svg+xml']),
          },
        },
      }
    case 1:
      return { route, kind: 'empty body', spec: { method: 'POST', path: route, body: new Uint8Array(0), headers: { 'content-type': 'image/png' } } }
    case 2:
      return { route, kind: 'wrong method', spec: { method: prng.pick(['GET', 'PUT', 'DELETE']), path: route } }
    case 3:
      return {
        route,
        kind: 'JSON instead of an image',
        spec: { method: 'POST', path: route, body: '{"image": "iVBORw0KGgo="}', headers: { 'content-type': 'application/octet-stream' } },
      }
    default: {
      const image = brokenImage(prng, fixtures)
      return { route, kind: image.name, spec: { method: 'POST', path: route, body: image.bytes, headers: { 'content-type': image.type } } }
    }
  }
}

/** One malformed request for one of the demo's routes. */
export function badCase(prng: Prng, fixtures: Fixture[]): BadCase {
  const roll = prng.int(0, 99)
  if (roll < 35) return queryCase(prng)
  if (roll < 60) return predictCase(prng)
  if (roll < 75) return generateCase(prng)
  return ocrCase(prng, fixtures)
}
