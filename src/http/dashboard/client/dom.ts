/**
 * Small DOM builders. Every string from the server goes in through
 * setAttribute or a text node, never through HTML parsing, so a deployment
 * or method name cannot become markup.
 */

export type Attributes = Record<string, string | number>
export type Child = Node | string

const SVG_NS = 'http://www.w3.org/2000/svg'

/** An HTML element with attributes (class, data-*, ...) and children; strings become text nodes. */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Attributes = {}, children: Child[] = []): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag)
  for (const name in attributes) node.setAttribute(name, String(attributes[name]))
  node.append(...children)
  return node
}

/** An SVG element with attributes and, optionally, text. */
export function svg(tag: string, attributes: Attributes = {}, text?: string): SVGElement {
  const node = document.createElementNS(SVG_NS, tag)
  for (const name in attributes) node.setAttribute(name, String(attributes[name]))
  if (text !== undefined) node.textContent = text
  return node
}

/** An element the page's markup must hold; a clear error beats a null dereference later. */
export function required<T extends Element>(parent: ParentNode, selector: string, type: new () => T): T {
  const found = parent.querySelector(selector)
  if (!(found instanceof type)) throw new Error(`dashboard: the page has no ${type.name} matching ${selector}`)
  return found
}

/** Make parent's children exactly these nodes, touching the DOM only when they differ (no reflow, no scroll jump). */
export function syncChildren(parent: Element, nodes: readonly Element[]): void {
  const current = parent.children
  if (current.length === nodes.length && nodes.every((node, i) => current[i] === node)) return
  parent.replaceChildren(...nodes)
}
