// graph.js: the timeline's history graph, git log --graph style, in
// inline SVG beside the list: a column per line of history, an edge from
// each checkpoint to each of its parents (a fork where lines meet), a
// node shaped and colored by the checkpoint's kind, HEAD ringed.
//
// layout decides (a pure function of the checkpoints); draw measures the
// list's rows and carries it out. The rows stay the focus targets: the
// graph is their picture, and follows their focus and hover.

const NS = 'http://www.w3.org/2000/svg';
export const KINDS = ['manual', 'turn', 'run', 'pre-restore', 'edit', 'restore'];
const COL = 14; // a column's width
const PAD = 9; // the first column's center
const LANES = 6; // the lane colors, --lane-0 … --lane-5, then again

// layout places checkpoints (newest first, every one after its children,
// as GET /api/checkpoints lists them) in columns. complete says there are
// no older pages: a parent not among them was removed by gc. It returns
// the nodes {c, row, col}, the edges {from, to, lane, cut} (rows; to is
// -1 for a parent on an older page) and the number of columns.
export function layout(cps, complete) {
  const rowOf = new Map(cps.map((c, i) => [c.id, i]));
  const lanes = []; // the checkpoint each column waits for, or null
  const nodes = [];
  const edges = [];
  const claim = (id) => {
    let l = lanes.indexOf(null);
    if (l < 0) l = lanes.push(null) - 1;
    lanes[l] = id;
    return l;
  };
  cps.forEach((c, row) => {
    // Every column waiting for c ends here; c takes the leftmost.
    let col = -1;
    lanes.forEach((id, l) => {
      if (id !== c.id) return;
      if (col < 0) col = l;
      lanes[l] = null;
    });
    if (col < 0) col = claim(c.id);
    lanes[col] = null;
    nodes.push({ c, row, col });
    (c.parents || []).forEach((p, k) => {
      const to = rowOf.has(p) ? rowOf.get(p) : -1;
      if (to >= 0 && to <= row) return; // not older: no edge to draw
      if (to < 0 && complete) { // gc removed it: a stub
        edges.push({ from: row, to: -1, lane: col, cut: true });
        return;
      }
      let lane = k === 0 ? col : lanes.indexOf(p);
      if (lane < 0) lane = claim(p);
      lanes[lane] = p;
      edges.push({ from: row, to, lane, cut: false });
    });
  });
  const cols = Math.max(1, ...nodes.map((n) => n.col + 1), ...edges.map((e) => e.lane + 1));
  return { nodes, edges, cols };
}

function svg(tag, attrs, ...kids) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null) el.setAttribute(k, v);
  el.append(...kids.filter((k) => k !== undefined && k !== null));
  return el;
}

// shape is a kind's node at (x, y): manual ●, turn ■, run ▲, edit ◆,
// restore ▼, pre-restore ○, anything else a small dot.
export function shape(kind, x, y) {
  const cls = `node ${KINDS.includes(kind) ? kind : 'other'}`;
  const poly = (pts) => svg('polygon', { class: cls, points: pts.map(([dx, dy]) => `${x + dx},${y + dy}`).join(' ') });
  switch (kind) {
    case 'manual': return svg('circle', { class: cls, cx: x, cy: y, r: 5 });
    case 'turn': return svg('rect', { class: cls, x: x - 4.5, y: y - 4.5, width: 9, height: 9, rx: 1.5 });
    case 'run': return poly([[0, -5.5], [5.5, 4.5], [-5.5, 4.5]]);
    case 'edit': return poly([[0, -5.5], [5.5, 0], [0, 5.5], [-5.5, 0]]);
    case 'restore': return poly([[0, 5.5], [5.5, -4.5], [-5.5, -4.5]]);
    case 'pre-restore': return svg('circle', { class: cls, cx: x, cy: y, r: 4 });
    default: return svg('circle', { class: cls, cx: x, cy: y, r: 3.5 });
  }
}

// legend is the kinds among cps, each with its shape, and HEAD's ring.
export function legend(cps) {
  const kinds = KINDS.filter((k) => cps.some((c) => c.kind === k));
  if (cps.some((c) => !KINDS.includes(c.kind))) kinds.push('other');
  const icon = (...kids) => svg('svg', { width: 14, height: 14, viewBox: '0 0 14 14', 'aria-hidden': 'true', class: 'graph' }, ...kids);
  const item = (label, ic) => {
    const li = document.createElement('li');
    li.append(ic, label);
    return li;
  };
  const ul = document.createElement('ul');
  ul.className = 'legend graph-legend';
  ul.setAttribute('aria-label', 'Graph legend');
  ul.append(...kinds.map((k) => item(k, icon(shape(k, 7, 7)))));
  if (cps.some((c) => (c.names || []).includes('HEAD'))) {
    ul.append(item('HEAD', icon(svg('circle', { class: 'head', cx: 7, cy: 7, r: 5.5 }))));
  }
  return ul;
}

