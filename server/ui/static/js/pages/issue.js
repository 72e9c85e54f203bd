// The issue page: the issue's header and status actions, its numbers and
// hourly chart, and three tabs: the chosen event in detail (exception,
// threads, trail, context, modules), a flame graph of its hang samples,
// goroutine snapshot or audit counts, and the list of its events.

import * as api from '../api.js';
import { h, when, num, bytes, fullTime, kindBadge, statusBadge, badge, copyButton, empty, icon, errorBox } from '../dom.js';
import { hourlyChart } from '../chart.js';
import { stack, frameName, position } from '../frames.js';
import { buildTree, FlameGraph } from '../flame.js';
import { issueMeta } from './issues.js';

const EVENTS_PAGE = 25;

export async function renderIssue(ctx) {
  const [idStr, tabName] = ctx.params;
  const id = Number(idStr);
  const tab = tabName || 'details';
  const issue = await api.get(`/api/v1/issues/${id}`);
  document.title = `${issue.title} · backtrail`;

  const wantEvent = ctx.query.get('event') || '';
  const recent = await api.get(`/api/v1/issues/${id}/events`, { limit: 50 });
  let event = null;
  const eventID = wantEvent || (recent[0] && recent[0].id) || '';
  if (tab !== 'events' && eventID) {
    event = await api.get(`/api/v1/events/${encodeURIComponent(eventID)}`, { project: issue.project });
  }
  const evq = wantEvent ? '?event=' + encodeURIComponent(wantEvent) : '';
  // The flame graph tab is there when the event has stacks to draw (or,
  // on the events tab, which loads no event, when the kind usually has).
  const hasFlame = tab === 'flame' || (event ? flameSources(event).length > 0 : issue.kind === 'hang' || issue.kind === 'audit');

  const tabs = h('nav', { class: 'tabs', 'aria-label': 'Issue views' },
    h('a', { href: `/issues/${id}${evq}`, class: 'tab', 'aria-current': tab === 'details' ? 'page' : null, id: 'tab-details' }, 'Details'),
    hasFlame && h('a', { href: `/issues/${id}/flame${evq}`, class: 'tab', 'aria-current': tab === 'flame' ? 'page' : null, id: 'tab-flame' }, icon('flame', 14), 'Flame graph'),
    h('a', { href: `/issues/${id}/events`, class: 'tab', 'aria-current': tab === 'events' ? 'page' : null, id: 'tab-events' }, 'Events ', h('span', { class: 'tab-count' }, num(issue.count))));

  let body;
  if (tab === 'events') body = await eventsTab(ctx, issue);
  else if (!event) body = empty('No events stored for this issue.');
  else {
    const bar = eventBar(ctx, issue, event, recent, tab);
    body = h('div', bar, tab === 'flame' ? flameTab(ctx, event) : detailsTab(event));
  }

  return h('div', { class: 'issue-page' },
    issueHeader(ctx, issue),
    h('div', { class: 'issue-layout' },
      h('div', { class: 'issue-main' }, tabs, body),
      h('aside', { class: 'issue-side', 'aria-label': 'Issue summary' }, sidePanel(issue))));
}

function issueHeader(ctx, issue) {
  const actions = h('div', { class: 'actions', id: 'issue-actions' });
  const act = (status, label, primary) => {
    const b = h('button', { type: 'button', class: ['btn', primary && 'btn-primary'], id: 'action-' + label.toLowerCase(), dataset: { status } }, label);
    b.addEventListener('click', async () => {
      for (const x of actions.querySelectorAll('button')) x.disabled = true;
      try {
        await api.put(`/api/v1/issues/${issue.id}`, { status });
        ctx.render();
      } catch (err) {
        actions.append(errorBox(err));
        for (const x of actions.querySelectorAll('button')) x.disabled = false;
      }
    });
    return b;
  };
  if (issue.status === 'unresolved') actions.append(act('resolved', 'Resolve', true), act('ignored', 'Ignore'));
  else actions.append(act('unresolved', 'Reopen', true));
  return h('div', { class: 'issue-head' },
    h('nav', { class: 'breadcrumb', 'aria-label': 'Breadcrumb' }, h('a', { href: '/issues' }, 'Issues'), h('span', { 'aria-hidden': 'true' }, '/'), h('span', `#${issue.id}`)),
    h('div', { class: 'issue-head-row' },
      h('div', { class: 'issue-head-text' },
        h('h1', { class: 'issue-h1', id: 'issue-title' }, issue.title || '(untitled)'),
        issue.culprit && h('p', { class: 'issue-culprit mono' }, issue.culprit),
        issueMeta(issue),
        issue.regressed_at && h('p', { class: 'regressed-note' }, 'Regressed ', when(issue.regressed_at),
          issue.resolved_release ? ` after it was resolved in ${issue.resolved_release}` : ' after it was resolved', '.')),
      actions));
}

