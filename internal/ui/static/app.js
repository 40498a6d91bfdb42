'use strict';
// The session inspector: reads the HTTP API and writes what it reads into
// the page as text nodes only (never innerHTML), so that titles, URLs,
// snapshots and console messages, which pages control, stay text.

const app = document.getElementById('app');
const statusLine = document.getElementById('status');
const POLL_MS = 2000;
let poll = null;
let stateFilter = '';

// el builds an element; strings among children become text nodes.
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : String(c));
  }
  return e;
}

function show(...nodes) {
  app.replaceChildren(...nodes.filter((n) => n !== null && n !== undefined));
}

class Unauthorized extends Error {}

async function api(path, options) {
  const r = await fetch(path, Object.assign({ headers: { Accept: 'application/json' }, credentials: 'same-origin' }, options));
  if (r.status === 401) throw new Unauthorized('token required');
  if (r.ok && r.status === 204) return null;
  if (!r.ok) {
    let msg = 'HTTP ' + r.status;
    try {
      const b = await r.json();
      msg = b.error + ': ' + b.message;
    } catch (e) { /* not JSON */ }
    throw new Error(msg);
  }
  return r.json();
}

function when(ts) {
  if (!ts) return '';
  const d = new Date(ts);
  return isNaN(d) ? '' : d.toLocaleString();
}

function megabytes(n) {
  return n ? (n / 1048576).toFixed(0) + ' MB' : '';
}

function short(s, n) {
  s = String(s == null ? '' : s);
  return s.length > n ? s.slice(0, n) + '…' : s;
}

function sessionLink(id) {
  return el('a', { href: '#/session/' + encodeURIComponent(id) }, short(id, 8));
}

// liveURL is a session's live view, a page of its own beside this one.
function liveURL(id) {
  return 'sessions/' + encodeURIComponent(id) + '/live';
}

// The title counts the sessions whose agent waits for a person, so that a
// background tab shows it.
const baseTitle = document.title;
function countWaiting(sessions) {
  const n = sessions.filter((s) => s.waiting).length;
  document.title = (n ? '(' + n + ' waiting) ' : '') + baseTitle;
}

function profileLink(name) {
  return el('a', { href: '#/profiles/' + encodeURIComponent(name) }, name);
}

function every(f) {
  stopPolling();
  const tick = () => f().catch(fail);
  tick();
  poll = setInterval(tick, POLL_MS);
}

function stopPolling() {
  if (poll) clearInterval(poll);
  poll = null;
}

function fail(e) {
  if (e instanceof Unauthorized) {
    stopPolling();
    login();
    return;
  }
  statusLine.textContent = String(e.message || e);
}

// --- token

function login() {
  const input = el('input', { type: 'password', name: 'token', id: 'token', autocomplete: 'current-password', required: '' });
  const error = el('p', { class: 'error', id: 'login-error' });
  const form = el('form', { id: 'login' },
    el('h1', {}, 'Token required'),
    el('p', {}, 'This server requires its PROXY_AUTH_TOKEN. It is kept in an HttpOnly cookie for this site only.'),
    el('label', { for: 'token' }, 'Token '), input, ' ', el('button', { type: 'submit' }, 'Sign in'), error);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const r = await fetch('/ui/login', {
      method: 'POST', credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ token: input.value }),
    });
    if (r.ok) {
      route();
    } else {
      error.textContent = 'That token is not the server\'s.';
    }
  });
  show(form);
  input.focus();
}

// --- sessions

