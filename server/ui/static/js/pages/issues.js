// The issues list: filters (status, kind, release), sort, a sparkline of
// recent events per issue, paging.

import * as api from '../api.js';
import { h, when, num, kindBadge, statusBadge, empty } from '../dom.js';
import { sparkline } from '../chart.js';

const PAGE = 25;
const KINDS = ['crash', 'hang', 'audit', 'dump'];
const STATUSES = [['unresolved', 'Unresolved'], ['resolved', 'Resolved'], ['ignored', 'Ignored'], ['all', 'All']];
const SORTS = [['last_seen', 'Last seen'], ['first_seen', 'First seen'], ['count', 'Events']];

// issueMeta is the line under an issue's title: kind, status, regression,
// releases.
export function issueMeta(is, { culprit = false } = {}) {
  return h('div', { class: 'issue-meta' },
    kindBadge(is.kind),
    statusBadge(is.status),
    is.regressed_at && h('span', { class: 'badge badge-regressed', title: 'Regressed ' + new Date(is.regressed_at).toLocaleString() }, 'regressed'),
    (is.first_release || is.last_release) && h('span', { class: 'meta-release' },
      is.first_release && is.first_release !== is.last_release ? `${is.first_release} → ${is.last_release || '?'}` : (is.last_release || is.first_release)),
    culprit && is.culprit && h('span', { class: 'issue-culprit mono' }, is.culprit));
}