function sidePanel(issue) {
  const dl = (...rows) => h('dl', { class: 'facts' }, rows.filter(Boolean).map(([k, v]) => [h('dt', k), h('dd', v)]));
  return [
    h('section', { class: 'card side-card', id: 'issue-stats' },
      h('h2', { class: 'card-title' }, 'Events'),
      h('p', { class: 'big-number' }, num(issue.count)),
      hourlyChart(issue.counts, 14)),
    h('section', { class: 'card side-card' },
      h('h2', { class: 'card-title' }, 'Seen'),
      dl(['First seen', [when(issue.first_seen), issue.first_release && h('span', { class: 'muted' }, ' in ', h('span', { class: 'mono' }, issue.first_release))]],
        ['Last seen', [when(issue.last_seen), issue.last_release && h('span', { class: 'muted' }, ' in ', h('span', { class: 'mono' }, issue.last_release))]],
        issue.resolved_release && ['Resolved in', h('span', { class: 'mono' }, issue.resolved_release)],
        ['Status', statusBadge(issue.status)])),
    h('section', { class: 'card side-card', id: 'issue-releases' },
      h('h2', { class: 'card-title' }, 'Releases'),
      (issue.releases || []).filter((r) => r).length
        ? h('ul', { class: 'chips' }, issue.releases.filter((r) => r).map((r) => h('li', h('a', { class: 'chip mono', href: '/issues?status=all&release=' + encodeURIComponent(r) }, r))))
        : h('p', { class: 'muted' }, 'No release was reported.')),
    h('section', { class: 'card side-card' },
      h('h2', { class: 'card-title' }, 'Grouping'),
      dl(['Fingerprint', h('span', { class: 'mono trunc', title: issue.fingerprint }, issue.fingerprint.slice(0, 16) + '…')],
        ['Version', String(issue.grouping_version)])),
  ];
}

function eventLabel(e) {
  return `${new Date(e.timestamp).toLocaleString(undefined, { month: 'short', day: 'numeric', year: 'numeric', hour: '2-digit', minute: '2-digit' })} · ${e.id.slice(0, 8)}${e.release ? ' · ' + e.release : ''}`;
}

function eventBar(ctx, issue, event, recent, tab) {
  const base = `/issues/${issue.id}${tab === 'flame' ? '/flame' : ''}`;
  const go = (eid) => ctx.navigate(`${base}?event=${encodeURIComponent(eid)}`);
  const picker = h('select', { id: 'event-picker', class: 'select', 'aria-label': 'Event' },
    recent.map((e) => h('option', { value: e.id, selected: e.id === event.id }, eventLabel(e))));
  if (!recent.some((e) => e.id === event.id)) picker.prepend(h('option', { value: event.id, selected: true }, eventLabel(event)));
  picker.addEventListener('change', () => go(picker.value));
  const i = recent.findIndex((e) => e.id === event.id);
  const newer = h('button', { type: 'button', class: 'btn btn-icon', id: 'event-newer', title: 'Newer event', 'aria-label': 'Newer event', disabled: i <= 0 }, icon('chevronL'));
  const older = h('button', { type: 'button', class: 'btn btn-icon', id: 'event-older', title: 'Older event', 'aria-label': 'Older event', disabled: i < 0 || i >= recent.length - 1 }, icon('chevronR'));
  newer.addEventListener('click', () => go(recent[i - 1].id));
  older.addEventListener('click', () => go(recent[i + 1].id));
  const dl = h('button', { type: 'button', class: 'btn', id: 'download-raw' }, icon('download'), 'Raw report');
  const note = h('span', { class: 'muted dl-note', role: 'status' });
  dl.addEventListener('click', async () => {
    dl.disabled = true;
    try {
      const r = await api.download(`/api/v1/events/${encodeURIComponent(event.id)}/raw`, { project: event.project }, event.id);
      note.textContent = `Saved ${r.name} (${bytes(r.size)})`;
    } catch (err) {
      note.textContent = 'Download failed: ' + err.message;
    } finally {
      dl.disabled = false;
    }
  });
  return h('div', { class: 'event-bar' },
    h('div', { class: 'event-nav' }, newer, picker, older),
    h('div', { class: 'event-id' }, h('span', { class: 'muted' }, 'Event '), h('code', { id: 'event-id' }, event.id), copyButton(event.id, 'Copy event id')),
    h('div', { class: 'event-actions' }, note, dl));
}