function sessionsView() {
  const filter = el('select', { id: 'state-filter' },
    ...['', 'active', 'suspended', 'closed', 'error'].map((s) => el('option', { value: s }, s || 'all states')));
  filter.value = stateFilter;
  filter.addEventListener('change', () => { stateFilter = filter.value; refresh().catch(fail); });
  const body = el('tbody');
  const table = el('table', { id: 'sessions' },
    el('thead', {}, el('tr', {}, ...['Session', 'State', 'Title', 'URL', 'Created', 'Last activity', 'Worker memory', 'Node', 'Profile', ''].map((h) => el('th', {}, h)))),
    body);
  show(el('h1', {}, 'Sessions'), el('p', {}, el('label', { for: 'state-filter' }, 'Show '), filter), table);
  async function refresh() {
    const { sessions } = await api('/sessions');
    countWaiting(sessions);
    const rows = sessions
      .filter((s) => !stateFilter || s.state === stateFilter)
      .sort((a, b) => String(b.last_activity).localeCompare(String(a.last_activity)))
      .map((s) => {
        const md = s.metadata || {};
        return el('tr', { 'data-session': s.session_id },
          el('td', {}, sessionLink(s.session_id)),
          el('td', { class: 'state ' + s.state }, s.state, s.control ? el('div', { class: 'control' }, 'a person holds control') : null,
            s.waiting ? el('div', { class: 'waiting-reason', title: 'the agent waits for a person (request_human)' }, 'waiting: ' + s.waiting.reason) : null),
          el('td', { class: 'title' }, short(md.last_title, 80)),
          el('td', { class: 'url' }, short(md.last_url, 100)),
          el('td', {}, when(s.created_at)),
          el('td', {}, when(s.last_activity)),
          el('td', {}, megabytes(s.rss_bytes)),
          el('td', {}, s.node || ''),
          el('td', { class: 'profile' }, s.profile ? profileLink(s.profile) : ''),
          el('td', { class: 'live' }, s.state === 'active' || s.waiting ? el('a', { href: liveURL(s.session_id), class: 'live-link' }, 'Live') : ''));
      });
    body.replaceChildren(...(rows.length ? rows : [el('tr', {}, el('td', { colspan: '10' }, 'No sessions.'))]));
    statusLine.textContent = 'updated ' + new Date().toLocaleTimeString();
  }
  every(refresh);
}

// --- one session's timeline

function exportLinks(id) {
  const base = '/sessions/' + encodeURIComponent(id) + '/export?format=';
  return el('p', { class: 'exports' },
    el('a', { href: base + 'playwright', download: '', id: 'export-playwright' }, 'Export as a Playwright test'), ' · ',
    el('a', { href: base + 'json', download: '', id: 'export-json' }, 'Export the record (JSON)'));
}

async function record(id) {
  return api('/sessions/' + encodeURIComponent(id) + '/export?format=json&snapshots=false');
}

function sessionView(id) {
  const head = el('div');
  const body = el('tbody');
  const table = el('table', { id: 'timeline' },
    el('thead', {}, el('tr', {}, ...['Time', 'Tool', 'Arguments', 'Status', 'Error', 'ms', 'Page'].map((h) => el('th', {}, h)))),
    body);
  show(el('p', {}, el('a', { href: '#/' }, '← sessions')), head, exportLinks(id), table);
  async function refresh() {
    const rec = await record(id);
    const s = rec.session;
    head.replaceChildren(el('h1', {}, 'Session ', el('code', {}, s.session_id)),
      el('p', {}, el('span', { class: 'state ' + s.state }, s.state), ' · created ', when(s.created_at), ' · last activity ', when(s.last_activity),
        s.state === 'active' ? ' · ' : null, s.state === 'active' ? el('a', { href: liveURL(s.session_id), id: 'live-link' }, 'Live view') : null),
      ...(s.profile ? [sessionProfile(s)] : []));
    // Calls and what happened between them (suspends, lost workers,
    // restarts, restored state), in time order.
    const items = rec.calls.map((c) => ({ at: c.request.timestamp, call: c }))
      .concat((rec.events || []).map((e) => ({ at: e.at, event: e })))
      .sort((a, b) => new Date(a.at) - new Date(b.at));
    // A call is marked restored when its session got its saved state back
    // in a new worker since the previous call ended: before it, or while
    // it waited for its worker.
    const restores = (rec.events || []).filter((e) => e.kind === 'state_restored' || e.kind === 'resumed').map((e) => new Date(e.at));
    const restored = new Set();
    let prevEnd = new Date(0);
    for (const c of rec.calls) {
      const end = new Date(c.response ? c.response.timestamp : c.request.timestamp);
      if (restores.some((t) => t > prevEnd && t <= end)) restored.add(c.request.ref_id);
      prevEnd = end;
    }
    const rows = items.map(({ call: c, event: e }) => {
      if (e) {
        return el('tr', { class: 'event ' + e.kind, 'data-event': e.kind },
          el('td', { class: 'when' }, when(e.at)),
          el('td', { class: 'kind' }, e.kind.replace('_', ' ')),
          el('td', { colspan: '5' }, e.detail || ''));
      }
      const resp = c.response;
      const status = resp ? resp.status : 'in flight';
      return el('tr', { class: 'call ' + status.replace(' ', '-'), 'data-ref': c.request.ref_id },
        el('td', { class: 'when' }, when(c.request.timestamp)),
        el('td', {}, el('a', { href: '#/call/' + encodeURIComponent(id) + '/' + encodeURIComponent(c.request.ref_id) }, c.request.tool_name),
          restored.has(c.request.ref_id) ? el('span', { class: 'restored', title: 'the session came back in a new worker with its saved state before this call: refs from before are stale' }, ' restored') : null),
        el('td', { class: 'args' }, short(JSON.stringify(c.request.params || {}), 160)),
        el('td', { class: 'status' }, status),
        el('td', { class: 'error' }, resp && resp.error_code ? el('code', {}, resp.error_code) : null, resp && resp.error_code ? ' ' : null, resp ? short(resp.error_message, 200) : ''),
        el('td', { class: 'num' }, resp ? c.duration_ms : ''),
        el('td', {}, short(c.page_title || c.page_url || '', 80)));
    });
    body.replaceChildren(...(rows.length ? rows : [el('tr', {}, el('td', { colspan: '7' }, 'No calls yet.'))]));
    statusLine.textContent = 'updated ' + new Date().toLocaleTimeString();
  }
  every(refresh);
}

