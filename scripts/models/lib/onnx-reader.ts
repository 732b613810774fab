/**
 * Read float32 initializers back out of an encoded ONNX model.
 *
 * Verification scripts use this to rerun the TypeScript forward pass with the
 * exact weights stored in the .onnx file, so the check covers serialization
 * too, not just the math.
 */
import onnxProto from 'onnx-proto'

const { onnx } = onnxProto

export function readFloatInitializers(bytes: Uint8Array): Map<string, Float32Array> {
  const model = onnx.ModelProto.decode(bytes)
  const out = new Map<string, Float32Array>()
  for (const t of model.graph?.initializer ?? []) {
    if (t.dataType !== onnx.TensorProto.DataType.FLOAT || !t.name) continue
    const raw = t.rawData
    if (!raw || raw.byteLength === 0) {
      // Writers may use the repeated float_data field instead of raw_data.
      out.set(t.name, Float32Array.from(t.floatData ?? []))
      continue
    }
    // Copy through a DataView: raw_data is little-endian and may be unaligned.
    const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength)
    const arr = new Float32Array(raw.byteLength / 4)
    for (let i = 0; i < arr.length; i++) arr[i] = view.getFloat32(i * 4, true)
    out.set(t.name, arr)
  }
  return out
}

/** The named float initializers as a record, failing if any is missing. */
export function readFloatParams<K extends string>(bytes: Uint8Array, names: readonly K[]): Record<K, Float32Array> {
  const inits = readFloatInitializers(bytes)
  const out = {} as Record<K, Float32Array>
  for (const name of names) {
    const value = inits.get(name)
    if (!value) throw new Error(`initializer ${name} missing from model`)
    out[name] = value
  }
  return out
}