// stats shows a few numbers side by side; rows are [label, value] or
// null.
function stats(...rows) {
  return h('div', { class: 'stats' }, rows.filter(Boolean).map(([k, v]) => h('div', { class: 'stat' }, h('div', { class: 'stat-k' }, k), h('div', { class: 'stat-v' }, v))));
}

function section(title, id, ...content) {
  return h('section', { class: 'card section', id }, h('h2', { class: 'card-title' }, title), ...content);
}

function detailsTab(ev) {
  const out = [];
  if (ev.error) out.push(h('div', { class: 'alert alert-error', role: 'alert' }, 'Processing failed: ', ev.error));
  if (ev.exception) out.push(exceptionSection(ev.exception));
  if (ev.hang) out.push(hangSection(ev));
  if (ev.audit) out.push(auditSection(ev.audit));
  if (ev.snapshot) out.push(snapshotSection(ev));
  if ((ev.threads || []).length) out.push(threadsSection(ev));
  if ((ev.trail || []).length) out.push(trailSection(ev.trail, ev.truncated && ev.truncated.trail));
  out.push(contextSection(ev));
  if ((ev.modules || []).length) out.push(modulesSection(ev.modules));
  return h('div', { class: 'details' }, out);
}

function exceptionSection(ex) {
  return h('section', { class: 'card section exception', id: 'exception' },
    h('div', { class: 'exception-type' }, h('span', { class: 'mono strong' }, ex.type || 'Exception'),
      ex.mechanism && badge(ex.mechanism, 'mechanism'), ex.handled ? badge('handled', 'ok') : badge('unhandled', 'error')),
    ex.value && h('pre', { class: 'exception-value' }, ex.value));
}

function hangSection(ev) {
  const hg = ev.hang;
  const samples = hg.samples || [];
  const weight = samples.reduce((a, s) => a + (s.weight || 1), 0);
  return h('section', { class: 'card section', id: 'hang' },
    h('div', { class: 'section-head' }, h('h2', { class: 'card-title' }, 'Hang'),
      h('a', { class: 'btn btn-sm', href: `/issues/${ev.issue}/flame?event=${encodeURIComponent(ev.id)}` }, icon('flame', 14), 'Flame graph')),
    stats(['Duration', `${num(hg.duration_ms)} ms`],
      ['Threshold', `${num(hg.threshold_ms)} ms`],
      hg.loop && ['Loop', h('span', { class: 'mono' }, hg.loop)],
      hg.request && ['Request', h('span', { class: 'mono' }, hg.request)],
      ['Samples', `${num(samples.length)} stack${samples.length === 1 ? '' : 's'}, weight ${num(weight)}`],
      hg.suppressed ? ['Suppressed', `${num(hg.suppressed)} identical hangs`] : null));
}

function snapshotSection(ev) {
  const sn = ev.snapshot;
  return h('section', { class: 'card section', id: 'snapshot' },
    h('div', { class: 'section-head' }, h('h2', { class: 'card-title' }, 'Goroutine snapshot'),
      h('a', { class: 'btn btn-sm', href: `/issues/${ev.issue}/flame?event=${encodeURIComponent(ev.id)}&source=snapshot` }, icon('flame', 14), 'Flame graph')),
    stats(['Goroutines', num(sn.total)],
      ['Unique stacks', num((sn.stacks || []).length) + (sn.truncated ? ' (rarer ones dropped)' : '')],
      sn.pause_us ? ['Pause', `${num(sn.pause_us)} µs`] : null,
      ['Taken', when(sn.timestamp)]));
}

