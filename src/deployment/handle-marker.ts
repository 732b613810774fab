/**
 * A type-only mark on `DeploymentHandle<I>` that names the instance type it
 * calls. `.bind()` reads it to accept a deployment wherever the constructor
 * takes a handle to that deployment's class (Ray's
 * `Ingress.bind(Detector.bind())`). Its own file so that deployment.ts and
 * handle.ts can both use it without importing each other.
 */
declare const handleInstance: unique symbol

export interface HandleMarker<I> {
  /** Never set: handles answer only to their methods' names. */
  readonly [handleInstance]?: I
}
