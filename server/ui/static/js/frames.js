// Stack rendering: frames innermost first, in-app frames highlighted,
// inlined frames marked, source positions as file:line.

import { h, basename, badge } from './dom.js';

// frameName is what a frame is called: its function, or module+address.
export function frameName(f) {
  if (f.function) return f.function;
  if (f.module && f.addr) return `${f.module} + ${f.addr}`;
  return f.addr || f.module || '<unknown>';
}

// position returns "file:line" for a frame, or "".
export function position(f) {
  if (!f.file) return '';
  return f.line ? `${basename(f.file)}:${f.line}` : basename(f.file);
}

// frameRow renders one frame as a list item.
export function frameRow(f, i) {
  const pos = position(f);
  return h('li', {
    class: ['frame', f.in_app && 'in-app', f.inlined && 'inlined', !f.function && 'unsymbolicated'],
    dataset: { index: String(i) },
  },
  h('span', { class: 'frame-index', 'aria-hidden': 'true' }, String(i)),
  h('div', { class: 'frame-main' },
    h('span', { class: 'frame-fn' }, f.function || f.module || f.addr || '<unknown>'),
    f.inlined && badge('inlined', 'inlined'),
    f.in_app && h('span', { class: 'visually-hidden' }, ' (in app)')),
  h('div', { class: 'frame-meta' },
    pos && h('span', { class: 'frame-pos', title: f.file + (f.line ? ':' + f.line : '') }, pos),
    f.module && f.function && h('span', { class: 'frame-module' }, f.module),
    f.addr && h('span', { class: 'frame-addr' }, f.addr)));
}

// stack renders a list of frames. Options: inAppOnly hides the frames
// that are not in the app (with a count of what was hidden).
export function stack(frames, { inAppOnly = false, truncated = false, label = 'Stack' } = {}) {
  const list = h('ol', { class: 'stack', 'aria-label': label });
  let hidden = 0;
  const flush = () => {
    if (hidden) list.appendChild(h('li', { class: 'frame-gap muted' }, `${hidden} frame${hidden === 1 ? '' : 's'} not in app hidden`));
    hidden = 0;
  };
  (frames || []).forEach((f, i) => {
    if (inAppOnly && !f.in_app) { hidden++; return; }
    flush();
    list.appendChild(frameRow(f, i));
  });
  flush();
  if (!frames || frames.length === 0) list.appendChild(h('li', { class: 'frame-gap muted' }, 'No frames.'));
  if (truncated) list.appendChild(h('li', { class: 'frame-gap muted' }, 'Outer frames were left out by the reporter.'));
  return list;
}
