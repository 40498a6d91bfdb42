'use strict';
// One session's live view: its current tab as frames over the session's
// live WebSocket, its tabs, who holds control, and, for the person who took
// control, their mouse and keys sent to the page. Everything the server or
// the page says is written as text, never as markup.

const match = location.pathname.match(/\/sessions\/([^/]+)\/live$/);
const sessionID = match ? decodeURIComponent(match[1]) : '';
const base = '/sessions/' + encodeURIComponent(sessionID);
const $ = (id) => document.getElementById(id);
const frame = $('frame');
const noFrame = $('no-frame');
const stateLine = $('live-state');
const message = $('live-message');
const statusLine = $('status');
const takeButton = $('take-control');
const handBackButton = $('hand-back');
const profileForm = $('profile-form');
const profileName = $('profile-name');

// Named keys go to the page as key presses; other single characters as
// typed text.
const NAMED_KEYS = new Set(['Enter', 'Tab', 'Backspace', 'Delete', 'Escape', 'ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight', 'Home', 'End', 'PageUp', 'PageDown']);
const MOVE_EVERY_MS = 33; // about 30 mouse moves a second
const TEXT_BATCH_MS = 15;
const RECONNECT_MS = [250, 500, 1000, 2000, 5000];
const BUTTONS = ['left', 'middle', 'right'];
// The lease is kept for this tab only, so that a reload can still hand
// back; it never leaves this origin.
const LEASE_KEY = 'pwproxy-lease:' + sessionID;

let socket = null;
let reconnects = 0;
let stopped = false; // the session has no live view: do not reconnect
let lease = sessionStorage.getItem(LEASE_KEY) || '';
let yours = false;
let frameWidth = 0;
let frameHeight = 0;
let lastMove = 0;
let pendingText = '';
let framesHere = 0; // frames on the current socket
let textTimer = null;

function say(text, isError) {
  message.className = isError ? 'error' : 'note';
  message.textContent = text;
  fit(); // the message may have moved the frame down
}

function when(ts) {
  if (!ts) return '';
  const d = new Date(ts);
  return isNaN(d) ? '' : d.toLocaleTimeString();
}

function setLease(l) {
  lease = l || '';
  if (lease) sessionStorage.setItem(LEASE_KEY, lease);
  else sessionStorage.removeItem(LEASE_KEY);
  render();
}

let control = null;
let waiting = null;

function holding() {
  return Boolean(lease) && yours;
}

function render() {
  const parts = [];
  if (control) {
    parts.push((yours ? 'You hold control' : 'A person holds control') + ' since ' + when(control.since) + (yours ? '.' : ': you can watch.'));
  } else {
    parts.push('The agent drives this browser.');
  }
  if (waiting) {
    parts.push('The agent waits for a person: ' + (waiting.reason || '(no reason given)') + (waiting.until ? ' (until ' + when(waiting.until) + ')' : ''));
  }
  stateLine.textContent = parts.join(' ');
  stateLine.classList.toggle('waiting', Boolean(waiting));
  takeButton.disabled = stopped || Boolean(control);
  handBackButton.disabled = !lease;
  frame.classList.toggle('holding', holding());
  fit();
}

// fit shows the frame as large as the window allows at the page's aspect,
// so that the image's box is the page and pointer positions map by scale.
function fit() {
  if (!frameWidth || !frameHeight) return;
  const box = $('frame-box');
  const top = box.getBoundingClientRect().top + window.scrollY;
  const w = Math.max(100, box.clientWidth);
  const h = Math.max(100, window.innerHeight - top - 24);
  const scale = Math.min(w / frameWidth, h / frameHeight);
  frame.style.width = Math.floor(frameWidth * scale) + 'px';
  frame.style.height = Math.floor(frameHeight * scale) + 'px';
}
window.addEventListener('resize', fit);

function send(msg) {
  if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(msg));
}

function showTabs(tabs) {
  const list = $('live-tabs');
  const current = tabs.find((t) => t.current) || tabs[0];
  $('live-title').textContent = current ? current.title || '' : '';
  $('live-url').textContent = current ? current.url || '' : '';
  list.replaceChildren(...tabs.map((t) => {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'tab' + (t.current ? ' current' : '');
    b.dataset.target = t.target_id;
    b.title = t.url || '';
    b.textContent = t.title || t.url || '(blank)';
    b.addEventListener('click', () => send({ type: 'tab', target_id: t.target_id }));
    const li = document.createElement('li');
    li.append(b);
    return li;
  }));
}

