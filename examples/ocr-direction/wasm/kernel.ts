/**
 * The preprocessing's WebAssembly instance (./preprocess.wat) and views of
 * its memory: the taps and source rows that preprocess.ts writes, the
 * resized line, the normalized planes. One per realm, made on first use;
 * every call into it is synchronous, so two never share it at once.
 */
import preprocessModule from '#ocr-direction-wasm'
import { growMemoryTo } from '../../shared/wasm-module.js'
import { CLS_HEIGHT, CLS_INPUT_SIZE, CLS_WIDTH } from '../shape.js'

/**
 * Where each output column or row samples its source: the offset of the
 * lower sample, of the next one (clamped), and the weight of the next.
 */
export interface Taps {
  lower: Int32Array
  upper: Int32Array
  weight: Float64Array
}

export class Kernel {
  private readonly exports: WebAssembly.Exports = new WebAssembly.Instance(preprocessModule).exports
  private readonly memory = this.exports['memory'] as WebAssembly.Memory
  /** Source rows and taps -> `line`, 48 rows of `width * channels` bytes. */
  readonly resize = this.exports['resize'] as (width: number, channels: number) => void
  /** `line` -> `out`, [3, 48, 192] float32. */
  readonly normalize = this.exports['normalize'] as (width: number, channels: number) => void
  /** Where the source rows go. */
  readonly source = this.address('source')
  private readonly lineAt = this.address('line')
  out!: Float32Array
  columns!: Taps
  rows!: Taps
  bytes!: Uint8Array

  constructor() {
    this.makeViews()
  }

  /** The first `size` bytes (at most 48 * 192 * 3) of the resized line, as a view to read or fill. */
  line(size: number): Uint8Array {
    return this.bytes.subarray(this.lineAt, this.lineAt + size)
  }

  /** Room for `size` bytes of source rows. */
  reserve(size: number): void {
    if (growMemoryTo(this.memory, this.source + size)) this.makeViews()
  }

  private makeViews(): void {
    const { buffer } = this.memory
    const taps = (name: string, size: number): Taps => ({
      lower: new Int32Array(buffer, this.address(`${name}Lower`), size),
      upper: new Int32Array(buffer, this.address(`${name}Upper`), size),
      weight: new Float64Array(buffer, this.address(`${name}Weight`), size),
    })
    this.out = new Float32Array(buffer, this.address('out'), CLS_INPUT_SIZE)
    this.columns = taps('column', CLS_WIDTH)
    this.rows = taps('row', CLS_HEIGHT)
    this.bytes = new Uint8Array(buffer)
  }

  private address(name: string): number {
    const global = this.exports[name]
    if (!(global instanceof WebAssembly.Global)) throw new Error(`the preprocessing WebAssembly exports no ${name}: rebuild it (npm run build:wasm)`)
    return global.value as number
  }
}

let kernel: Kernel | undefined

/** This realm's kernel. */
export const theKernel = (): Kernel => (kernel ??= new Kernel())
