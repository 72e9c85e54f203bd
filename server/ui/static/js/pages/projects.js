// The project page: projects with their DSN and key, and the choice of
// the project the other pages show.

import * as api from '../api.js';
import { h, when, copyButton } from '../dom.js';

export async function renderProjects(ctx) {
  document.title = 'Project · backtrail';
  const ps = await ctx.projects();
  const cur = await ctx.currentProject();
  const field = (label, value, id) => h('div', { class: 'field' },
    h('div', { class: 'label' }, label),
    h('div', { class: 'codeline' }, h('code', { id }, value), copyButton(value, 'Copy ' + label)));
  return h('div', { class: 'projects-page' },
    h('div', { class: 'page-head' }, h('div', h('h1', 'Projects'), h('p', { class: 'muted' }, 'Point an SDK at a project’s DSN; send reports with its key.'))),
    ps.map((p) => {
      const isCur = cur && p.id === cur.id;
      const choose = h('button', { type: 'button', class: ['btn', !isCur && 'btn-primary'], disabled: isCur }, isCur ? 'Current project' : 'Use this project');
      choose.addEventListener('click', () => {
        api.setProject(p.id);
        ctx.render();
      });
      return h('section', { class: ['card section project', isCur && 'current'], dataset: { project: String(p.id) } },
        h('div', { class: 'section-head' },
          h('h2', { class: 'project-name' }, p.name, h('span', { class: 'muted' }, ` #${p.id}`)), choose),
        field('DSN', p.dsn, isCur ? 'dsn' : null),
        field('Key', p.key),
        h('p', { class: 'help' }, 'Sentry SDKs take the DSN. backtrail’s Go SDK and ', h('code', 'POST /api/v1/reports'),
          ' take the key as ', h('code', 'Authorization: Bearer KEY'), '. Created ', when(p.created_at), '.'));
    }));
}
