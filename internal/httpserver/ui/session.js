// session.js: the session view — the sessions, one conversation by
// turn, and the rewind menu on every user message: each choice shows its
// plan (the API's dry run) before it is confirmed, then offers Undo.
import { h, get, post, short, timeEl, errorBox, plural, pathList, debounce } from './lib.js';
import { openMenu } from './menu.js';

let root = null;
let selected = ''; // the session on screen
let notice = null; // the last action's banner, kept across refreshes

export async function show(el, [id], fresh) {
  root = el;
  selected = id || '';
  if (fresh) notice = null;
  await refresh();
}

const SESSION_EVENTS = new Set(['turn-began', 'turn-ended', 'message', 'rewound', 'forked', 'summarized',
  'resync', 'cleared', 'undone', 'redone', 'restored']);
const reload = debounce(() => refresh().catch((err) => root.replaceChildren(errorBox(err))), 50);

export function onEvent(ev) {
  if (SESSION_EVENTS.has(ev.kind)) reload();
}

// refresh reads the sessions and the selected one's conversation again
// and redraws, keeping the focus where it was when it can.
async function refresh() {
  const [{ sessions }, status] = await Promise.all([get('/api/sessions'), get('/api/status?changes=false')]);
  sessions.sort((a, b) => Date.parse(b.updated) - Date.parse(a.updated));
  const currentID = status.session?.id || '';
  const id = selected || currentID || sessions[0]?.id;
  const detail = id ? await get(`/api/sessions/${encodeURIComponent(id)}`) : null;
  const focus = document.activeElement?.id;
  root.replaceChildren(h('div', { class: 'cols' },
    h('nav', { class: 'list', 'aria-label': 'Sessions' },
      h('h2', {}, 'Sessions'),
      sessions.length === 0 ? h('p', { class: 'empty' }, 'No sessions yet: an agent with ckpt hooks, or ckpt session new, starts one.') : null,
      h('ul', {}, sessions.map((s) => sessionItem(s, detail?.session.id === s.id, s.id === currentID)))),
    detail ? conversation(detail, detail.session.id === currentID) : h('section', { class: 'pane' })));
  if (focus) document.getElementById(focus)?.focus();
}

function sessionItem(s, on, current) {
  return h('li', {},
    h('a', { href: `#/sessions/${s.id}`, 'aria-current': on ? 'true' : null, class: 'item' },
      h('span', { class: 'title' }, s.title || short(s.id)),
      h('span', { class: 'meta' }, plural(s.turns.length, 'turn'), ' · ', timeEl(s.updated),
        current ? h('span', { class: 'chip' }, 'current') : null)));
}

// conversation is the session's messages grouped by turn.
function conversation(d, current) {
  const s = d.session;
  const byTurn = new Map();
  for (const m of d.messages) {
    if (!byTurn.has(m.turn)) byTurn.set(m.turn, []);
    byTurn.get(m.turn).push(m);
  }
  const turns = d.turns.map((t) => turnSection(s, t, byTurn.get(t.n) || []));
  const orphans = byTurn.get(0) || [];
  return h('section', { class: 'pane conversation', 'aria-label': `Conversation ${s.title}` },
    h('header', {},
      h('h2', {}, s.title || short(s.id)),
      h('p', { class: 'meta' }, h('code', {}, short(s.id)),
        s.agent ? ` · ${s.agent}` : null,
        s.branch ? [' · branch ', h('code', {}, s.branch)] : null,
        s.parent ? [' · forked from ', h('a', { href: `#/sessions/${s.parent}` }, short(s.parent)), ` at turn ${s.fork_turn}`] : null,
        current ? h('span', { class: 'chip' }, 'current') : null)),
    notice,
    orphans.map(message),
    turns.length === 0 ? h('p', { class: 'empty' }, 'No turns yet.') : turns);
}

