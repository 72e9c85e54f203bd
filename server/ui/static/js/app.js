// backtrail's web UI: the shell (header, navigation, project picker,
// theme) and a small router over the History API. The server answers any
// unknown path with index.html, so every route below can be loaded
// directly.

import * as api from './api.js';
import { h, clear, icon, errorBox, spinner } from './dom.js';
import { renderSignIn } from './pages/signin.js';
import { renderIssues } from './pages/issues.js';
import { renderIssue } from './pages/issue.js';
import { renderMissing } from './pages/missing.js';
import { renderDebugFiles } from './pages/debugfiles.js';
import { renderProjects } from './pages/projects.js';

const routes = [
  [/^\/sign-in$/, renderSignIn, { public: true }],
  [/^\/(issues)?$/, renderIssues, { nav: 'issues' }],
  [/^\/issues\/(\d+)(?:\/(events|flame))?$/, renderIssue, { nav: 'issues' }],
  [/^\/missing-symbols$/, renderMissing, { nav: 'missing' }],
  [/^\/debug-files$/, renderDebugFiles, { nav: 'debug' }],
  [/^\/projects$/, renderProjects, { nav: 'projects' }],
];

const state = { projects: null, seq: 0 };

// navigate goes to a path inside the app.
export function navigate(path, { replace = false } = {}) {
  if (replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  render();
}

// projects returns the projects, loading them once.
export async function projects() {
  if (!state.projects) state.projects = await api.get('/api/v1/projects');
  return state.projects;
}

// currentProject returns the chosen project, choosing the first one when
// none (or a deleted one) was chosen.
export async function currentProject() {
  const ps = await projects();
  let p = ps.find((x) => String(x.id) === api.project());
  if (!p && ps.length) {
    p = ps[0];
    api.setProject(p.id);
  }
  return p || null;
}

function signOut() {
  api.signOut();
  state.projects = null;
  navigate('/sign-in');
}

api.setUnauthorizedHandler(() => {
  api.signOut();
  state.projects = null;
  const back = location.pathname + location.search;
  navigate('/sign-in' + (back && back !== '/sign-in' ? '?next=' + encodeURIComponent(back) : ''), { replace: true });
});

function themeButton() {
  const label = () => {
    const t = document.documentElement.getAttribute('data-theme');
    const dark = t ? t === 'dark' : matchMedia('(prefers-color-scheme: dark)').matches;
    return dark;
  };
  const b = h('button', { type: 'button', class: 'btn btn-ghost btn-icon', id: 'theme-toggle' });
  const paint = () => {
    const dark = label();
    clear(b).appendChild(icon(dark ? 'sun' : 'moon'));
    b.setAttribute('aria-label', dark ? 'Switch to light theme' : 'Switch to dark theme');
    b.setAttribute('title', dark ? 'Light theme' : 'Dark theme');
  };
  b.addEventListener('click', () => {
    const t = label() ? 'light' : 'dark';
    document.documentElement.setAttribute('data-theme', t);
    try { localStorage.setItem('backtrail.theme', t); } catch { /* storage disabled */ }
    paint();
  });
  paint();
  return b;
}

async function header(nav) {
  const link = (href, key, text) => h('a', { href, class: 'nav-link', 'aria-current': nav === key ? 'page' : null }, text);
  const picker = h('select', { id: 'project-picker', class: 'select select-sm', 'aria-label': 'Project' });
  try {
    const ps = await projects();
    const cur = await currentProject();
    for (const p of ps) picker.appendChild(h('option', { value: String(p.id), selected: cur && p.id === cur.id }, p.name));
    picker.addEventListener('change', () => {
      api.setProject(picker.value);
      render();
    });
  } catch { /* the page shows the error */ }
  return h('header', { class: 'topbar' },
    h('a', { href: '/issues', class: 'brand', 'aria-label': 'backtrail home' },
      h('img', { src: '/favicon.svg', alt: '', width: 22, height: 22 }), h('span', 'backtrail')),
    h('nav', { class: 'nav', 'aria-label': 'Main' },
      link('/issues', 'issues', 'Issues'),
      link('/missing-symbols', 'missing', 'Missing symbols'),
      link('/debug-files', 'debug', 'Debug files'),
      link('/projects', 'projects', 'Projects')),
    h('div', { class: 'topbar-end' },
      h('label', { class: 'picker' }, h('span', { class: 'picker-label' }, 'Project'), picker),
      themeButton(),
      h('a', { href: '/sign-in', class: 'nav-link', id: 'sign-out', 'data-action': 'sign-out' }, 'Sign out')));
}

// render draws the page for the current location.
export async function render() {
  const seq = ++state.seq;
  const path = location.pathname.replace(/\/+$/, '') || '/';
  const query = new URLSearchParams(location.search);
  let route = null, params = [];
  for (const [re, fn, opts] of routes) {
    const m = re.exec(path);
    if (m) { route = [fn, opts]; params = m.slice(1); break; }
  }
  const root = document.getElementById('app');
  if (!route) {
    clear(root).append(h('main', { class: 'page' }, h('h1', 'Not found'), h('p', h('a', { href: '/issues' }, 'Go to the issues'))));
    return;
  }
  const [fn, opts] = route;
  if (!opts.public && !api.token()) {
    navigate('/sign-in?next=' + encodeURIComponent(location.pathname + location.search), { replace: true });
    return;
  }
  const main = h('main', { class: 'page', id: 'main', tabindex: '-1' }, spinner());
  const ctx = { params, query, navigate, render, projects, currentProject, isCurrent: () => seq === state.seq };
  if (opts.public) {
    clear(root).append(main);
  } else {
    const hdr = await header(opts.nav);
    if (seq !== state.seq) return;
    clear(root).append(h('a', { href: '#main', class: 'skip-link' }, 'Skip to content'), hdr, main);
  }
  try {
    const node = await fn(ctx);
    if (seq !== state.seq) return;
    clear(main).append(node);
  } catch (err) {
    if (seq !== state.seq) return;
    if (err && err.status === 401) return; // signed out by the handler
    clear(main).append(errorBox(err));
  }
}

// Links inside the app navigate without reloading the page.
document.addEventListener('click', (e) => {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const a = e.target.closest('a');
  if (!a || a.target || a.hasAttribute('download')) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || url.pathname.startsWith('/api/')) return;
  if (url.hash && url.pathname === location.pathname && url.search === location.search) return;
  e.preventDefault();
  if (a.dataset.action === 'sign-out') {
    signOut();
    return;
  }
  navigate(url.pathname + url.search);
});

window.addEventListener('popstate', render);
render();