// sessionProfile says which login profile a session started from and
// whether it writes its state back to it.
function sessionProfile(s) {
  return el('p', { id: 'session-profile' }, 'Started from profile ', profileLink(s.profile),
    s.profile_version ? ' (version ' + s.profile_version + ')' : '', ' · ',
    s.profile_write ? 'writes its state back when it closes or is suspended' : 'does not write back');
}

// --- one call: its snapshot (searchable, with what changed), console, images

async function peek(ref) {
  return api('/content/' + encodeURIComponent(ref) + '?peek=true');
}

function callView(id, ref) {
  stopPolling();
  show(el('p', {}, el('a', { href: '#/session/' + encodeURIComponent(id) }, '← timeline')), el('p', {}, 'Loading…'));
  (async () => {
    const rec = await record(id);
    const i = rec.calls.findIndex((c) => c.request.ref_id === ref);
    if (i < 0) throw new Error('no call ' + ref + ' in this session');
    const call = rec.calls[i];
    let prev = null;
    for (let j = i - 1; j >= 0; j--) {
      if (rec.calls[j].snapshot_bytes > 0) { prev = rec.calls[j]; break; }
    }
    const content = await peek(ref);
    const before = prev && content.snapshot ? await peek(prev.request.ref_id) : null;
    const old = new Set(before ? before.text.split('\n') : []);

    const search = el('input', { type: 'search', id: 'search', placeholder: 'Search the snapshot' });
    const count = el('span', { id: 'search-count' });
    const lines = content.text.split('\n').map((line) => el('div', { class: 'line' + (before && !old.has(line) ? ' added' : '') }, line || ' '));
    const tree = el('div', { id: 'snapshot', class: 'snapshot' }, ...lines);
    search.addEventListener('input', () => {
      const q = search.value.toLowerCase();
      let n = 0;
      for (const l of lines) {
        const hit = q !== '' && l.textContent.toLowerCase().includes(q);
        l.classList.toggle('hit', hit);
        l.hidden = q !== '' && !hit;
        if (hit) n++;
      }
      count.textContent = q ? n + ' matching lines' : '';
    });

    const level = el('select', { id: 'console-level' }, ...['', 'info', 'warn', 'error'].map((l) => el('option', { value: l }, l || 'all levels')));
    const consoleText = el('pre', { id: 'console', class: 'console' });
    async function loadConsole() {
      const r = await fetch('/console/' + encodeURIComponent(ref) + '?level=' + encodeURIComponent(level.value), { credentials: 'same-origin' });
      if (r.status === 401) throw new Unauthorized('token required');
      consoleText.textContent = r.ok ? (await r.text()) || '(no console messages)' : 'HTTP ' + r.status;
    }
    level.addEventListener('change', () => loadConsole().catch(fail));

    const images = (content.images || [])
      .filter((im) => /^image\/(png|jpeg|webp|gif)$/.test(im.mime_type))
      .map((im, k) => el('img', { class: 'shot', alt: 'screenshot ' + (k + 1), src: 'data:' + im.mime_type + ';base64,' + im.data }));

    const resp = call.response || {};
    show(
      el('p', {}, el('a', { href: '#/session/' + encodeURIComponent(id) }, '← timeline')),
      el('h1', {}, call.request.tool_name, ' ', el('code', {}, ref)),
      el('p', {}, resp.status || 'in flight', ' · ', when(call.request.timestamp), ' · ', call.duration_ms, ' ms', call.page_url ? ' · ' : '', short(call.page_url, 120)),
      el('pre', { class: 'args' }, JSON.stringify(call.request.params || {}, null, 2)),
      resp.error_message ? el('p', { class: 'error' }, resp.error_message) : null,
      call.code ? el('details', {}, el('summary', {}, 'Playwright code'), el('pre', { class: 'code' }, call.code)) : null,
      images.length ? el('section', {}, el('h2', {}, 'Screenshots'), ...images) : null,
      el('section', {}, el('h2', {}, content.snapshot ? 'Page snapshot' : 'Result'),
        before ? el('p', { class: 'legend' }, 'Highlighted: lines not in the previous snapshot (', el('a', { href: '#/call/' + encodeURIComponent(id) + '/' + encodeURIComponent(prev.request.ref_id) }, prev.request.tool_name), ').') : null,
        el('p', {}, search, ' ', count), tree),
      el('section', {}, el('h2', {}, 'Console'), el('p', {}, el('label', { for: 'console-level' }, 'Level '), level), consoleText));
    await loadConsole();
  })().catch(fail);
}