function turnSection(s, t, msgs) {
  const files = t.files || [];
  return h('section', { class: `turn${t.open ? ' open' : ''}`, 'data-turn': t.n, 'aria-label': `Turn ${t.n}` },
    h('h3', {}, `Turn ${t.n}`, t.summary ? h('span', { class: 'chip' }, 'summary') : null,
      t.open ? h('span', { class: 'chip live' }, 'in progress') : null, ' ', timeEl(t.time)),
    msgs.map((m) => message(m, s, t)),
    files.length ? h('ul', { class: 'files', 'aria-label': `Files turn ${t.n} changed` },
      files.map((f) => h('li', { class: f.status }, h('code', {}, f.path)))) : null);
}

const ROLE = { user: 'You', assistant: 'Agent', tool: 'Tool', system: 'System', summary: 'Summary' };

function message(m, s, t) {
  const user = m.role === 'user' && s && t;
  return h('article', { class: `msg ${m.role}`, 'data-seq': m.seq },
    h('div', { class: 'who' }, ROLE[m.role] || m.role, m.tool ? ` · ${m.tool}` : null,
      user ? rewindButton(s, t) : null),
    h('div', { class: 'body' }, m.content));
}

// The rewind menu's choices. Each makes a plan: what the dialog shows
// and what Confirm runs.
const CHOICES = [
  { label: 'Rewind code', plan: (s, t) => rewindPlan(s, t, 'code') },
  { label: 'Rewind conversation', plan: (s, t) => rewindPlan(s, t, 'conversation') },
  { label: 'Rewind code and conversation', plan: (s, t) => rewindPlan(s, t, 'both') },
  { label: 'Fork from here', plan: forkPlan },
  { label: 'Summarize from here', plan: (s, t) => summarizePlan(s, t, 'from') },
  { label: 'Summarize up to here', plan: (s, t) => summarizePlan(s, t, 'upto') },
];

function rewindButton(s, t) {
  const b = h('button', {
    type: 'button', class: 'rewind', id: `rewind-${t.n}`, 'aria-haspopup': 'menu', 'aria-expanded': 'false',
    'aria-label': `Rewind to before turn ${t.n}…`, title: `Rewind to before turn ${t.n}`,
  }, '⟲ Rewind');
  b.addEventListener('click', () => openMenu(b, CHOICES.map((c) => ({
    label: c.label,
    run: () => choose(c, s, t),
  }))));
  return b;
}

// choose asks for the choice's plan, shows it, and runs it if confirmed.
async function choose(choice, s, t) {
  let plan;
  try {
    plan = await choice.plan(s, t);
  } catch (err) {
    setNotice(errorBox(err));
    return;
  }
  if (!(await confirmPlan(plan))) return;
  try {
    const res = await plan.run();
    setNotice(plan.done(res));
    if (plan.next) location.hash = plan.next(res);
  } catch (err) {
    setNotice(errorBox(err));
  }
}

function setNotice(el) {
  notice = el;
  reload();
}

function rewindPath(s) {
  return `/api/sessions/${encodeURIComponent(s.id)}/rewind`;
}

async function rewindPlan(s, t, scope) {
  const req = { turn: t.n, scope };
  const p = await post(rewindPath(s), { ...req, dry_run: true });
  const what = { code: 'the code', conversation: 'the conversation', both: 'the code and the conversation' }[scope];
  return {
    title: `Rewind ${what} to before turn ${t.n}`,
    body: rewindDetails(p),
    confirm: 'Rewind',
    run: () => post(rewindPath(s), req),
    done: (r) => banner(`Rewound ${what} to before turn ${t.n}.`, r.restore ? 'Undo' : null),
  };
}

// rewindDetails shows a rewind's result or plan: files to change, user
// edits kept, conflicts, the conversation's part.
function rewindDetails(p) {
  const actions = (p.restore?.actions || []).filter((a) => a.action !== 'keep');
  const parts = [];
  if (p.scope !== 'conversation') {
    parts.push(actions.length
      ? pathList('Files to change', actions.map((a) => h('li', {}, h('span', { class: `op ${a.action}` }, a.action), ' ', h('code', {}, a.path))), 'change')
      : h('p', {}, 'No file changes.'));
    parts.push(pathList('Your edits kept', p.kept, 'kept'));
    parts.push(pathList('Conflicts (your side is kept)', p.conflicts, 'conflict'));
    parts.push(pathList('Changed by another session too (left as they are)', p.shared, 'shared'));
    if (p.in_progress?.length) parts.push(h('p', { class: 'warn' }, `Turns still in progress: ${p.in_progress.join(', ')} — everything changed since they began counts as the agent's.`));
  }
  if (p.scope !== 'code') {
    parts.push(h('p', {}, `The conversation loses ${plural(p.turns, 'turn')} (${plural(p.messages, 'message')}).`));
    if (p.prompt) parts.push(h('p', {}, 'The prompt to send again: ', h('q', {}, p.prompt)));
  }
  return parts;
}

