// diff.js: the diff viewer. It reads git's unified diff (the API's
// format=unified, which has every file's lines, added and deleted ones
// too) and shows it per file, unified or side by side; binary files are
// summarized.
import { h, plural } from './lib.js';

// parse splits a unified diff into files: {path, status, binary,
// sizes, hunks: [{header, lines: [{op, text, old, new}]}]}.
export function parse(text) {
  const files = [];
  let f = null;
  let hunk = null;
  let oldN = 0;
  let newN = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('diff --git ')) {
      f = { path: gitPath(line.slice(11)), status: 'modified', binary: false, sizes: [], hunks: [] };
      files.push(f);
      hunk = null;
    } else if (!f) {
      continue;
    } else if (hunk && /^[ +\\-]/.test(line) && !line.startsWith('--- ') && !line.startsWith('+++ ')) {
      const op = line[0];
      if (op === '\\') continue; // "\ No newline at end of file"
      const l = { op, text: line.slice(1), old: op === '+' ? null : oldN++, new: op === '-' ? null : newN++ };
      hunk.lines.push(l);
    } else if (line.startsWith('@@')) {
      const m = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
      oldN = m ? +m[1] : 0;
      newN = m ? +m[2] : 0;
      hunk = { header: line, lines: [] };
      f.hunks.push(hunk);
    } else if (line.startsWith('new file mode')) {
      f.status = 'added';
    } else if (line.startsWith('deleted file mode')) {
      f.status = 'deleted';
    } else if (line.startsWith('GIT binary patch') || line.startsWith('Binary files')) {
      f.binary = true;
    } else if (f.binary && line.startsWith('literal ')) {
      f.sizes.push(+line.slice(8)); // the new side's size, then the old's
    } else if (line.startsWith('+++ b/')) {
      f.path = line.slice(6);
    } else if (line.startsWith('--- a/') && f.status === 'deleted') {
      f.path = line.slice(6);
    }
  }
  return files;
}

// gitPath reads the path of a "diff --git a/P b/P" line (quoted paths
// stay as git wrote them).
function gitPath(s) {
  const half = (s.length - 1) / 2;
  const a = s.slice(0, half);
  const b = s.slice(half + 1);
  if (Number.isInteger(half) && a.slice(2) === b.slice(2)) return b.startsWith('b/') ? b.slice(2) : b;
  return s;
}

const counts = (f) => {
  let add = 0;
  let del = 0;
  for (const hk of f.hunks) for (const l of hk.lines) { if (l.op === '+') add++; else if (l.op === '-') del++; }
  return { add, del };
};

// render shows files in mode 'unified' or 'split'.
export function render(files, mode) {
  if (files.length === 0) return h('p', { class: 'empty' }, 'No differences.');
  const total = files.map(counts).reduce((a, c) => ({ add: a.add + c.add, del: a.del + c.del }), { add: 0, del: 0 });
  return h('div', { class: `diff ${mode}` },
    h('p', { class: 'meta' }, plural(files.length, 'file'), ' changed, ',
      h('span', { class: 'add' }, `+${total.add}`), ' ', h('span', { class: 'del' }, `−${total.del}`)),
    files.map((f) => fileView(f, mode)));
}

function fileView(f, mode) {
  const c = counts(f);
  let body;
  if (f.binary) {
    const [nu, old] = f.sizes;
    const size = (n) => (n === undefined ? '?' : `${n} B`);
    const what = { added: `added, ${size(nu)}`, deleted: `deleted, was ${size(nu)}`, modified: `${size(old)} → ${size(nu)}` }[f.status];
    body = h('p', { class: 'binary' }, `Binary file ${what}; contents not shown.`);
  } else if (f.hunks.length === 0) {
    body = h('p', { class: 'empty' }, f.status === 'modified' ? 'Only the mode changed.' : 'Empty file.');
  } else {
    const cols = (mode === 'split' ? ['num', 'code', 'num', 'code'] : ['num', 'num', 'code']).map((c) => h('col', { class: c }));
    body = h('table', { class: 'hunks' }, h('colgroup', {}, cols), mode === 'split' ? splitRows(f) : unifiedRows(f));
  }
  return h('details', { class: `file ${f.status}`, open: true, 'data-path': f.path },
    h('summary', {}, h('span', { class: `status ${f.status}` }, f.status[0].toUpperCase()), ' ',
      h('code', {}, f.path), ' ', f.binary ? h('span', { class: 'chip' }, 'binary')
        : [h('span', { class: 'add' }, `+${c.add}`), ' ', h('span', { class: 'del' }, `−${c.del}`)]),
    body);
}

const num = (n) => h('td', { class: 'num' }, n === null || n === undefined ? '' : String(n));
const OPCLASS = { '+': 'add', '-': 'del', ' ': 'ctx' };

function unifiedRows(f) {
  return h('tbody', {}, f.hunks.map((hk) => [
    h('tr', { class: 'hunk' }, h('td', { colspan: 3 }, hk.header)),
    hk.lines.map((l) => h('tr', { class: OPCLASS[l.op] }, num(l.old), num(l.new),
      h('td', { class: 'code' }, h('span', { class: 'op', 'aria-hidden': 'true' }, l.op), l.text))),
  ]));
}

// splitRows pairs each run of deletions with the additions after it.
function splitRows(f) {
  const rows = [];
  for (const hk of f.hunks) {
    rows.push(h('tr', { class: 'hunk' }, h('td', { colspan: 4 }, hk.header)));
    const ls = hk.lines;
    for (let i = 0; i < ls.length;) {
      if (ls[i].op === ' ') {
        rows.push(pair(ls[i], ls[i]));
        i++;
        continue;
      }
      const dels = [];
      const adds = [];
      while (i < ls.length && ls[i].op === '-') dels.push(ls[i++]);
      while (i < ls.length && ls[i].op === '+') adds.push(ls[i++]);
      for (let k = 0; k < Math.max(dels.length, adds.length); k++) rows.push(pair(dels[k], adds[k]));
    }
  }
  return h('tbody', {}, rows);
}

function pair(l, r) {
  const side = (x, n) => [num(x ? x[n] : null),
    h('td', { class: `code ${x ? OPCLASS[x.op] : 'none'}` }, x ? x.text : '')];
  return h('tr', {}, side(l, 'old'), side(r, 'new'));
}
