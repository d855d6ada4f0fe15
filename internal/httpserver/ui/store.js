// store.js: the store in pictures — its size over time with gc's drops,
// checkpoints per day by kind, the largest paths. Inline SVG drawn here
// (no library); each chart is an image with a title and a description,
// a visually hidden table of its numbers, and one tab stop whose arrow
// keys walk its bars or points, each read out below the chart.
import { h, get, errorBox, debounce, plural } from './lib.js';

const NS = 'http://www.w3.org/2000/svg';
// KINDS are stacked in this order; any other kind counts as "other".
const KINDS = ['manual', 'turn', 'run', 'pre-restore', 'edit', 'restore', 'other'];
const W = 720; // the charts' viewBox width; they scale to the page
const M = { l: 64, r: 16, t: 12, b: 28 }; // margins for the axes

let root = null;

export async function show(el) {
  root = el;
  await refresh();
}

const STORE_EVENTS = new Set(['checkpoint', 'gc', 'cleared', 'restored', 'undone', 'redone', 'resync']);
const reload = debounce(() => refresh().catch((err) => root.replaceChildren(errorBox(err))), 300);

export function onEvent(ev) {
  if (STORE_EVENTS.has(ev.kind)) reload();
}

async function refresh() {
  const [stats, hist] = await Promise.all([get('/api/stats'), get('/api/stats/history')]);
  const focus = document.activeElement?.id;
  root.replaceChildren(h('div', { class: 'pane store' },
    h('header', {}, h('h2', {}, 'Store'),
      h('p', { class: 'meta' }, plural(stats.total, 'checkpoint'), ' · ', bytes(stats.used_bytes), ' of data in ',
        bytes(stats.disk_bytes), ' on disk · ', bytes(stats.logical_bytes), ' as full copies',
        stats.disk_bytes ? ` (×${(stats.logical_bytes / stats.disk_bytes).toFixed(1)})` : '')),
    sizeChart(hist),
    perDayChart(hist.growth),
    largestChart(stats.largest || [])));
  if (focus) document.getElementById(focus)?.focus();
}

// bytes: 1536 is "1.5 KiB".
export function bytes(n) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (Math.abs(n) >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return `${i === 0 ? n : n.toFixed(n < 10 ? 1 : 0)} ${units[i]}`;
}

const day = (t) => {
  const d = new Date(t);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
};
const when = (t) => new Date(t).toLocaleString();

// svg makes an SVG element.
function svg(tag, attrs, ...kids) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null) el.setAttribute(k, v);
  el.append(...kids.flat().filter((k) => k !== undefined && k !== null));
  return el;
}

// figure wraps a chart: a heading, the SVG (role img, named by its title
// and described), the readout the arrow keys fill, and the hidden table.
function figure(id, title, desc, chart, table, items) {
  const readout = h('p', { class: 'readout', id: `${id}-readout`, 'aria-live': 'polite' }, items.length ? 'Tab to the chart, then use the arrow keys.' : '');
  chart.setAttribute('role', 'img');
  chart.setAttribute('aria-labelledby', `${id}-title ${id}-desc`);
  chart.prepend(svg('title', { id: `${id}-title` }, title), svg('desc', { id: `${id}-desc` }, desc));
  rove(chart, items, readout);
  return h('figure', { class: 'chart', id },
    h('figcaption', {}, h('h3', {}, title), h('p', { class: 'meta' }, desc)),
    chart, readout, table);
}

// rove makes the chart one tab stop whose arrow keys (and Home, End)
// move between its items, each an SVG element with data-label; the
// readout says the one focused or hovered.
function rove(chart, items, readout) {
  if (!items.length) return;
  let at = -1;
  const go = (i) => {
    at = Math.max(0, Math.min(items.length - 1, i));
    for (const [j, it] of items.entries()) it.classList.toggle('on', j === at);
    readout.textContent = items[at].dataset.label;
  };
  chart.setAttribute('tabindex', '0');
  chart.addEventListener('focus', () => go(at < 0 ? items.length - 1 : at));
  chart.addEventListener('keydown', (e) => {
    const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[e.key];
    if (step) go(at + step);
    else if (e.key === 'Home') go(0);
    else if (e.key === 'End') go(items.length - 1);
    else return;
    e.preventDefault();
  });
  items.forEach((it, i) => {
    it.addEventListener('mouseenter', () => go(i));
    it.append(svg('title', {}, it.dataset.label));
  });
}