async function forkPlan(s, t) {
  // What the workspace's files become: the turn's start.
  const d = await get(`/api/diff?from=${encodeURIComponent(t.begin)}`);
  const files = [
    ...d.added.map((p) => ['delete', p]),
    ...d.modified.map((m) => ['update', m.path]),
    ...d.deleted.map((p) => ['create', p]),
  ].map(([op, p]) => h('li', {}, h('span', { class: `op ${op}` }, op), ' ', h('code', {}, p)));
  return {
    title: `Fork from turn ${t.n}`,
    body: [
      h('p', {}, `A new session with the conversation before turn ${t.n}, on a branch of its own; it becomes the current session. `,
        `“${s.title}” and its branch stay as they are. The workspace moves to the start of turn ${t.n} (its present state is checkpointed first).`),
      files.length ? pathList('Files to change', files, 'change') : h('p', {}, 'No file changes.'),
    ],
    confirm: 'Fork',
    run: () => post(`/api/sessions/${encodeURIComponent(s.id)}/fork`, { turn: t.n }),
    done: (r) => banner(`Forked at turn ${t.n}: session ${short(r.session.id)} on ${r.session.branch}.`, r.switch ? 'Undo' : null),
    next: (r) => `#/sessions/${r.session.id}`,
  };
}

function summarizePlan(s, t, direction) {
  const last = s.turns.length;
  const [first, end] = direction === 'from' ? [t.n, last] : [1, t.n];
  return {
    title: direction === 'from' ? `Summarize from turn ${t.n}` : `Summarize up to turn ${t.n}`,
    body: [h('p', {}, `Turns ${first}–${end} (${plural(end - first + 1, 'turn')}) are replaced in the conversation by one turn holding their summary. `,
      'No file changes; the messages are kept in the store, hidden.')],
    confirm: 'Summarize',
    run: () => post(`/api/sessions/${encodeURIComponent(s.id)}/summarize`, { turn: t.n, direction }),
    done: (r) => banner(`Summarized turns ${r.first_turn}–${r.last_turn}.`),
  };
}

// banner reports what was done, with an Undo button when the workspace
// moved (POST /api/undo takes that back).
function banner(text, undo) {
  const el = h('div', { class: 'notice', role: 'status' }, h('span', {}, text));
  if (undo) {
    el.append(' ', h('button', {
      type: 'button', id: 'undo', class: 'primary',
      onclick: async () => {
        try {
          const r = await post('/api/undo');
          setNotice(banner(`Undone: the workspace is back at ${short(r.target?.id || r.head)}.`));
        } catch (err) {
          setNotice(errorBox(err));
        }
      },
    }, undo));
  }
  return el;
}

// confirmPlan shows a plan in the dialog; it resolves true on Confirm,
// false on Cancel or Escape.
function confirmPlan(plan) {
  const dlg = document.getElementById('plan');
  document.getElementById('plan-title').textContent = plan.title;
  document.getElementById('plan-body').replaceChildren(...[plan.body].flat().filter(Boolean));
  const ok = document.getElementById('plan-confirm');
  const cancel = document.getElementById('plan-cancel');
  ok.textContent = plan.confirm;
  const opener = document.activeElement;
  return new Promise((resolve) => {
    const finish = (v) => {
      ok.onclick = cancel.onclick = dlg.onclose = null;
      if (dlg.open) dlg.close();
      resolve(v);
      if (!v) opener?.focus?.();
    };
    ok.onclick = () => finish(true);
    cancel.onclick = () => finish(false);
    dlg.onclose = () => finish(false);
    dlg.showModal();
    ok.focus();
  });
}