const X = (col) => PAD + col * COL;

// edgePath leaves the child at (x1, y1), turns into its lane at xl, runs
// down it and turns into the parent at (x2, y2).
function edgePath(x1, y1, xl, x2, y2, bend) {
  const mid = (a, b) => (a + b) / 2;
  let d = `M${x1},${y1}`;
  let y = y1;
  if (xl !== x1) {
    d += ` C${x1},${mid(y, y + bend)} ${xl},${mid(y, y + bend)} ${xl},${y + bend}`;
    y += bend;
  }
  if (x2 !== xl) {
    const top = Math.max(y, y2 - bend);
    d += ` L${xl},${top} C${xl},${mid(top, y2)} ${x2},${mid(top, y2)} ${x2},${y2}`;
  } else {
    d += ` L${x2},${y2}`;
  }
  return d;
}

// draw puts the graph of the list's rows (one li per checkpoint, in cps's
// order) into box, the list's positioned wrapper, beside them.
export function draw(box, list, cps, complete) {
  const { nodes, edges, cols } = layout(cps, complete);
  const rows = [...list.children];
  const width = X(cols - 1) + PAD;
  box.style.setProperty('--graph-w', `${width}px`);
  // Measure after the width is set: it may change how the rows wrap.
  // Offsets are from box, the nearest positioned element.
  const ys = rows.map((li) => {
    const t = li.querySelector('.title') || li;
    return t.offsetTop + t.offsetHeight / 2;
  });
  const height = list.offsetTop + list.offsetHeight;
  const bottom = height;
  const bend = Math.min(14, ...ys.slice(1).map((y, i) => (y - ys[i]) / 2));
  const g = svg('g', { class: 'edges' });
  for (const e of edges) {
    const from = nodes[e.from];
    const x1 = X(from.col);
    const y1 = ys[e.from];
    let d;
    if (e.cut) d = `M${x1},${y1} L${x1},${y1 + bend}`;
    else if (e.to < 0) d = edgePath(x1, y1, X(e.lane), X(e.lane), bottom, bend);
    else d = edgePath(x1, y1, X(e.lane), X(nodes[e.to].col), ys[e.to], bend);
    g.append(svg('path', {
      class: `edge lane-${e.lane % LANES}${e.cut ? ' cut' : ''}${e.to < 0 && !e.cut ? ' more' : ''}`,
      d, 'data-from': e.from, 'data-to': e.to, 'data-lane': e.lane,
    }));
  }
  const n = svg('g', { class: 'nodes' });
  for (const { c, row, col } of nodes) {
    const x = X(col);
    const y = ys[row];
    const names = c.names || [];
    const title = svg('title', {});
    title.textContent = `${c.kind} ${c.id.slice(0, 12)}${c.branch ? ` on ${c.branch}` : ''}${names.length ? ` (${names.join(', ')})` : ''}: ${c.message}`;
    n.append(svg('g', { class: `cp lane-${col % LANES}`, 'data-row': row, 'data-col': col, 'data-id': c.id },
      names.includes('HEAD') ? svg('circle', { class: 'head', cx: x, cy: y, r: 8 }) : null,
      shape(c.kind, x, y), title));
  }
  const lanes = new Set(nodes.map((x) => x.col)).size;
  const pic = svg('svg', {
    class: 'graph', id: 'graph', width, height, viewBox: `0 0 ${width} ${height}`, role: 'img',
    'aria-label': `The history graph: ${nodes.length} checkpoints in ${lanes} ${lanes === 1 ? 'line' : 'lines'}`,
  }, g, n);
  pic.addEventListener('click', (ev) => {
    const id = ev.target.closest?.('g.cp')?.dataset.id;
    if (id) location.hash = `#/timeline/${id}`;
  });
  box.querySelector('svg.graph')?.remove();
  box.prepend(pic);
  return pic;
}

// follow marks the node of the row the focus or the pointer is on.
export function follow(box, list) {
  const mark = (ev) => {
    const li = ev.target.closest?.('li');
    const row = li ? [...list.children].indexOf(li) : -1;
    for (const el of box.querySelectorAll('svg.graph .on')) el.classList.remove('on');
    if (row < 0) return;
    box.querySelector(`svg.graph g.cp[data-row="${row}"]`)?.classList.add('on');
    for (const e of box.querySelectorAll(`svg.graph path[data-from="${row}"]`)) e.classList.add('on');
  };
  list.addEventListener('focusin', mark);
  list.addEventListener('mouseover', mark);
  list.addEventListener('mouseleave', () => {
    const f = document.activeElement;
    mark({ target: list.contains(f) ? f : list });
  });
}