function auditSection(au) {
  const entries = au.entries || [];
  return h('section', { class: 'card section', id: 'audit' },
    h('h2', { class: 'card-title' }, 'Audit'),
    h('p', { class: 'muted' }, au.since ? ['Calls since ', when(au.since), '.'] : 'First audit report.',
      au.dropped ? ` ${num(au.dropped)} calls were not counted: the client’s table was full.` : ''),
    entries.map((e, i) => h('details', { class: 'thread', open: i < 3 },
      h('summary', h('span', { class: 'badge' }, e.kind), h('span', { class: 'strong' }, ` ${num(e.count)} calls`), ' from ',
        h('span', { class: 'mono' }, e.frames && e.frames[0] ? frameName(e.frames[0]) : '?')),
      stack(e.frames, { truncated: e.truncated, label: `Audit entry ${i + 1}` }))));
}

function threadsSection(ev) {
  const threads = [...ev.threads];
  // The crashed thread first; the others keep their order.
  threads.sort((a, b) => (b.crashed ? 1 : 0) - (a.crashed ? 1 : 0));
  const toggle = h('input', { type: 'checkbox', id: 'in-app-only' });
  const list = h('div', { class: 'threads' });
  const draw = () => {
    const inAppOnly = toggle.checked;
    list.replaceChildren(...threads.map((t, i) => {
      const top = (t.frames || []).find((f) => f.in_app) || (t.frames || [])[0];
      return h('details', { class: ['thread', t.crashed && 'crashed'], open: t.crashed || i === 0 || threads.length === 1, dataset: { thread: String(t.id) } },
        h('summary',
          h('span', { class: 'thread-name' }, t.name || (ev.platform === 'go' ? `goroutine ${t.id}` : `Thread ${t.id}`)),
          t.crashed && badge('crashed', 'error'),
          t.current && badge('current'),
          t.state && h('span', { class: 'muted' }, ' ', t.state),
          h('span', { class: 'thread-top mono muted' }, top ? frameName(top) : ''),
          h('span', { class: 'thread-count muted' }, `${num((t.frames || []).length)} frames`)),
        t.labels && Object.keys(t.labels).length ? h('div', { class: 'labels' }, Object.entries(t.labels).map(([k, v]) => h('span', { class: 'chip mono' }, `${k}=${v}`))) : null,
        stack(t.frames, { inAppOnly, truncated: t.truncated, label: `Stack of thread ${t.id}` }),
        t.created_by && h('p', { class: 'created-by muted' }, 'Created by ', h('span', { class: 'mono' }, frameName(t.created_by)), position(t.created_by) ? ` at ${position(t.created_by)}` : ''),
        t.registers && Object.keys(t.registers).length ? h('details', { class: 'registers' }, h('summary', 'Registers'),
          h('dl', { class: 'regs mono' }, Object.entries(t.registers).sort(([a], [b]) => a.localeCompare(b, undefined, { numeric: true })).map(([k, v]) => [h('dt', k), h('dd', v)]))) : null);
    }));
  };
  toggle.addEventListener('change', draw);
  draw();
  return h('section', { class: 'card section', id: 'threads' },
    h('div', { class: 'section-head' },
      h('h2', { class: 'card-title' }, `Threads`, h('span', { class: 'muted' }, ` ${num(threads.length)}`), ev.truncated && ev.truncated.threads ? h('span', { class: 'muted' }, ' (some left out)') : null),
      h('div', { class: 'legend' },
        h('span', { class: 'legend-item' }, h('span', { class: 'swatch swatch-app' }), 'in app'),
        h('span', { class: 'legend-item' }, badge('inlined', 'inlined'), 'inlined call'),
        h('label', { class: 'switch' }, toggle, h('span', 'In-app only')))),
    h('p', { class: 'help' }, 'Most recent call first.'),
    list);
}

function trailSection(trail, truncated) {
  return h('section', { class: 'card section', id: 'trail' },
    h('h2', { class: 'card-title' }, 'Async trail'),
    h('p', { class: 'help' }, 'The hand-offs that led to this work, the most recent first: each hop is the stack that submitted the work of the one above it.'),
    h('ol', { class: 'trail' }, trail.map((hop, i) => h('li', { class: 'hop' },
      h('details', { open: i < 2 },
        h('summary',
          h('span', { class: 'hop-n' }, `${i + 1}`),
          h('span', 'submitted by '),
          h('span', { class: 'mono strong' }, hop.site ? frameName(hop.site) : (hop.frames && hop.frames[0] ? frameName(hop.frames[0]) : '?')),
          hop.site && position(hop.site) ? h('span', { class: 'mono muted' }, ' ', position(hop.site)) : null,
          hop.hash && h('span', { class: 'chip mono', title: 'stack hash' }, hop.hash)),
        stack(hop.frames, { truncated: hop.truncated, label: `Trail hop ${i + 1}` })))),
    truncated && h('p', { class: 'muted' }, 'Older hops were dropped.')));
}

