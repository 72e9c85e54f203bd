// DOM helpers. Everything the pages show is built here with DOM APIs:
// strings become text nodes, attributes are set one by one, and nothing
// is ever parsed as HTML, so event data (attacker-controlled) stays text.

const SVG_NS = 'http://www.w3.org/2000/svg';

// append adds children to el: nodes as they are, strings and numbers as
// text, arrays flattened, null/undefined/false skipped.
export function append(el, ...children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, ...c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
  return el;
}

function setAttrs(el, attrs) {
  if (!attrs) return;
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') el.setAttribute('class', Array.isArray(v) ? v.filter(Boolean).join(' ') : v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'value' && 'value' in el) el.value = v;
    else if (k === 'checked' || k === 'selected' || k === 'disabled') el[k] = !!v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
}

// h creates an HTML element: h('a', {href: '/x', class: 'y'}, 'text', child).
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs instanceof Node || typeof attrs === 'string' || Array.isArray(attrs)) {
    children.unshift(attrs);
    attrs = null;
  }
  setAttrs(el, attrs);
  return append(el, ...children);
}

// s creates an SVG element.
export function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  setAttrs(el, attrs);
  return append(el, ...children);
}

// clear removes el's children and returns it.
export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

// icon returns a small inline SVG icon by name.
export function icon(name, size = 16) {
  const paths = {
    copy: 'M5 2h7a2 2 0 0 1 2 2v7M3 5h7a1 1 0 0 1 1 1v7a1 1 0 0 1-1 1H3a1 1 0 0 1-1-1V6a1 1 0 0 1 1-1z',
    check: 'M3 8.5l3 3 7-7',
    download: 'M8 2v8m-3.5-3.5L8 10l3.5-3.5M3 13h10',
    trash: 'M3 4h10M6 4V2.5h4V4m-5.5 0l.5 9.5h6l.5-9.5',
    upload: 'M8 11V3m-3.5 3.5L8 3l3.5 3.5M3 13h10',
    chevronL: 'M10 3L5 8l5 5',
    chevronR: 'M6 3l5 5-5 5',
    flame: 'M8 14c-2.8 0-4.5-1.8-4.5-4.2 0-2.6 2.2-3.9 2.7-6.8 1.7 1 2.4 2.6 2.3 4 .8-.4 1.3-1.2 1.4-2.2 1.5 1.3 2.6 3 2.6 5 0 2.4-1.7 4.2-4.5 4.2z',
    sun: 'M8 5a3 3 0 1 0 0 6 3 3 0 0 0 0-6zM8 1v1.5M8 13.5V15M1 8h1.5M13.5 8H15M3 3l1 1M12 12l1 1M3 13l1-1M12 4l1-1',
    moon: 'M13.5 10A6 6 0 0 1 6 2.5a6 6 0 1 0 7.5 7.5z',
    reset: 'M3 8a5 5 0 1 0 1.5-3.5M3 2.5V5h2.5',
    key: 'M10 2a4 4 0 1 1-3.7 5.5L2 11.8V14h2.2v-1.5h1.5V11h1.5l1-1A4 4 0 0 1 10 2zm1.5 2.5h.01',
  };
  return s('svg', { width: size, height: size, viewBox: '0 0 16 16', class: 'icon', 'aria-hidden': 'true', focusable: 'false' },
    s('path', { d: paths[name] || '', fill: name === 'flame' || name === 'moon' ? 'currentColor' : 'none', stroke: 'currentColor', 'stroke-width': '1.5', 'stroke-linecap': 'round', 'stroke-linejoin': 'round' }));
}

// Formatting.

const rtf = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto', style: 'narrow' });

