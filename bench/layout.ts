/** How a model's layout reads in the bench's tables: "2 threads", or "2 instances × 1 thread". */
export function layoutName(layout: { threads: number; instances?: number }): string {
  const threads = `${layout.threads} thread${layout.threads === 1 ? '' : 's'}`
  // Results from before instances were measured have no count: one session.
  const instances = layout.instances ?? 1
  return instances > 1 ? `${instances} instances × ${threads}` : threads
}
