// app.js: the page's frame — routes (#/sessions/ID, #/timeline/REV, #/store),
// the theme toggle, and the event stream that keeps the views live.
import { base, errorBox } from './lib.js';
import * as sessions from './session.js';
import * as timeline from './timeline.js';
import * as store from './store.js';

const views = { sessions, timeline, store };
const main = document.getElementById('main');
let current = null;

// route shows the view the address names.
async function route() {
  const [name, ...args] = location.hash.replace(/^#\/?/, '').split('/');
  const key = views[name] ? name : 'sessions';
  for (const a of document.querySelectorAll('nav a')) {
    if (a.dataset.view === key) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  const view = views[key];
  const fresh = view !== current;
  current = view;
  try {
    await view.show(main, args.map(decodeURIComponent), fresh);
  } catch (err) {
    main.replaceChildren(errorBox(err));
  }
}
window.addEventListener('hashchange', route);

// The theme: the system's (prefers-color-scheme) until the toggle picks
// one, remembered in localStorage.
const themeButton = document.getElementById('theme');
const dark = () => {
  const t = document.documentElement.dataset.theme;
  return t ? t === 'dark' : matchMedia('(prefers-color-scheme: dark)').matches;
};
function applyTheme(t) {
  if (t) document.documentElement.dataset.theme = t;
  const other = dark() ? 'light' : 'dark';
  themeButton.setAttribute('aria-label', `Switch to the ${other} theme`);
  themeButton.title = `Switch to the ${other} theme`;
}
applyTheme(localStorage.getItem('ckpt-theme'));
themeButton.addEventListener('click', () => {
  const t = dark() ? 'light' : 'dark';
  localStorage.setItem('ckpt-theme', t);
  applyTheme(t);
});

// The event stream: every event goes to the view on screen. EventSource
// reconnects by itself, sending Last-Event-ID.
const KINDS = ['checkpoint', 'restored', 'undone', 'redone', 'recovered', 'switched', 'branch', 'tag',
  'gc', 'cleared', 'snapshot-created', 'snapshot-deleted', 'turn-began', 'turn-ended', 'message',
  'rewound', 'forked', 'summarized', 'resync'];
const live = document.getElementById('live');
const events = new EventSource(`${base}/api/events`);
events.onopen = () => { live.textContent = 'live'; live.className = 'live on'; };
events.onerror = () => { live.textContent = 'reconnecting…'; live.className = 'live off'; };
for (const kind of KINDS) {
  events.addEventListener(kind, (e) => {
    const ev = JSON.parse(e.data);
    document.documentElement.dataset.lastEvent = ev.id; // for tests and the curious
    current?.onEvent?.(ev);
  });
}

route();