// --- login profiles: their metadata only. A profile's contents (cookies,
// tokens) never come into this page: /profiles/{name}/state is not read
// here, and an imported file goes from the file input to the API unread.

const PROFILE_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

// expiry is when a profile's first persistent cookie expires, marked
// expired when that is past: a login it holds may have ended.
function expiry(ts) {
  if (!ts) return el('span', { class: 'note', title: 'no persistent cookies' }, 'none');
  const d = new Date(ts);
  if (isNaN(d)) return '';
  const past = d.getTime() <= Date.now();
  return el('span', {}, d.toLocaleDateString(), past ? ' ' : null, past ? el('span', { class: 'expired' }, 'expired') : null);
}

function profilesView(selected) {
  const body = el('tbody');
  const message = el('p', { id: 'profiles-message', role: 'status' });
  const table = el('table', { id: 'profiles' },
    el('thead', {}, el('tr', {}, ...['Profile', 'Origins', 'Version', 'Updated', 'Cookies expire', 'Sessions', ''].map((h) => el('th', {}, h)))),
    body);
  let profiles = [];
  let confirming = ''; // the profile whose Delete was clicked once
  let shown = '';

  function say(text, isError) {
    message.className = isError ? 'error' : 'note';
    message.textContent = text;
  }

  async function remove(name) {
    confirming = '';
    try {
      await api('/profiles/' + encodeURIComponent(name), { method: 'DELETE' });
      say('Deleted profile ' + name + '. Sessions started from it keep their own copy.', false);
    } catch (e) {
      if (e instanceof Unauthorized) throw e;
      say('Could not delete ' + name + ': ' + (e.message || e), true);
    }
    await refresh();
  }

  function deleteCell(p) {
    if (confirming !== p.name) {
      return el('td', {}, el('button', { type: 'button', class: 'danger', 'data-action': 'delete', title: 'Delete profile ' + p.name, onclick: () => { confirming = p.name; render(); } }, 'Delete'));
    }
    return el('td', {},
      el('button', { type: 'button', class: 'danger confirm', 'data-action': 'really-delete', onclick: () => remove(p.name).catch(fail) }, 'Really delete ' + p.name + '?'),
      ' ', el('button', { type: 'button', 'data-action': 'cancel', onclick: () => { confirming = ''; render(); } }, 'Cancel'));
  }

  // render writes the rows again only when something in them changed, so
  // that a poll does not replace a button under the pointer.
  function render() {
    const key = JSON.stringify([profiles, confirming]);
    if (key === shown) return;
    shown = key;
    const rows = profiles.map((p) => {
      const sessions = (p.sessions || []).flatMap((id, i) => (i ? [', ', sessionLink(id)] : [sessionLink(id)]));
      return el('tr', { 'data-profile': p.name, class: p.name === selected ? 'current' : '' },
        el('td', { class: 'name' }, el('code', {}, p.name)),
        el('td', { class: 'origins' }, (p.origins || []).join(', ')),
        el('td', { class: 'num version' }, p.version),
        el('td', { class: 'when' }, when(p.updated_at)),
        el('td', { class: 'expiry' }, expiry(p.cookies_expire_at)),
        el('td', { class: 'sessions' }, ...sessions),
        deleteCell(p));
    });
    body.replaceChildren(...(rows.length ? rows : [el('tr', {}, el('td', { colspan: '7' }, 'No profiles. Save one from a session (save_profile), or import a storage state below.'))]));
  }

  async function refresh() {
    const r = await api('/profiles');
    profiles = (r && r.profiles) || [];
    if (confirming && !profiles.some((p) => p.name === confirming)) confirming = '';
    render();
    statusLine.textContent = 'updated ' + new Date().toLocaleTimeString();
  }

  const name = el('input', { type: 'text', id: 'import-name', name: 'name', required: '', maxlength: '64', placeholder: 'github', autocomplete: 'off', spellcheck: 'false' });
  const file = el('input', { type: 'file', id: 'import-file', name: 'file', required: '', accept: '.json,application/json' });
  const form = el('form', { id: 'import' },
    el('h2', {}, 'Import a storage state'),
    el('p', { class: 'note' }, 'A Playwright storage state, as ', el('code', {}, 'playwright codegen --save-storage=auth.json'),
      ' or ', el('code', {}, 'context.storageState()'), ' write it. An existing profile gets it as its next version.'),
    el('p', {}, el('label', { for: 'import-name' }, 'Name '), name, ' ', el('label', { for: 'import-file' }, 'File '), file, ' ', el('button', { type: 'submit' }, 'Import')));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    (async () => {
      const n = name.value.trim();
      if (!PROFILE_NAME.test(n)) {
        say('"' + n + '" is not a profile name: 1 to 64 of a-z, 0-9, ".", "_", "-", starting with a letter or digit.', true);
        return;
      }
      if (!file.files.length) {
        say('Choose a storage-state file.', true);
        return;
      }
      try {
        const p = await api('/profiles/' + encodeURIComponent(n), {
          method: 'PUT',
          headers: { Accept: 'application/json', 'Content-Type': 'application/json' },
          body: await file.files[0].text(),
        });
        say('Imported profile ' + p.name + ', version ' + p.version + '.', false);
        form.reset();
      } catch (e) {
        if (e instanceof Unauthorized) throw e;
        say('Could not import ' + n + ': ' + (e.message || e), true);
      }
      await refresh();
    })().catch(fail);
  });

  show(el('h1', {}, 'Profiles'),
    el('p', { class: 'note' }, 'Saved logins: a session started from one gets a copy of its cookies and storage. Their contents are never shown here.'),
    message, table, form);
  every(refresh);
}

// --- routing

function route() {
  statusLine.textContent = '';
  let parts = [];
  try {
    parts = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  } catch (e) { /* a malformed address shows the list */ }
  for (const a of document.querySelectorAll('header nav a')) {
    a.classList.toggle('current', (a.id === 'nav-profiles') === (parts[0] === 'profiles'));
  }
  if (parts[0] === 'profiles') profilesView(parts[1] || '');
  else if (parts[0] === 'session' && parts[1]) sessionView(parts[1]);
  else if (parts[0] === 'call' && parts[1] && parts[2]) callView(parts[1], parts[2]);
  else sessionsView();
}

window.addEventListener('hashchange', route);
route();
