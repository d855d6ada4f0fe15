// lib.js: the API client and a few DOM helpers shared by the views.

// APIError is a failed request: the server's {code, message, hint}.
export class APIError extends Error {
  constructor(status, body) {
    super(body.message || `HTTP ${status}`);
    this.status = status;
    this.code = body.code || 'error';
    this.hint = body.hint || '';
  }
}

// base is the path the workspace's API is under: "" when the server
// serves one workspace, /w/ID under ckpt serve --all. Paths given to
// api, get and post are the API's own (/api/...), without it.
export const base = document.querySelector('meta[name="ckpt-base"]')?.content || '';

// api sends a request with the session cookie and returns the answer:
// parsed JSON, or text (a unified diff).
export async function api(method, path, body) {
  const opts = { method, credentials: 'same-origin', headers: {} };
  if (body !== undefined) {
    opts.headers['Content-Type'] = 'application/json';
    opts.body = JSON.stringify(body);
  }
  const r = await fetch(base + path, opts);
  const json = (r.headers.get('Content-Type') || '').startsWith('application/json');
  if (!r.ok) throw new APIError(r.status, json ? await r.json() : {});
  return json ? r.json() : r.text();
}

export const get = (path) => api('GET', path);
export const post = (path, body = {}) => api('POST', path, body);

// h makes an element: h('a', {href: '#', class: 'x', onclick: f}, 'text', child).
// Text is always text: nothing from the server is parsed as HTML.
export function h(tag, props, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  el.append(...kids.flat(Infinity).filter((k) => k !== undefined && k !== null && k !== false));
  return el;
}

export const short = (id) => (id || '').slice(0, 12);

// ago says how long ago an RFC 3339 time was, roughly.
export function ago(time) {
  const s = (Date.now() - Date.parse(time)) / 1000;
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return new Date(time).toLocaleDateString();
}

// timeEl is a <time> showing ago(time), the full time on hover.
export const timeEl = (time) => h('time', { datetime: time, title: new Date(time).toLocaleString() }, ago(time));

// errorBox shows an API error with its hint.
export function errorBox(err) {
  if (!(err instanceof APIError)) console.error(err); // a bug of the page's
  return h('div', { class: 'error', role: 'alert' },
    h('strong', {}, 'ckpt: '), err.message,
    err.hint ? h('div', { class: 'hint' }, 'hint: ', err.hint) : null);
}

// plural: plural(2, 'file') is "2 files".
export const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

// pathList is a list of paths under a heading, or nothing when empty.
export function pathList(title, items, cls) {
  if (!items || items.length === 0) return null;
  return h('section', { class: `paths ${cls || ''}` },
    h('h3', {}, title, ' ', h('span', { class: 'count' }, `(${items.length})`)),
    h('ul', {}, items.map((it) => (typeof it === 'string' ? h('li', {}, h('code', {}, it)) : it))));
}

// debounce runs fn once per burst of calls, wait ms after the last.
export function debounce(fn, wait) {
  let t;
  return (...args) => {
    clearTimeout(t);
    t = setTimeout(() => fn(...args), wait);
  };
}
