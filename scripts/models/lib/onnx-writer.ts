/**
 * Minimal ONNX ModelProto writer for building small test models from
 * TypeScript.
 *
 * Serialization is delegated to `onnx-proto`, which ships protobufjs classes
 * generated from the official onnx.proto (ONNX v1.10.2, IR version 8). Using
 * generated code instead of a hand-rolled protobuf encoder means field numbers
 * and wire types come straight from the schema.
 *
 * The helper API is deliberately tiny: describe inputs, outputs, initializers
 * and nodes as plain objects and get back the encoded bytes.
 */
import onnxProto, { type onnx as OnnxTypes } from 'onnx-proto'

// onnx-proto is CommonJS: take the runtime namespace off the default export
// its interfaces come from the type-only import above.
const { onnx } = onnxProto

/** ONNX IR version 8 is understood by every onnxruntime release since 1.10. */
export const IR_VERSION = 8
/** Default opset for the default ("ai.onnx") domain. */
export const DEFAULT_OPSET = 13

export type DType = 'float32' | 'int64' | 'int32'

/** A dimension is a fixed size or a symbolic name such as 'batch'. */
export type Dim = number | string

export interface ValueInfo {
  name: string
  dtype: DType
  shape: Dim[]
}

export interface Initializer {
  name: string
  dtype: DType
  dims: number[]
  data: Float32Array | Int32Array | BigInt64Array | ArrayLike<number>
}

/** Attributes need an explicit type tag: 1 could mean INT or FLOAT in ONNX. */
export type Attribute =
  | { kind: 'int'; value: number }
  | { kind: 'float'; value: number }
  | { kind: 'ints'; value: number[] }
  | { kind: 'floats'; value: number[] }
  | { kind: 'string'; value: string }

export const attr = {
  int: (value: number): Attribute => ({ kind: 'int', value }),
  float: (value: number): Attribute => ({ kind: 'float', value }),
  ints: (value: number[]): Attribute => ({ kind: 'ints', value }),
  floats: (value: number[]): Attribute => ({ kind: 'floats', value }),
  string: (value: string): Attribute => ({ kind: 'string', value }),
}

export interface NodeSpec {
  op: string
  inputs: string[]
  outputs: string[]
  name?: string
  attrs?: Record<string, Attribute>
}

export interface GraphSpec {
  name: string
  inputs: ValueInfo[]
  outputs: ValueInfo[]
  initializers?: Initializer[]
  nodes: NodeSpec[]
  opset?: number
  producerName?: string
  docString?: string
}

const ELEM_TYPE: Record<DType, number> = {
  float32: onnx.TensorProto.DataType.FLOAT,
  int64: onnx.TensorProto.DataType.INT64,
  int32: onnx.TensorProto.DataType.INT32,
}

function valueInfo(v: ValueInfo): OnnxTypes.IValueInfoProto {
  return {
    name: v.name,
    type: {
      tensorType: {
        elemType: ELEM_TYPE[v.dtype],
        shape: {
          dim: v.shape.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })),
        },
      },
    },
  }
}

/**
 * Tensor payloads go into `raw_data` as little-endian bytes (what the ONNX
 * spec mandates). Writing through a DataView keeps the output identical even
 * on a big-endian host, and raw_data is far more compact than repeated fields.
 */
function rawBytes(init: Initializer): Uint8Array {
  const n = init.dims.reduce((a, b) => a * b, 1)
  if (init.data.length !== n) {
    throw new Error(`initializer ${init.name}: dims ${init.dims.join('x')} need ${n} values, got ${init.data.length}`)
  }
  const width = init.dtype === 'int64' ? 8 : 4
  const out = new Uint8Array(n * width)
  const view = new DataView(out.buffer)
  for (let i = 0; i < n; i++) {
    const x = init.data[i] as number | bigint
    if (init.dtype === 'float32') view.setFloat32(i * 4, Number(x), true)
    else if (init.dtype === 'int32') view.setInt32(i * 4, Number(x), true)
    else view.setBigInt64(i * 8, BigInt(x), true)
  }
  return out
}

function tensor(init: Initializer): OnnxTypes.ITensorProto {
  return {
    name: init.name,
    dataType: ELEM_TYPE[init.dtype],
    dims: init.dims,
    rawData: rawBytes(init),
  }
}

function attribute(name: string, a: Attribute): OnnxTypes.IAttributeProto {
  const T = onnx.AttributeProto.AttributeType
  switch (a.kind) {
    case 'int':
      return { name, type: T.INT, i: a.value }
    case 'float':
      return { name, type: T.FLOAT, f: a.value }
    case 'ints':
      return { name, type: T.INTS, ints: a.value }
    case 'floats':
      return { name, type: T.FLOATS, floats: a.value }
    case 'string':
      return { name, type: T.STRING, s: new TextEncoder().encode(a.value) }
  }
}

/** Encode a complete single-graph ModelProto. */
export function graph(spec: GraphSpec): Uint8Array {
  const nodes: OnnxTypes.INodeProto[] = spec.nodes.map((n, i) => ({
    opType: n.op,
    name: n.name ?? `${n.op}_${i}`,
    input: n.inputs,
    output: n.outputs,
    attribute: Object.entries(n.attrs ?? {}).map(([k, v]) => attribute(k, v)),
  }))
  const model = onnx.ModelProto.create({
    irVersion: IR_VERSION,
    producerName: spec.producerName ?? 'edgeserve scripts/models',
    docString: spec.docString ?? '',
    opsetImport: [{ domain: '', version: spec.opset ?? DEFAULT_OPSET }],
    graph: {
      name: spec.name,
      input: spec.inputs.map(valueInfo),
      output: spec.outputs.map(valueInfo),
      initializer: (spec.initializers ?? []).map(tensor),
      node: nodes,
    },
  })
  const err = onnx.ModelProto.verify(model)
  if (err) throw new Error(`invalid ModelProto: ${err}`)
  return onnx.ModelProto.encode(model).finish()
}
