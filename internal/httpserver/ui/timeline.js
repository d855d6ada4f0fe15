// timeline.js: the checkpoints, newest first, with their kinds, labels
// and names, beside their history graph; one checkpoint's changes; the
// diff between any two checkpoints or against the working tree.
import { h, get, short, timeEl, errorBox, debounce } from './lib.js';
import * as diff from './diff.js';
import * as graph from './graph.js';

let root = null;
let cps = []; // the checkpoints loaded, newest first
let next = ''; // the next page's before=
let rev = ''; // the checkpoint on screen
let cmp = null; // {from, to} of the diff on screen; to '' is the working tree
let mode = localStorage.getItem('ckpt-diff') || 'unified';

export async function show(el, [r]) {
  root = el;
  rev = r || '';
  cmp = null;
  await refresh();
}

const TIMELINE_EVENTS = new Set(['checkpoint', 'restored', 'undone', 'redone', 'recovered', 'switched', 'branch',
  'tag', 'gc', 'cleared', 'snapshot-created', 'snapshot-deleted', 'turn-began', 'turn-ended', 'rewound', 'forked', 'resync']);
const reload = debounce(() => refresh().catch((err) => root.replaceChildren(errorBox(err))), 100);

export function onEvent(ev) {
  if (TIMELINE_EVENTS.has(ev.kind)) reload();
}

async function refresh() {
  const page = await get(`/api/checkpoints?limit=${Math.max(100, cps.length)}`);
  cps = page.checkpoints;
  next = page.next || '';
  const focus = document.activeElement?.id;
  const list = h('ol', { class: 'timeline', id: 'checkpoints', onkeydown: arrows }, cps.map(row));
  const box = h('div', { class: 'graph-box', id: 'graph-box' }, list);
  const pane = h('section', { class: 'pane', id: 'detail', 'aria-live': 'polite' });
  root.replaceChildren(h('div', { class: 'cols timeline-cols' },
    h('nav', { class: 'list', 'aria-label': 'Checkpoints' }, h('h2', {}, 'Timeline'),
      cps.length ? [graph.legend(cps), box] : h('p', { class: 'empty' }, 'No checkpoints yet: ckpt save makes one.'),
      next ? h('button', { type: 'button', id: 'more', onclick: more }, 'Older checkpoints') : null),
    pane));
  if (cps.length) {
    redraw();
    graph.follow(box, list);
    watchSize(box, list);
  }
  if (focus) document.getElementById(focus)?.focus();
  const id = rev ? rev : cps[0]?.id;
  if (id) await detail(pane, id);
}

async function more() {
  const page = await get(`/api/checkpoints?limit=100&before=${encodeURIComponent(next)}`);
  cps.push(...page.checkpoints);
  next = page.next || '';
  document.getElementById('checkpoints').append(...page.checkpoints.map(row));
  if (!next) document.getElementById('more')?.remove();
  document.querySelector('.graph-legend')?.replaceWith(graph.legend(cps));
  redraw();
}

// redraw draws the graph of the checkpoints loaded beside their rows.
function redraw() {
  const box = document.getElementById('graph-box');
  const list = document.getElementById('checkpoints');
  if (!box || !list) return;
  drawnSize = sizeOf(list);
  graph.draw(box, list, cps, !next);
}

// The list's size when the graph was last drawn: a ResizeObserver also
// reports the size it starts with, and that is no reason to draw again.
let drawnSize = '';
const sizeOf = (el) => `${el.offsetWidth}x${el.offsetHeight}`;

// watchSize redraws when the rows change height (the list's width, a
// font): the graph's nodes sit on their rows' first lines.
let sized = null;
function watchSize(box, list) {
  sized?.disconnect();
  let frame = 0;
  sized = new ResizeObserver(() => {
    if (!box.isConnected || sizeOf(list) === drawnSize) return;
    cancelAnimationFrame(frame);
    frame = requestAnimationFrame(redraw);
  });
  sized.observe(list);
}

// arrows moves the focus between rows: ↑ ↓, Home, End.
function arrows(e) {
  const items = [...e.currentTarget.querySelectorAll('a.item')];
  const i = items.indexOf(document.activeElement);
  if (i < 0) return;
  const to = { ArrowDown: i + 1, ArrowUp: i - 1, Home: 0, End: items.length - 1 }[e.key];
  if (to === undefined || e.altKey || e.ctrlKey || e.metaKey) return;
  e.preventDefault();
  items[Math.max(0, Math.min(items.length - 1, to))].focus();
}

