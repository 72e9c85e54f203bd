// The missing-symbols page: modules that events had frames in but no
// debug file for, with what to upload and how many events wait for it.

import * as api from '../api.js';
import { h, when, num, copyButton, empty } from '../dom.js';

// what says which file would give symbols for a module.
function what(m) {
  const name = m.name || 'the module';
  if (m.code_id && !/^[0-9a-f]{32}$/i.test(m.code_id.replace(/-/g, ''))) {
    return [`The ELF file of ${name} with build id `, h('span', { class: 'mono' }, m.code_id), ', or its separate .debug file.'];
  }
  if (/\.(so|so\.\d+)/.test(name)) return [`${name}, or its .debug file (from the -dbg/-dbgsym package), with this build id.`];
  return [`The .dSYM of ${name}`, m.arch ? ` (${m.arch})` : '', ', or the Mach-O binary itself if it was built with debug info.'];
}

export async function renderMissing(ctx) {
  document.title = 'Missing symbols · backtrail';
  const proj = await ctx.currentProject();
  const ms = await api.get('/api/v1/missing-symbols', { project: proj ? proj.id : '' });
  ms.sort((a, b) => b.events - a.events || (a.name || '').localeCompare(b.name || ''));
  const cmd = `backtrail upload --url ${location.origin} --token "$BACKTRAIL_ADMIN_TOKEN" --project ${proj ? proj.name : 'default'} PATH...`;
  const howto = h('div', { class: 'card section howto' },
    h('h2', { class: 'card-title' }, 'How to fix'),
    h('p', 'Upload the debug files with these ids, on the ', h('a', { href: '/debug-files' }, 'Debug files'),
      ' page or from a build machine. Events that lacked them are symbolicated again right away.'),
    h('div', { class: 'codeline' }, h('code', { id: 'upload-command' }, cmd), copyButton(cmd, 'Copy command')),
    h('p', { class: 'help' }, 'System libraries (UIKit, libsystem_*) are often listed: their symbols come from the device’s OS build, and frames in them stay unsymbolicated without them.'));
  if (!ms.length) {
    return h('div', h('div', { class: 'page-head' }, h('h1', 'Missing symbols')),
      h('div', { class: 'card' }, empty('No missing symbols.', 'Every module that events had frames in had a debug file.')));
  }
  const total = ms.reduce((a, m) => Math.max(a, m.events), 0);
  return h('div', { class: 'missing-page' },
    h('div', { class: 'page-head' },
      h('div', h('h1', 'Missing symbols'),
        h('p', { class: 'muted' }, `${num(ms.length)} modules lacked debug files; up to ${num(total)} events wait for one.`))),
    howto,
    h('div', { class: 'card card-flush' }, h('div', { class: 'table-wrap' },
      h('table', { class: 'table', id: 'missing' },
        h('thead', h('tr',
          h('th', { scope: 'col' }, 'Module'),
          h('th', { scope: 'col' }, 'Debug ID'),
          h('th', { scope: 'col' }, 'What to upload'),
          h('th', { scope: 'col', class: 'num' }, 'Events'),
          h('th', { scope: 'col' }, 'Last seen'))),
        h('tbody', ms.map((m) => h('tr', { dataset: { debugId: m.debug_id } },
          h('td', h('div', { class: 'strong' }, m.name || '(unnamed)'), m.arch && h('div', { class: 'muted' }, m.arch)),
          h('td', h('div', { class: 'id-cell' }, h('span', { class: 'mono' }, m.debug_id), copyButton(m.debug_id, 'Copy debug id')),
            m.code_id && m.code_id.replace(/-/g, '') !== m.debug_id.replace(/-/g, '') ? h('div', { class: 'mono muted small' }, 'code ', m.code_id) : null),
          h('td', { class: 'what' }, what(m)),
          h('td', { class: 'num strong' }, num(m.events)),
          h('td', when(m.last_seen)))))))));
}
