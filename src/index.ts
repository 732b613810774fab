/**
 * edgeserve: dynamic request batching for edge runtimes.
 *
 * This entry is runtime-agnostic (Workers, Node, browsers). Runtime adapters
 * live in `edgeserve/node`, `edgeserve/workers`; inference in `edgeserve/onnx`.
 */
export * from './batching/index.js'
export * from './errors.js'