function onMessage(ev) {
  let m;
  try {
    m = JSON.parse(ev.data);
  } catch (e) {
    return;
  }
  switch (m.type) {
    case 'frame':
      framesHere++;
      if (m.width !== frameWidth || m.height !== frameHeight) {
        frameWidth = m.width;
        frameHeight = m.height;
        fit();
      }
      frame.src = 'data:image/jpeg;base64,' + m.data;
      frame.dataset.at = String(m.at);
      // The page's viewport in CSS pixels, which input coordinates are in.
      frame.dataset.width = String(m.width);
      frame.dataset.height = String(m.height);
      noFrame.hidden = true;
      break;
    case 'tabs':
      showTabs(m.tabs || []);
      break;
    case 'state':
      // A control that ended elsewhere (its idle timeout, another hand-back)
      // takes this tab's lease with it.
      if (control && !m.control && lease) setLease('');
      control = m.control || null;
      waiting = m.waiting || null;
      yours = Boolean(m.yours);
      render();
      break;
    case 'error':
      if (m.code === 'SESSION_NOT_FOUND' || m.code === 'SESSION_CLOSED') {
        stopped = true;
        say(m.code + ': ' + (m.message || ''), true);
        render();
      } else if (m.code === 'UPSTREAM_UNAVAILABLE' && !framesHere) {
        // Refused before any frame: this session's browser has no live
        // view. Later, it is one thing that failed (a tab switch).
        stopped = true;
        noFrame.hidden = false;
        noFrame.textContent = 'no live view for this session (' + (m.message || m.code) + ')';
        render();
      } else {
        say((m.code || 'ERROR') + ': ' + (m.message || ''), true);
      }
      break;
    default:
  }
}

function connect() {
  if (stopped) return;
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const ws = new WebSocket(scheme + '//' + location.host + base + '/live');
  socket = ws;
  ws.addEventListener('open', () => {
    reconnects = 0;
    framesHere = 0;
    statusLine.textContent = 'connected';
    if (lease) send({ type: 'lease', lease });
  });
  ws.addEventListener('message', onMessage);
  ws.addEventListener('close', () => {
    if (socket !== ws) return;
    socket = null;
    if (stopped) return;
    statusLine.textContent = 'reconnecting…';
    const wait = RECONNECT_MS[Math.min(reconnects, RECONNECT_MS.length - 1)];
    reconnects++;
    // A refused socket says nothing of why; the session's own address
    // does (a token needed, a session gone).
    if (reconnects === 2) explainRefusal();
    setTimeout(connect, wait);
  });
}

async function explainRefusal() {
  try {
    const r = await fetch(base, { headers: { Accept: 'application/json' }, credentials: 'same-origin' });
    if (r.status === 401) {
      say('Sign in to the inspector first (its token), then come back.', true);
    } else if (!r.ok) {
      const b = await r.json().catch(() => ({}));
      say((b.error || 'HTTP ' + r.status) + ': ' + (b.message || ''), true);
      if (r.status === 404) stopped = true;
    }
  } catch (e) { /* the server is away: keep trying */ }
}