// table is the chart's numbers for screen readers (visually hidden).
function table(caption, head, rows) {
  return h('table', { class: 'sr-only' }, h('caption', {}, caption),
    h('thead', {}, h('tr', {}, head.map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, rows.map((r) => h('tr', {}, r.map((c) => h('td', {}, c))))));
}

// ticks are about n round values from 0 to max.
function ticks(max, n = 4) {
  if (max <= 0) return [0];
  const raw = max / n;
  const p = 1024 ** Math.floor(Math.log(raw) / Math.log(1024));
  const m = raw / p;
  const step = (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : m <= 10 ? 10 : m <= 20 ? 20 : m <= 50 ? 50 : m <= 100 ? 100 : m <= 200 ? 200 : 500) * p;
  const out = [];
  for (let v = 0; v <= max * 1.0001; v += step) out.push(v);
  return out;
}

function yAxis(g, y, max, H, fmt) {
  for (const v of ticks(max)) {
    g.append(svg('line', { class: 'grid', x1: M.l, x2: W - M.r, y1: y(v), y2: y(v) }),
      svg('text', { class: 'tick', x: M.l - 6, y: y(v) + 4, 'text-anchor': 'end' }, fmt(v)));
  }
  g.append(svg('line', { class: 'axis', x1: M.l, x2: W - M.r, y1: H - M.b, y2: H - M.b }));
}

// sizeChart: the content the kept checkpoints hold, by when it came
// (a step line, a point per checkpoint), and the store's data as this
// server sampled it, with each gc's drop marked.
function sizeChart(hist) {
  const H = 240;
  const g = hist.growth;
  const samples = hist.sizes || [];
  const gcs = hist.gc || [];
  const times = [...g.map((p) => Date.parse(p.time)), ...samples.map((s) => Date.parse(s.time)), ...gcs.map((r) => Date.parse(r.time))];
  const desc = `${plural(g.length, 'checkpoint')}; ${plural(gcs.length, 'gc run')} seen since the server started ${when(hist.since)}.`;
  const chart = svg('svg', { class: 'size', viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: 'xMidYMid meet' });
  if (!times.length) return figure('chart-size', 'Store size over time', 'No checkpoints yet.', chart, null, []);
  let t0 = Math.min(...times);
  let t1 = Math.max(...times, Date.now());
  if (t1 - t0 < 60e3) t0 = t1 - 60e3;
  const max = Math.max(1, ...g.map((p) => p.content_bytes), ...samples.map((s) => s.bytes), ...gcs.map((r) => r.size_before));
  const x = (t) => M.l + ((t - t0) / (t1 - t0)) * (W - M.l - M.r);
  const y = (v) => H - M.b - (v / max) * (H - M.t - M.b);
  yAxis(chart, y, max, H, bytes);
  chart.append(svg('text', { class: 'tick', x: M.l, y: H - 8 }, new Date(t0).toLocaleDateString()),
    svg('text', { class: 'tick', x: W - M.r, y: H - 8, 'text-anchor': 'end' }, new Date(t1).toLocaleDateString()));
  const items = [];
  // The growth: a step line, then a point per checkpoint (up to 400).
  if (g.length) {
    let d = `M${x(Date.parse(g[0].time))},${y(0)}`;
    for (const p of g) d += `H${x(Date.parse(p.time))}V${y(p.content_bytes)}`;
    d += `H${x(t1)}`;
    chart.append(svg('path', { class: 'line content', d }));
    if (g.length <= 400) {
      g.forEach((p, i) => {
        const c = svg('circle', {
          class: `pt ${KINDS.includes(p.kind) ? p.kind : 'other'}`, id: `size-pt-${i}`, cx: x(Date.parse(p.time)), cy: y(p.content_bytes), r: 3.5,
          'data-label': `${when(p.time)}: ${p.kind} checkpoint ${p.checkpoint.slice(0, 12)}, +${bytes(p.new_bytes)} new, ${bytes(p.content_bytes)} in all`,
        });
        chart.append(c);
        items.push(c);
      });
    }
  }
  // The samples: a step line of the store's data, gc's drops in it.
  if (samples.length) {
    let d = `M${x(Date.parse(samples[0].time))},${y(samples[0].bytes)}`;
    for (const s of samples.slice(1)) d += `H${x(Date.parse(s.time))}V${y(s.bytes)}`;
    d += `H${x(t1)}`;
    chart.append(svg('path', { class: 'line sampled', d }));
  }
  gcs.forEach((r, i) => {
    const gx = x(Date.parse(r.time));
    const freed = r.size_before - r.size_after;
    const m = svg('g', {
      class: 'gc', id: `size-gc-${i}`,
      'data-label': `${when(r.time)}: gc (${r.source === 'server' ? 'this server' : 'another process'}): ${r.message}; data ${bytes(r.size_before)} → ${bytes(r.size_after)}${freed > 0 ? `, ${bytes(freed)} freed` : ''}`,
    },
    svg('line', { class: 'gc-mark', x1: gx, x2: gx, y1: M.t, y2: H - M.b }),
    svg('line', { class: 'gc-drop', x1: gx, x2: gx, y1: y(r.size_before), y2: y(r.size_after) }),
    svg('path', { class: 'gc-head', d: `M${gx - 5},${M.t} h10 l-5,8 z` }));
    chart.append(m);
    items.push(m);
  });
  items.sort((a, b) => (a.getAttribute('cx') ?? a.querySelector('line').getAttribute('x1')) - (b.getAttribute('cx') ?? b.querySelector('line').getAttribute('x1')));
  const legend = h('ul', { class: 'legend' },
    h('li', { class: 'content' }, 'content of the kept checkpoints, by when it came'),
    samples.length ? h('li', { class: 'sampled' }, 'the store\'s data, sampled since the server started') : null,
    gcs.length ? h('li', { class: 'gc' }, 'gc runs and what they freed') : null);
  const tbl = table('Store size over time', ['time', 'event', 'bytes'], [
    ...g.slice(-200).map((p) => [when(p.time), `${p.kind} checkpoint (+${bytes(p.new_bytes)})`, bytes(p.content_bytes)]),
    ...gcs.map((r) => [when(r.time), `gc: ${r.message}`, `${bytes(r.size_before)} → ${bytes(r.size_after)}`]),
  ]);
  const fig = figure('chart-size', 'Store size over time', desc, chart, tbl, items);
  fig.insertBefore(legend, fig.querySelector('.readout'));
  return fig;
}

// perDayChart: a bar per day (the last 60 with checkpoints' span),
// stacked by kind.
function perDayChart(growth) {
  const H = 220;
  const chart = svg('svg', { class: 'perday', viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: 'xMidYMid meet' });
  const counts = new Map();
  for (const p of growth) {
    const k = KINDS.includes(p.kind) ? p.kind : 'other';
    const d = day(p.time);
    if (!counts.has(d)) counts.set(d, {});
    counts.get(d)[k] = (counts.get(d)[k] || 0) + 1;
  }
  // Every day from the first to the last, at most the last 60.
  const days = [];
  if (growth.length) {
    const last = new Date(growth[growth.length - 1].time);
    const first = new Date(growth[0].time);
    for (let d = new Date(last.getFullYear(), last.getMonth(), last.getDate()); days.length < 60; d.setDate(d.getDate() - 1)) {
      days.unshift(day(d));
      if (day(d) <= day(first)) break;
    }
  }
  const total = (d) => Object.values(counts.get(d) || {}).reduce((a, b) => a + b, 0);
  const max = Math.max(1, ...days.map(total));
  const y = (v) => H - M.b - (v / max) * (H - M.t - M.b);
  yAxis(chart, y, max, H, (v) => (Number.isInteger(v) ? String(v) : ''));
  const slot = (W - M.l - M.r) / Math.max(days.length, 1);
  const bw = Math.min(48, slot * 0.7);
  const items = [];
  days.forEach((d, i) => {
    const c = counts.get(d) || {};
    const bx = M.l + i * slot + (slot - bw) / 2;
    const parts = KINDS.filter((k) => c[k]).map((k) => `${c[k]} ${k}`);
    const bar = svg('g', { class: 'day', id: `day-${d}`, 'data-label': `${d}: ${plural(total(d), 'checkpoint')}${parts.length ? ` — ${parts.join(', ')}` : ''}` });
    let acc = 0;
    for (const k of KINDS) {
      if (!c[k]) continue;
      bar.append(svg('rect', { class: `seg ${k}`, x: bx, width: bw, y: y(acc + c[k]), height: y(acc) - y(acc + c[k]) }));
      acc += c[k];
    }
    // An empty day still takes the focus: a sliver at the axis.
    bar.append(svg('rect', { class: 'hit', x: M.l + i * slot, width: slot, y: M.t, height: H - M.t - M.b }));
    if (days.length <= 14 || i % Math.ceil(days.length / 10) === 0) {
      bar.append(svg('text', { class: 'tick', x: bx + bw / 2, y: H - 8, 'text-anchor': 'middle' }, d.slice(5)));
    }
    chart.append(bar);
    items.push(bar);
  });
  const used = KINDS.filter((k) => days.some((d) => counts.get(d)?.[k]));
  const legend = h('ul', { class: 'legend' }, used.map((k) => h('li', { class: `kind-${k}` }, k)));
  const tbl = table('Checkpoints per day', ['day', ...used, 'total'],
    days.map((d) => [d, ...used.map((k) => String(counts.get(d)?.[k] || 0)), String(total(d))]));
  const fig = figure('chart-perday', 'Checkpoints per day', `By kind, ${plural(days.length, 'day')} from ${days[0] || '—'} to ${days[days.length - 1] || '—'}.`, chart, tbl, items);
  fig.insertBefore(legend, fig.querySelector('.readout'));
  return fig;
}

// largestChart: HEAD's largest files, a horizontal bar each.
function largestChart(largest) {
  const row = 26;
  const H = Math.max(1, largest.length) * row + 8;
  const L = 260; // the paths' column
  const chart = svg('svg', { class: 'largest', viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: 'xMidYMid meet' });
  const max = Math.max(1, ...largest.map((f) => f.size));
  const items = largest.map((f, i) => {
    const w = Math.max(2, (f.size / max) * (W - L - 90));
    const path = f.path.length > 40 ? `…${f.path.slice(-39)}` : f.path;
    const bar = svg('g', { class: 'file', id: `largest-${i}`, 'data-label': `${f.path}: ${bytes(f.size)}` },
      svg('text', { class: 'path', x: L - 8, y: i * row + 18, 'text-anchor': 'end' }, path),
      svg('rect', { class: 'bar', x: L, y: i * row + 5, width: w, height: row - 10, rx: 3 }),
      svg('text', { class: 'tick', x: L + w + 6, y: i * row + 18 }, bytes(f.size)));
    chart.append(bar);
    return bar;
  });
  const tbl = table('The largest paths', ['path', 'size'], largest.map((f) => [f.path, bytes(f.size)]));
  return figure('chart-largest', 'The largest paths', largest.length ? `HEAD's ${plural(largest.length, 'largest file')}.` : 'No checkpoint yet.', chart, tbl, items);
}
