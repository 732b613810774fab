/**
 * The models loaded in this thread (or isolate) and not yet released, as
 * `/-/routes` lists them: which runtime and provider run each, and how. Plain
 * data, no onnxruntime: the admin routes import it on every runtime.
 */
export interface LoadedModel {
  runtime: string
  provider: string
  numThreads: number
  instances: number
  inputs: string[]
  outputs: string[]
}

const loaded = new Set<LoadedModel>()

/** Note a model as loaded; the function returned forgets it (when it is released). */
export function noteLoadedModel(model: LoadedModel): () => void {
  loaded.add(model)
  return () => loaded.delete(model)
}

/** The models loaded here, oldest first. */
export function loadedModels(): LoadedModel[] {
  return [...loaded].map((model) => ({ ...model, inputs: [...model.inputs], outputs: [...model.outputs] }))
}
