// The debug-files page: upload (the raw file as the request body, with
// progress), and the list with ids, architectures, features and sizes,
// each with a delete button that asks for confirmation.

import * as api from '../api.js';
import { h, when, bytes, num, copyButton, empty, icon, badge } from '../dom.js';

export async function renderDebugFiles(ctx) {
  document.title = 'Debug files · backtrail';
  const proj = await ctx.currentProject();
  const files = await api.get('/api/v1/debug-files', { project: proj ? proj.id : '' });
  files.sort((a, b) => new Date(b.uploaded_at) - new Date(a.uploaded_at) || a.name.localeCompare(b.name));

  // Upload.
  const input = h('input', { type: 'file', id: 'upload-file', class: 'file-input', required: true });
  const bar = h('progress', { max: 1, value: 0, class: 'progress', hidden: true });
  const msg = h('p', { class: 'upload-msg', role: 'status', id: 'upload-status' });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary', id: 'upload-submit' }, icon('upload'), 'Upload');
  const form = h('form', { class: 'upload-form', id: 'upload-form' },
    h('label', { class: 'dropzone', for: 'upload-file' },
      h('span', { class: 'dropzone-title' }, 'Choose a debug file'),
      h('span', { class: 'muted' }, 'ELF or Mach-O (executables, libraries, .debug files, Go binaries), or a zip of a .dSYM bundle'),
      input),
    h('div', { class: 'upload-row' }, submit, bar, msg));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const f = input.files && input.files[0];
    if (!f) {
      msg.textContent = 'Choose a file first.';
      return;
    }
    submit.disabled = true;
    bar.hidden = false;
    bar.value = 0;
    msg.textContent = `Uploading ${f.name}…`;
    try {
      const added = await api.upload('/api/v1/debug-files', { project: proj ? proj.name : 'default', name: f.name }, f, (p) => { bar.value = p; });
      msg.textContent = `Uploaded ${f.name}: ${added.length} object${added.length === 1 ? '' : 's'} (${added.map((x) => x.arch).join(', ')}).`;
      setTimeout(() => ctx.render(), 600);
    } catch (err) {
      msg.textContent = 'Upload failed: ' + err.message;
      msg.classList.add('form-error');
      submit.disabled = false;
      bar.hidden = true;
    }
  });

  const del = (f) => {
    const cell = h('div', { class: 'del-cell' });
    const start = h('button', { type: 'button', class: 'btn btn-ghost btn-icon btn-danger', 'aria-label': `Delete ${f.name} (${f.arch})`, title: 'Delete', dataset: { action: 'delete' } }, icon('trash'));
    const confirm = h('button', { type: 'button', class: 'btn btn-danger-solid btn-sm', dataset: { action: 'confirm-delete' } }, 'Delete');
    const cancel = h('button', { type: 'button', class: 'btn btn-sm' }, 'Cancel');
    start.addEventListener('click', () => {
      cell.replaceChildren(confirm, cancel);
      confirm.focus();
    });
    cancel.addEventListener('click', () => {
      cell.replaceChildren(start);
      start.focus();
    });
    confirm.addEventListener('click', async () => {
      confirm.disabled = true;
      try {
        await api.del(`/api/v1/debug-files/${f.id}`);
        ctx.render();
      } catch (err) {
        cell.replaceChildren(h('span', { class: 'form-error' }, err.message));
      }
    });
    cell.append(start);
    return cell;
  };

  const total = files.reduce((a, f) => a + f.size, 0);
  const list = files.length
    ? h('div', { class: 'table-wrap' }, h('table', { class: 'table', id: 'debug-files' },
      h('thead', h('tr',
        h('th', { scope: 'col' }, 'Name'),
        h('th', { scope: 'col' }, 'Debug ID'),
        h('th', { scope: 'col' }, 'Arch'),
        h('th', { scope: 'col' }, 'Features'),
        h('th', { scope: 'col', class: 'num' }, 'Size'),
        h('th', { scope: 'col' }, 'Uploaded'),
        h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Actions')))),
      h('tbody', files.map((f) => h('tr', { dataset: { id: String(f.id), debugId: f.debug_id } },
        h('td', h('div', { class: 'strong mono' }, f.name), h('div', { class: 'muted small' }, `${f.format} ${f.kind}`)),
        h('td', h('div', { class: 'id-cell' }, h('span', { class: 'mono' }, f.debug_id), copyButton(f.debug_id, 'Copy debug id')),
          f.code_id && f.code_id.replace(/-/g, '') !== f.debug_id.replace(/-/g, '') ? h('div', { class: 'mono muted small trunc', title: f.code_id }, 'code ', f.code_id) : null),
        h('td', f.arch),
        h('td', h('div', { class: 'features' }, (f.features || []).map((x) => badge(x, 'feature')))),
        h('td', { class: 'num' }, bytes(f.size)),
        h('td', when(f.uploaded_at)),
        h('td', { class: 'actions-cell' }, del(f)))))))
    : empty('No debug files yet.', 'Upload dSYMs, ELF binaries or .debug files so crashes get function names and lines.');

  return h('div', { class: 'debug-page' },
    h('div', { class: 'page-head' },
      h('div', h('h1', 'Debug files'), h('p', { class: 'muted' }, `${num(files.length)} objects, ${bytes(total)}${proj ? ' in project ' + proj.name : ''}`))),
    h('section', { class: 'card section' }, h('h2', { class: 'card-title' }, 'Upload'), form),
    h('div', { class: 'card card-flush' }, list));
}