// ago formats a time as "5 min. ago", "3 yr. ago".
export function ago(t, now = Date.now()) {
  const d = (new Date(t).getTime() - now) / 1000;
  const a = Math.abs(d);
  if (a < 45) return 'just now';
  const units = [['minute', 60], ['hour', 3600], ['day', 86400], ['month', 2629800], ['year', 31557600]];
  let unit = units[0];
  for (const u of units) if (a >= u[1] * 0.95) unit = u;
  return rtf.format(Math.round(d / unit[1]), unit[0]);
}

// when returns a <time> showing a relative time with the exact one as a tooltip.
export function when(t) {
  if (!t) return h('span', { class: 'muted' }, '—');
  const d = new Date(t);
  if (isNaN(d)) return h('span', { class: 'muted' }, String(t));
  return h('time', { datetime: d.toISOString(), title: fullTime(t) }, ago(t));
}

// fullTime formats a time in full, in the viewer's time zone.
export function fullTime(t) {
  const d = new Date(t);
  if (isNaN(d)) return String(t);
  return d.toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'short' });
}

// bytes formats a size: "12.3 MB".
export function bytes(n) {
  if (!Number.isFinite(n)) return '—';
  const u = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1000 && i < u.length - 1) { n /= 1000; i++; }
  return (i === 0 ? String(n) : n.toFixed(n < 10 ? 1 : 0)) + ' ' + u[i];
}

// num formats a count with grouping: "12,345".
export function num(n) {
  return Number(n || 0).toLocaleString();
}

// compact formats a count briefly: "1.2k".
export function compact(n) {
  return new Intl.NumberFormat(undefined, { notation: 'compact', maximumFractionDigits: 1 }).format(n || 0);
}

// basename returns the last element of a path (either separator).
export function basename(p) {
  if (!p) return '';
  const i = Math.max(p.lastIndexOf('/'), p.lastIndexOf('\\'));
  return i >= 0 ? p.slice(i + 1) : p;
}

// copyButton returns a button that copies text to the clipboard.
export function copyButton(text, label = 'Copy') {
  const b = h('button', { type: 'button', class: 'btn btn-icon', title: label, 'aria-label': label }, icon('copy'));
  b.addEventListener('click', async () => {
    let ok = false;
    try {
      await navigator.clipboard.writeText(text);
      ok = true;
    } catch {
      // Not a secure context, or permission denied: copy through a
      // selected, off-screen text area.
      const ta = h('textarea', { class: 'offscreen', readonly: true }, text);
      document.body.appendChild(ta);
      ta.select();
      try { ok = document.execCommand('copy'); } catch { ok = false; }
      ta.remove();
    }
    clear(b).appendChild(icon(ok ? 'check' : 'copy'));
    b.classList.toggle('copied', ok);
    b.setAttribute('title', ok ? 'Copied' : 'Copy failed');
    setTimeout(() => { clear(b).appendChild(icon('copy')); b.classList.remove('copied'); b.setAttribute('title', label); }, 1500);
  });
  return b;
}

// badge returns a small label; tone picks its color.
export function badge(text, tone = '') {
  return h('span', { class: ['badge', tone && 'badge-' + tone] }, text);
}

// statusBadge shows an issue status.
export function statusBadge(status) {
  const tone = { unresolved: 'warn', resolved: 'ok', ignored: 'muted' }[status] || '';
  return badge(status, tone);
}

// kindBadge shows an issue or event kind.
export function kindBadge(kind) {
  return badge(kind || 'unknown', 'kind-' + (kind || 'unknown'));
}

// empty returns a placeholder for an empty list.
export function empty(title, detail) {
  return h('div', { class: 'empty' }, h('p', { class: 'empty-title' }, title), detail && h('p', { class: 'muted' }, detail));
}

// errorBox shows an error message.
export function errorBox(err) {
  return h('div', { class: 'alert alert-error', role: 'alert' }, String(err && err.message ? err.message : err));
}

// spinner shows that something loads.
export function spinner(label = 'Loading…') {
  return h('div', { class: 'loading', role: 'status' }, h('span', { class: 'spin', 'aria-hidden': 'true' }), label);
}
