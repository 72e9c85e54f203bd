// The sign-in page: the admin token, checked against the API and kept in
// localStorage.

import * as api from '../api.js';
import { h, icon } from '../dom.js';

export async function renderSignIn(ctx) {
  document.title = 'Sign in · backtrail';
  const next = ctx.query.get('next');
  const safeNext = next && next.startsWith('/') && !next.startsWith('//') ? next : '/issues';
  const input = h('input', {
    id: 'token', name: 'token', type: 'password', class: 'input', autocomplete: 'current-password',
    required: true, spellcheck: 'false', placeholder: 'Paste the admin token', 'aria-describedby': 'token-help',
  });
  const err = h('p', { class: 'form-error', role: 'alert', id: 'sign-in-error' });
  const button = h('button', { type: 'submit', class: 'btn btn-primary btn-block' }, 'Sign in');
  const form = h('form', { class: 'signin-form', id: 'sign-in-form', novalidate: true },
    h('label', { for: 'token', class: 'label' }, 'Admin token'),
    input,
    h('p', { id: 'token-help', class: 'help' },
      'Find it in ', h('code', 'DATA/admin-token'), ' (printed when ', h('code', 'backtrail serve'),
      ' starts) or in BACKTRAIL_ADMIN_TOKEN. It is kept in this browser only.'),
    err,
    button);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const t = input.value.trim();
    err.textContent = '';
    if (!t) {
      err.textContent = 'Enter the admin token.';
      input.focus();
      return;
    }
    button.disabled = true;
    button.textContent = 'Signing in…';
    try {
      await api.check(t);
      api.setToken(t);
      ctx.navigate(safeNext, { replace: true });
    } catch (e2) {
      err.textContent = e2.status === 401 ? 'That token was not accepted.' : 'Sign-in failed: ' + e2.message;
      button.disabled = false;
      button.textContent = 'Sign in';
      input.select();
    }
  });
  queueMicrotask(() => input.focus());
  return h('div', { class: 'signin' },
    h('div', { class: 'signin-card card' },
      h('div', { class: 'signin-brand' }, h('img', { src: '/favicon.svg', alt: '', width: 36, height: 36 }),
        h('div', h('h1', 'backtrail'), h('p', { class: 'muted' }, 'Crash, hang and audit reports'))),
      form,
      h('p', { class: 'signin-foot muted' }, icon('key', 14), ' Admin access to every project on this server.')));
}