export async function renderIssues(ctx) {
  document.title = 'Issues · backtrail';
  const q = ctx.query;
  const status = q.get('status') || 'unresolved';
  const kind = q.get('kind') || '';
  const release = q.get('release') || '';
  const sort = q.get('sort') || 'last_seen';
  const period = q.get('period') === '24h' ? '24h' : '14d';
  const page = Math.max(0, parseInt(q.get('page') || '0', 10) || 0);
  const proj = await ctx.currentProject();

  const link = (changes) => {
    const p = new URLSearchParams(q);
    for (const [k, v] of Object.entries(changes)) {
      if (v === '' || v === null || v === undefined) p.delete(k);
      else p.set(k, v);
    }
    if (!('page' in changes)) p.delete('page');
    const str = p.toString();
    return '/issues' + (str ? '?' + str : '');
  };

  const issues = await api.get('/api/v1/issues', {
    project: proj ? proj.id : '', status: status === 'all' ? '' : status, kind, release, sort,
    limit: PAGE + 1, offset: page * PAGE, counts: period,
  });
  const more = issues.length > PAGE;
  const shown = issues.slice(0, PAGE);

  // Filters.
  const statusTabs = h('nav', { class: 'segmented', 'aria-label': 'Status', id: 'status-filter' },
    STATUSES.map(([v, label]) => h('a', { href: link({ status: v === 'unresolved' ? '' : v }), class: 'seg', 'aria-current': status === v ? 'true' : null, dataset: { status: v } }, label)));
  const kindSel = h('select', { id: 'kind-filter', class: 'select', 'aria-label': 'Kind' },
    h('option', { value: '' }, 'All kinds'),
    KINDS.map((k) => h('option', { value: k, selected: k === kind }, k)));
  kindSel.addEventListener('change', () => ctx.navigate(link({ kind: kindSel.value })));
  const sortSel = h('select', { id: 'sort', class: 'select', 'aria-label': 'Sort by' },
    SORTS.map(([v, label]) => h('option', { value: v, selected: v === sort }, 'Sort: ' + label)));
  sortSel.addEventListener('change', () => ctx.navigate(link({ sort: sortSel.value === 'last_seen' ? '' : sortSel.value })));
  const releases = new Set();
  for (const is of shown) {
    if (is.first_release) releases.add(is.first_release);
    if (is.last_release) releases.add(is.last_release);
  }
  const relInput = h('input', { id: 'release-filter', class: 'input', type: 'search', placeholder: 'Release', 'aria-label': 'Release', value: release, list: 'releases', spellcheck: 'false' });
  const relForm = h('form', { class: 'release-form', role: 'search' }, relInput,
    h('datalist', { id: 'releases' }, [...releases].sort().map((r) => h('option', { value: r }))));
  relForm.addEventListener('submit', (e) => {
    e.preventDefault();
    ctx.navigate(link({ release: relInput.value.trim() }));
  });
  relInput.addEventListener('change', () => {
    if (relInput.value.trim() !== release) ctx.navigate(link({ release: relInput.value.trim() }));
  });
  const periodTabs = h('nav', { class: 'segmented segmented-sm', 'aria-label': 'Graph period' },
    [['24h', '24h'], ['14d', '14d']].map(([v, label]) => h('a', { href: link({ period: v === '14d' ? '' : v, page: page || '' }), class: 'seg', 'aria-current': period === v ? 'true' : null }, label)));

  const filters = h('div', { class: 'toolbar' }, statusTabs, h('div', { class: 'toolbar-group' }, kindSel, relForm, sortSel));

  // Table.
  let body;
  if (!shown.length) {
    const filtered = kind || release || status !== 'all';
    body = empty(filtered ? 'No issues match these filters.' : 'No issues yet.',
      filtered ? 'Try another status, kind or release.' : 'Send an event to this project’s DSN (see Project) and it appears here.');
  } else {
    body = h('table', { class: 'table issues-table', id: 'issues' },
      h('thead', h('tr',
        h('th', { scope: 'col' }, 'Issue'),
        h('th', { scope: 'col', class: 'col-graph' }, h('div', { class: 'th-graph' }, 'Events', periodTabs)),
        h('th', { scope: 'col', class: 'num' }, 'Total'),
        h('th', { scope: 'col', class: 'col-seen' }, 'Last seen'),
        h('th', { scope: 'col', class: 'col-seen' }, 'First seen'))),
      h('tbody', shown.map((is) => h('tr', { class: 'issue-row', dataset: { id: String(is.id), kind: is.kind, status: is.status } },
        h('td', { class: 'col-issue' },
          h('a', { href: `/issues/${is.id}`, class: 'issue-title' }, is.title || '(untitled)'),
          issueMeta(is, { culprit: true })),
        h('td', { class: 'col-graph' }, sparkline(is.counts || [], period === '24h' ? 'hour' : 'day')),
        h('td', { class: 'num count' }, num(is.count), h('span', { class: 'count-unit' }, is.count === 1 ? ' event' : ' events')),
        h('td', { class: 'col-seen' }, when(is.last_seen)),
        h('td', { class: 'col-seen' }, when(is.first_seen))))));
  }

  const pager = h('div', { class: 'pager' },
    h('span', { class: 'muted', id: 'issues-range' }, shown.length ? `${page * PAGE + 1}–${page * PAGE + shown.length}` + (more ? '' : ` of ${page * PAGE + shown.length}`) : ''),
    h('div', { class: 'pager-buttons' },
      page > 0 ? h('a', { class: 'btn', href: link({ page: page - 1 || '' }), rel: 'prev' }, 'Previous') : h('span', { class: 'btn', 'aria-disabled': 'true' }, 'Previous'),
      more ? h('a', { class: 'btn', href: link({ page: page + 1 }), rel: 'next' }, 'Next') : h('span', { class: 'btn', 'aria-disabled': 'true' }, 'Next')));

  return h('div', { class: 'issues-page' },
    h('div', { class: 'page-head' },
      h('div', h('h1', 'Issues'), h('p', { class: 'muted' }, proj ? `Project ${proj.name}` : '', release ? ` · release ${release}` : '')),
      release && h('a', { href: link({ release: '' }), class: 'btn btn-ghost' }, 'Clear release')),
    filters,
    h('div', { class: 'card card-flush' }, body),
    shown.length ? pager : null);
}