function contextSection(ev) {
  const rows = [
    ['Event ID', h('span', { class: 'mono' }, ev.id)],
    ['Happened', h('span', fullTime(ev.timestamp))],
    ['Received', h('span', fullTime(ev.received))],
    ev.release && ['Release', h('span', { class: 'mono' }, ev.release)],
    ev.environment && ['Environment', ev.environment],
    ev.server_name && ['Server', ev.server_name],
    ['Platform', ev.platform || '—'],
    (ev.os && (ev.os.name || ev.os.version)) && ['OS', [ev.os.name, ev.os.version].filter(Boolean).join(' ')],
    ev.arch && ['Arch', ev.arch],
    (ev.runtime && ev.runtime.name) && ['Runtime', [ev.runtime.name, ev.runtime.version].filter(Boolean).join(' ')],
    (ev.sdk && ev.sdk.name) && ['SDK', [ev.sdk.name, ev.sdk.version].filter(Boolean).join(' ')],
    ['Format', ev.format],
  ].filter(Boolean);
  const tags = Object.entries(ev.tags || {}).sort(([a], [b]) => a.localeCompare(b));
  return h('section', { class: 'card section', id: 'context' },
    h('h2', { class: 'card-title' }, 'Context'),
    h('div', { class: 'context-grid' },
      h('dl', { class: 'facts' }, rows.map(([k, v]) => [h('dt', k), h('dd', v)])),
      tags.length ? h('div', h('h3', { class: 'sub-title' }, 'Tags'),
        h('ul', { class: 'chips' }, tags.map(([k, v]) => h('li', { class: 'chip tag' }, h('span', { class: 'tag-k' }, k), h('span', { class: 'tag-v' }, v))))) : null));
}

function modulesSection(mods) {
  return h('section', { class: 'card section', id: 'modules' },
    h('details', h('summary', h('h2', { class: 'card-title inline' }, 'Modules'), h('span', { class: 'muted' }, ` ${num(mods.length)} loaded images`)),
      h('div', { class: 'table-wrap' }, h('table', { class: 'table table-compact' },
        h('thead', h('tr', ['Name', 'Type', 'Debug ID', 'Code ID', 'Arch', 'Address'].map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', mods.map((m) => h('tr',
          h('td', { class: 'mono', title: m.path || '' }, m.name || m.path || '—'),
          h('td', m.type),
          h('td', { class: 'mono' }, m.debug_id || '—'),
          h('td', { class: 'mono trunc', title: m.code_id || m.build_id || '' }, m.code_id || m.build_id || '—'),
          h('td', m.arch || '—'),
          h('td', { class: 'mono' }, m.image_addr || '—'))))))));
}

// flameSources lists the stacks of an event a flame graph can show.
function flameSources(ev) {
  const out = [];
  if (ev.hang && (ev.hang.samples || []).length) {
    out.push({ key: 'hang', label: 'Hang samples', unit: 'samples', stacks: ev.hang.samples.map((s) => ({ frames: s.frames, value: s.weight || 1 })) });
  }
  if (ev.snapshot && (ev.snapshot.stacks || []).length) {
    out.push({ key: 'snapshot', label: 'Goroutine snapshot', unit: 'goroutines', stacks: ev.snapshot.stacks.map((s) => ({ frames: s.frames, value: s.count || 1 })) });
  }
  if (ev.audit && (ev.audit.entries || []).length) {
    out.push({ key: 'audit', label: 'Audit calls', unit: 'calls', stacks: ev.audit.entries.map((e) => ({ frames: [{ function: e.kind, module: 'audit' }, ...(e.frames || [])], value: e.count || 1 })) });
  }
  return out;
}