// names shows a checkpoint's refs: HEAD, branches, tags, snapshots.
function names(c) {
  return (c.names || []).map((n) => {
    const [kind, name] = n.includes('/') ? [n.slice(0, n.indexOf('/')), n.slice(n.indexOf('/') + 1)] : ['head', n];
    return h('span', { class: `ref ${kind}`, title: n }, name);
  });
}

function row(c) {
  const on = rev ? c.id.startsWith(rev) || (c.names || []).includes(rev) : c === cps[0];
  return h('li', { class: `cp ${c.kind}` },
    h('a', { href: `#/timeline/${c.id}`, class: 'item', id: `cp-${short(c.id)}`, 'aria-current': on ? 'true' : null },
      h('span', { class: 'title' }, c.message || '(no message)'),
      h('span', { class: 'meta' }, h('span', { class: `kind ${c.kind}` }, c.kind), ' ',
        h('code', {}, short(c.id)), ' · ', timeEl(c.time), ' ', names(c))));
}

const STAT = (s) => `+${s.added} ~${s.modified} -${s.deleted}`;

async function detail(pane, id) {
  const { checkpoint: c, changes } = await get(`/api/checkpoints/${encodeURIComponent(id)}`);
  const parent = c.parents?.[0] || '';
  if (!cmp) cmp = { from: parent, to: c.id };
  pane.replaceChildren(
    h('header', {},
      h('h2', {}, c.message || '(no message)'),
      h('p', { class: 'meta' }, h('span', { class: `kind ${c.kind}` }, c.kind), ' ', h('code', {}, short(c.id)), ' · ',
        timeEl(c.time), c.branch ? [' · on ', h('code', {}, c.branch)] : null, ' · ', STAT(c.stats), ' ', names(c)),
      c.meta?.session ? h('p', { class: 'meta' }, 'Session ', h('a', { href: `#/sessions/${c.meta.session}` }, c.meta.session),
        c.meta.turn ? `, turn ${c.meta.turn} (${c.meta.at || 'begin'})` : null) : null),
    h('section', { 'aria-label': 'Changes' }, h('h3', {}, 'Changes'),
      changes.length ? h('ul', { class: 'files' }, changes.map((f) => h('li', { class: f.status }, h('code', {}, f.path)))) : h('p', { class: 'empty' }, 'No changes.')),
    compareForm(c),
    h('div', { id: 'diff' }));
  await showDiff();
}

function option(value, label, selected) {
  return h('option', { value, selected }, label);
}

// compareForm chooses the two sides of the diff and its layout.
function compareForm(c) {
  const opts = (sel) => cps.map((x) => option(x.id, `${short(x.id)} ${x.message}`.slice(0, 60), x.id === sel));
  const from = h('select', { id: 'diff-from', 'aria-label': 'Compare from' },
    c.parents?.length ? null : option('', '(nothing)', true), opts(cmp.from));
  const to = h('select', { id: 'diff-to', 'aria-label': 'Compare to' }, option('', 'working tree', cmp.to === ''), opts(cmp.to));
  const layout = (m, label) => h('button', {
    type: 'button', id: `diff-${m}`, 'aria-pressed': String(mode === m),
    onclick: (e) => {
      mode = m;
      localStorage.setItem('ckpt-diff', m);
      for (const b of e.target.parentElement.children) b.setAttribute('aria-pressed', String(b === e.target));
      showDiff();
    },
  }, label);
  return h('form', {
    class: 'compare', 'aria-label': 'Compare',
    onsubmit: (e) => {
      e.preventDefault();
      cmp = { from: from.value, to: to.value };
      showDiff();
    },
  }, h('label', {}, 'From ', from), h('label', {}, 'to ', to),
  h('button', { type: 'submit', id: 'diff-show' }, 'Show diff'),
  h('button', { type: 'button', id: 'diff-worktree', onclick: () => { cmp = { from: c.id, to: '' }; from.value = c.id; to.value = ''; showDiff(); } }, 'Against the working tree'),
  h('span', { role: 'group', 'aria-label': 'Diff layout', class: 'toggle' }, layout('unified', 'Unified'), layout('split', 'Split')));
}

async function showDiff() {
  const out = document.getElementById('diff');
  if (!out) return;
  if (!cmp.from) {
    out.replaceChildren(h('p', { class: 'empty' }, 'The first checkpoint: pick another one to compare with.'));
    return;
  }
  try {
    const q = new URLSearchParams({ from: cmp.from, to: cmp.to, format: 'unified' });
    const text = await get(`/api/diff?${q}`);
    out.replaceChildren(diff.render(diff.parse(text), mode));
  } catch (err) {
    out.replaceChildren(errorBox(err));
  }
}