// call sends a request to the API and answers the JSON or throws an Error
// whose message names the error code.
async function call(method, path, body) {
  const r = await fetch(path, {
    method, credentials: 'same-origin',
    headers: { Accept: 'application/json', 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (r.status === 204) return null;
  const b = await r.json().catch(() => null);
  if (!r.ok) {
    const e = new Error(b && b.error ? b.error + ': ' + (b.message || '') : 'HTTP ' + r.status);
    e.code = b && b.error;
    throw e;
  }
  return b;
}

takeButton.addEventListener('click', async () => {
  try {
    const l = await call('POST', base + '/control');
    setLease(l.lease);
    send({ type: 'lease', lease: l.lease });
    say('You hold control: click on the page and type; hand back when done.', false);
    frame.focus();
  } catch (e) {
    say(e.code === 'CONTROL_HELD' ? 'Someone else holds control (' + e.message + ').' : String(e.message || e), true);
  }
});

handBackButton.addEventListener('click', async () => {
  flushText();
  try {
    await call('DELETE', base + '/control', { lease });
    say('Handed back to the agent.', false);
  } catch (e) {
    say('Could not hand back: ' + (e.message || e), true);
    if (e.code !== 'CONTROL_HELD' && e.code !== 'INVALID_PARAMETERS') return;
  }
  setLease('');
});

$('save-profile').addEventListener('click', () => {
  profileForm.hidden = false;
  profileName.focus();
});
$('profile-cancel').addEventListener('click', () => { profileForm.hidden = true; });
profileForm.addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const name = profileName.value.trim();
  try {
    const p = await call('POST', base + '/profile', { name });
    say('Saved profile ' + p.name + (p.version ? ', version ' + p.version : '') + '.', false);
    profileForm.hidden = true;
    profileForm.reset();
  } catch (e) {
    say('Could not save profile ' + name + ': ' + (e.message || e), true);
  }
});

// --- input, only while this view holds control

// point maps a pointer event to the page's viewport in CSS px: the image
// is shown scaled, keeping its aspect, so its box is the frame.
function point(ev) {
  const r = frame.getBoundingClientRect();
  // The image inside the border.
  const left = r.left + frame.clientLeft;
  const top = r.top + frame.clientTop;
  const w = frame.clientWidth;
  const h = frame.clientHeight;
  if (!w || !h || !frameWidth || !frameHeight) return null;
  const clamp = (v, max) => Math.max(0, Math.min(max, v));
  return {
    x: Math.round(clamp((ev.clientX - left) * frameWidth / w, frameWidth) * 10) / 10,
    y: Math.round(clamp((ev.clientY - top) * frameHeight / h, frameHeight) * 10) / 10,
  };
}

// modifiers is CDP's bit set: Alt 1, Ctrl 2, Meta 4, Shift 8.
function modifiers(ev) {
  return (ev.altKey ? 1 : 0) | (ev.ctrlKey ? 2 : 0) | (ev.metaKey ? 4 : 0) | (ev.shiftKey ? 8 : 0);
}

function mouse(event, ev, extra) {
  const p = point(ev);
  if (!p) return;
  send(Object.assign({ type: 'mouse', event, x: p.x, y: p.y, modifiers: modifiers(ev) }, extra));
}

// pressed counts the buttons pressed on the frame: their release goes to
// the page wherever the pointer is then (at the frame's edge), so that no
// button stays down in the page.
let pressed = 0;
frame.addEventListener('mousedown', (ev) => {
  if (!holding()) return;
  ev.preventDefault();
  frame.focus();
  flushText();
  pressed++;
  mouse('pressed', ev, { button: BUTTONS[ev.button] || 'left', clicks: ev.detail || 1 });
});
window.addEventListener('mouseup', (ev) => {
  if (!pressed) return;
  pressed--;
  if (!holding()) return;
  ev.preventDefault();
  mouse('released', ev, { button: BUTTONS[ev.button] || 'left', clicks: ev.detail || 1 });
});
frame.addEventListener('mousemove', (ev) => {
  if (!holding()) return;
  const now = Date.now();
  if (now - lastMove < MOVE_EVERY_MS) return;
  lastMove = now;
  mouse('moved', ev, {});
});
frame.addEventListener('wheel', (ev) => {
  if (!holding()) return;
  ev.preventDefault();
  mouse('wheel', ev, { dx: ev.deltaX, dy: ev.deltaY });
}, { passive: false });
frame.addEventListener('contextmenu', (ev) => { if (holding()) ev.preventDefault(); });

function flushText() {
  if (textTimer) clearTimeout(textTimer);
  textTimer = null;
  if (pendingText) send({ type: 'text', text: pendingText });
  pendingText = '';
}

frame.addEventListener('keydown', (ev) => {
  if (!holding() || ev.isComposing) return;
  if (NAMED_KEYS.has(ev.key)) {
    ev.preventDefault(); // Tab must not leave the view
    flushText();
    send({ type: 'key', key: ev.key, modifiers: modifiers(ev) });
    return;
  }
  // A shortcut (Ctrl+V and the like) is the browser's own: paste comes as
  // its paste event. AltGr sets Ctrl on some systems and types characters.
  const shortcut = (ev.ctrlKey || ev.metaKey) && !ev.getModifierState('AltGraph');
  if (ev.key.length !== 1 || shortcut) return;
  ev.preventDefault();
  pendingText += ev.key;
  if (!textTimer) textTimer = setTimeout(flushText, TEXT_BATCH_MS);
});

document.addEventListener('paste', (ev) => {
  if (!holding() || document.activeElement !== frame) return;
  const text = ev.clipboardData ? ev.clipboardData.getData('text/plain') : '';
  ev.preventDefault();
  if (!text) return;
  flushText();
  send({ type: 'paste', text });
});

// --- start

$('live-session').textContent = sessionID;
$('nav-timeline').href = '../../#/session/' + encodeURIComponent(sessionID);
document.title = 'Live ' + sessionID.slice(0, 8) + ' · playwright-mcp-proxy';
render();
if (sessionID) connect();
else say('No session in this address.', true);
