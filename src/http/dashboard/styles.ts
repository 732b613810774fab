/**
 * The dashboard's stylesheet. Colours are custom properties with a dark set
 * under prefers-color-scheme, so charts (which use these classes, not
 * inline colours) follow the theme too. System fonts only: no downloads.
 */
export const STYLES = /* css */ `
:root {
  color-scheme: light dark;
  --bg: #f5f6f8;
  --card: #ffffff;
  --sunken: #f9fafb;
  --border: #e4e7ec;
  --text: #101828;
  --muted: #667085;
  --faint: #98a2b3;
  --grid: #eef0f3;
  --axis: #c4cad4;
  --tone-1: #3e63dd;
  --tone-2: #d9822b;
  --tone-3: #d0406b;
  --bar: #6e86c9;
  --ok: #12a150;
  --bad: #e5484d;
  --radius: 10px;
  font: 14px/1.45 ui-sans-serif, system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #0e1014;
    --card: #161920;
    --sunken: #1b1f27;
    --border: #272c36;
    --text: #e7e9ee;
    --muted: #9aa3b2;
    --faint: #6b7383;
    --grid: #222731;
    --axis: #3a414e;
    --tone-1: #7c9bff;
    --tone-2: #f0a35e;
    --tone-3: #f0718f;
    --bar: #7d93d6;
  }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--text); }
code, .route { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
h1, h2, h3 { margin: 0; font-weight: 600; }
.muted { color: var(--muted); }
.eyebrow { font-size: 11px; font-weight: 600; letter-spacing: .06em; text-transform: uppercase; color: var(--muted); }

/* Top bar: product, connection state, total throughput. */
.top {
  position: sticky; top: 0; z-index: 1;
  display: flex; align-items: center; gap: 24px;
  padding: 12px 32px; background: color-mix(in srgb, var(--card) 92%, transparent);
  border-bottom: 1px solid var(--border); backdrop-filter: blur(6px);
}
.brand { display: flex; align-items: center; gap: 10px; font-size: 15px; }
.brand .mark { width: 22px; height: 22px; }
.brand .mark rect { fill: var(--tone-1); }
.brand strong { font-weight: 650; }
.brand .sep { color: var(--faint); }
.spacer { flex: 1; }
.total { color: var(--muted); }
.total b { color: var(--text); font-variant-numeric: tabular-nums; font-weight: 600; }
.status { display: inline-flex; align-items: center; gap: 8px; padding: 4px 10px; border: 1px solid var(--border); border-radius: 999px; color: var(--muted); font-size: 12.5px; font-variant-numeric: tabular-nums; }
.status .dot { width: 8px; height: 8px; border-radius: 50%; background: var(--faint); }
.status[data-state="live"] .dot { background: var(--ok); box-shadow: 0 0 0 3px color-mix(in srgb, var(--ok) 22%, transparent); }
.status[data-state="error"] { color: var(--bad); }
.status[data-state="error"] .dot { background: var(--bad); }

main { max-width: 1240px; margin: 0 auto; padding: 24px 32px 8px; display: grid; gap: 24px; }
.empty { color: var(--muted); text-align: center; padding: 48px 0; }

/* One card per deployment. */
.card { background: var(--card); border: 1px solid var(--border); border-radius: 14px; overflow: hidden; }
.card-head { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: 12px; padding: 18px 22px 14px; }
.title { display: flex; align-items: center; gap: 10px; }
.title h2 { font-size: 18px; letter-spacing: -.01em; }
.pill { font-size: 12px; color: var(--muted); padding: 2px 8px; border-radius: 999px; background: var(--sunken); border: 1px solid var(--border); font-variant-numeric: tabular-nums; }
.routes { display: flex; flex-wrap: wrap; gap: 6px; }
.route { padding: 3px 8px; border-radius: 6px; background: var(--sunken); border: 1px solid var(--border); color: var(--text); }
.route b { color: var(--tone-1); font-weight: 600; margin-right: 2px; }

/* A deployment without traffic: header, one line, options. */
.idle-note { display: none; margin: 0; padding: 0 22px 16px; color: var(--muted); font-size: 13px; }
.card[data-state="idle"] .idle-note { display: block; }
.card[data-state="idle"] :is(.kpis, .charts, .methods) { display: none; }

/* Headline numbers: one row, separated by hairlines. */
.kpis { display: grid; grid-template-columns: repeat(6, 1fr); border-top: 1px solid var(--border); border-bottom: 1px solid var(--border); }
.kpi { display: flex; flex-direction: column; gap: 2px; padding: 14px 22px; min-width: 0; }
.kpi + .kpi { border-left: 1px solid var(--border); }
.kpi .label { font-size: 12px; color: var(--muted); }
.kpi .figure { display: flex; align-items: baseline; gap: 4px; }
.kpi .value { font-size: 26px; font-weight: 600; letter-spacing: -.02em; font-variant-numeric: tabular-nums; }
.kpi .unit { font-size: 13px; color: var(--muted); }
.kpi .note { font-size: 11.5px; color: var(--faint); min-height: 1.3em; }

.charts { display: grid; grid-template-columns: 1fr 1fr; gap: 16px; padding: 16px 22px 6px; }
.panel { margin: 0; padding: 12px 14px 8px; border: 1px solid var(--border); border-radius: var(--radius); background: var(--card); min-width: 0; }
.panel h3 { font-size: 13px; margin-bottom: 6px; }
figcaption { display: flex; align-items: baseline; justify-content: space-between; gap: 12px; }
.legend { display: flex; gap: 14px; font-size: 12px; color: var(--muted); }
.key { display: inline-flex; align-items: center; gap: 6px; white-space: nowrap; }
.key b { color: var(--text); font-weight: 600; font-variant-numeric: tabular-nums; }
.swatch { width: 10px; height: 3px; border-radius: 2px; display: inline-block; }
.swatch.tone-1 { background: var(--tone-1); }
.swatch.tone-2 { background: var(--tone-2); }
.swatch.tone-3 { background: var(--tone-3); }
.swatch.tone-bar { background: var(--bar); height: 10px; width: 10px; border-radius: 2px; }

/* SVG charts: every colour from the theme. */
svg.chart { display: block; width: 100%; overflow: visible; }
.chart .grid { stroke: var(--grid); stroke-width: 1; }
.chart .axis { stroke: var(--axis); stroke-width: 1; }
.chart .tick { fill: var(--muted); font-size: 11px; font-variant-numeric: tabular-nums; }
.chart .axis-title { fill: var(--faint); font-size: 11px; }
.chart .empty-note { fill: var(--faint); font-size: 12.5px; }
.chart .line { fill: none; stroke-width: 1.75; stroke-linejoin: round; stroke-linecap: round; }
.chart .area { stroke: none; opacity: .12; }
.chart .dot { stroke: var(--card); stroke-width: 1.5; }
.chart .line.tone-1 { stroke: var(--tone-1); } .chart .area.tone-1, .chart .dot.tone-1 { fill: var(--tone-1); }
.chart .line.tone-2 { stroke: var(--tone-2); } .chart .area.tone-2, .chart .dot.tone-2 { fill: var(--tone-2); }
.chart .line.tone-3 { stroke: var(--tone-3); } .chart .area.tone-3, .chart .dot.tone-3 { fill: var(--tone-3); }
.chart .bar { fill: var(--bar); }
.chart .bar:hover { fill: var(--tone-1); }
.chart .bar-value { fill: var(--text); font-size: 11px; font-weight: 600; font-variant-numeric: tabular-nums; }

/* Batched methods: histogram, batch stats, options. */
.methods { display: grid; gap: 16px; padding: 10px 22px 16px; }
.methods-empty { margin: 6px 0; font-size: 13px; }
.method { border: 1px solid var(--border); border-radius: 12px; background: var(--sunken); padding: 12px 14px 14px; }
.method-head { display: flex; align-items: baseline; gap: 10px; margin: 0 2px 10px; }
.method-head code { font-size: 14px; font-weight: 600; }
.method-body { display: grid; grid-template-columns: minmax(0, 1.6fr) minmax(0, 1fr) minmax(0, 1fr); gap: 12px; }
dl { margin: 0; }
.method-body > .panel { display: flex; flex-direction: column; }
.stats { flex: 1; display: grid; grid-template-columns: 1fr 1fr; align-content: space-evenly; gap: 14px 16px; }
.stat dt { font-size: 12px; color: var(--muted); }
.stat dd { margin: 0; display: flex; flex-direction: column; }
.stat .value { font-size: 19px; font-weight: 600; font-variant-numeric: tabular-nums; letter-spacing: -.01em; }
.stat small { font-size: 11.5px; color: var(--faint); min-height: 1.3em; }
.options .option { display: flex; justify-content: space-between; gap: 12px; padding: 3px 0; border-bottom: 1px dashed var(--border); font-size: 12.5px; }
.options .option:last-child { border-bottom: 0; }
.options dt { color: var(--muted); font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; }
.options dd { margin: 0; font-variant-numeric: tabular-nums; font-weight: 500; text-align: right; overflow-wrap: anywhere; }
.card-foot { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 16px; padding: 12px 22px; border-top: 1px solid var(--border); background: var(--sunken); }
.options.inline { display: flex; flex-wrap: wrap; gap: 6px 18px; }
.options.inline .option { border: 0; padding: 0; gap: 6px; }
.options.inline dd { text-align: left; }

footer.page { max-width: 1240px; margin: 0 auto; padding: 8px 32px 28px; color: var(--faint); font-size: 12px; }
footer.page a { color: inherit; }
footer.page code { font-size: 11.5px; }

@media (max-width: 980px) {
  .kpis { grid-template-columns: repeat(3, 1fr); }
  .kpi:nth-child(4) { border-left: 0; }
  .kpi:nth-child(n + 4) { border-top: 1px solid var(--border); }
  .charts, .method-body { grid-template-columns: 1fr; }
  .top, main, footer.page { padding-left: 16px; padding-right: 16px; }
}
`