function flameTab(ctx, ev) {
  const sources = flameSources(ev);
  if (!sources.length) {
    return h('div', { class: 'card section' }, empty('Nothing to draw.', 'This event has no hang samples, goroutine snapshot or audit counts. The flame graph shows those.'));
  }
  const want = ctx.query.get('source');
  const src = sources.find((x) => x.key === want) || sources[0];
  const root = buildTree(src.stacks, 'all');
  const fg = new FlameGraph(root, { unit: src.unit, label: src.label });
  const base = `/issues/${ev.issue}/flame?event=${encodeURIComponent(ev.id)}`;
  const seg = h('nav', { class: 'segmented', 'aria-label': 'Stacks to draw', id: 'flame-source' },
    sources.map((x) => h('a', { class: 'seg', href: base + '&source=' + x.key, 'aria-current': x === src ? 'true' : null, dataset: { source: x.key } }, x.label)));
  const searchBox = h('input', { type: 'search', class: 'input', id: 'flame-search', placeholder: 'Highlight function or file', 'aria-label': 'Highlight frames matching' });
  searchBox.addEventListener('input', () => fg.search(searchBox.value.trim()));
  const reset = h('button', { type: 'button', class: 'btn', id: 'flame-reset' }, icon('reset', 14), 'Reset zoom');
  reset.addEventListener('click', () => fg.zoom(root, false));
  const summary = src.key === 'hang'
    ? `${num(root.value)} samples over ${num(ev.hang.duration_ms)} ms; width is time spent in a frame and what it called.`
    : src.key === 'snapshot'
      ? `${num(root.value)} goroutines in ${num(ev.snapshot.stacks.length)} unique stacks; width is how many goroutines were there.`
      : `${num(root.value)} audited calls; width is how many calls came through a frame.`;
  return h('section', { class: 'card section flame-card', id: 'flame' },
    h('div', { class: 'section-head' }, h('h2', { class: 'card-title' }, 'Flame graph'), seg),
    h('p', { class: 'help' }, summary, ' The outermost frame is at the bottom. Click a frame (or focus it and press Enter) to zoom; Escape zooms out.'),
    h('div', { class: 'toolbar' }, searchBox, reset,
      h('div', { class: 'legend' },
        h('span', { class: 'legend-item' }, h('span', { class: 'swatch fg-swatch-app' }), 'in app'),
        h('span', { class: 'legend-item' }, h('span', { class: 'swatch fg-swatch-sys' }), 'libraries & runtime'),
        h('span', { class: 'legend-item' }, h('span', { class: 'swatch fg-swatch-addr' }), 'unsymbolicated'),
        h('span', { class: 'legend-item' }, h('span', { class: 'swatch fg-swatch-inlined' }), 'inlined'))),
    fg.el);
}

async function eventsTab(ctx, issue) {
  const offset = Math.max(0, parseInt(ctx.query.get('offset') || '0', 10) || 0);
  const evs = await api.get(`/api/v1/issues/${issue.id}/events`, { limit: EVENTS_PAGE + 1, offset });
  const more = evs.length > EVENTS_PAGE;
  const shown = evs.slice(0, EVENTS_PAGE);
  if (!shown.length) return empty('No events on this page.');
  const page = (o) => `/issues/${issue.id}/events${o ? '?offset=' + o : ''}`;
  return h('div', { class: 'card card-flush' },
    h('table', { class: 'table', id: 'events' },
      h('thead', h('tr', ['Event', 'Happened', 'Received', 'Release', 'Format', 'State'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', shown.map((e) => h('tr',
        h('td', h('a', { class: 'mono', href: `/issues/${issue.id}?event=${encodeURIComponent(e.id)}` }, e.id.slice(0, 12) + '…')),
        h('td', when(e.timestamp)),
        h('td', when(e.received)),
        h('td', { class: 'mono' }, e.release || h('span', { class: 'muted' }, '—')),
        h('td', e.format),
        h('td', e.error ? badge('failed', 'error') : e.processed ? badge('processed', 'ok') : badge('queued')))))),
    h('div', { class: 'pager pager-inset' },
      h('span', { class: 'muted' }, `${offset + 1}–${offset + shown.length}${more ? '' : ' of ' + (offset + shown.length)}`),
      h('div', { class: 'pager-buttons' },
        offset > 0 ? h('a', { class: 'btn', href: page(Math.max(0, offset - EVENTS_PAGE)), rel: 'prev' }, 'Newer') : h('span', { class: 'btn', 'aria-disabled': 'true' }, 'Newer'),
        more ? h('a', { class: 'btn', href: page(offset + EVENTS_PAGE), rel: 'next' }, 'Older') : h('span', { class: 'btn', 'aria-disabled': 'true' }, 'Older'))));
}
