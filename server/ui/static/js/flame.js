// A flame graph in SVG, written for backtrail: stacks (innermost frame
// first, each with a value: a hang sample's weight, a snapshot stack's
// goroutine count, an audit entry's call count) are merged into a tree by
// function, the outermost frame at the bottom. Widths are proportional to
// values. Hover or focus shows a tooltip; click, Enter or Space zooms into
// a frame; Escape zooms out; the arrow keys move between frames.

import { h, s, clear, num } from './dom.js';
import { frameName, position } from './frames.js';

const ROW = 20; // px per stack level
const FONT = '11.5px ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", "Liberation Mono", monospace';

// frameKey says which frames merge into one node: frames of the same
// function (or, unsymbolicated, the same module and address).
function frameKey(f) {
  return f.function ? (f.module || '') + '\u0000' + f.function : (f.module || '') + '\u0000' + (f.addr || '?');
}

// buildTree merges stacks [{frames, value}] into a tree rooted at a node
// for all of them.
export function buildTree(stacks, rootName = 'all') {
  const root = { name: rootName, frame: null, value: 0, depth: 0, parent: null, kids: new Map(), children: [] };
  for (const st of stacks) {
    const v = st.value > 0 ? st.value : 0;
    if (!v) continue;
    root.value += v;
    let node = root;
    const frames = st.frames || [];
    for (let i = frames.length - 1; i >= 0; i--) {
      const f = frames[i];
      const k = frameKey(f);
      let c = node.kids.get(k);
      if (!c) {
        c = { name: frameName(f), frame: f, value: 0, depth: node.depth + 1, parent: node, kids: new Map(), children: [], positions: new Set(), inApp: false };
        node.kids.set(k, c);
      }
      c.value += v;
      const p = position(f);
      if (p) c.positions.add(p);
      if (f.in_app) c.inApp = true;
      node = c;
    }
  }
  let maxDepth = 0;
  const order = (n, x0) => {
    n.x0 = x0;
    maxDepth = Math.max(maxDepth, n.depth);
    n.children = [...n.kids.values()].sort((a, b) => b.value - a.value || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    let x = x0;
    for (const c of n.children) {
      order(c, x);
      x += c.value;
    }
  };
  order(root, 0);
  root.maxDepth = maxDepth;
  return root;
}

function hash(str) {
  let x = 2166136261;
  for (let i = 0; i < str.length; i++) x = Math.imul(x ^ str.charCodeAt(i), 16777619);
  return x >>> 0;
}

// colorClass picks a palette entry: warm for the app's frames, cool for
// the rest, grey for bare addresses; the hue is stable per package.
function colorClass(n) {
  if (!n.frame) return 'fg-c-root';
  if (!n.frame.function) return 'fg-c-addr';
  const pkg = n.name.replace(/[.(:[].*$/, '') || n.name;
  return (n.inApp ? 'fg-c-app' : 'fg-c-sys') + (hash(pkg) % 6);
}

let measure = null;
function charWidth() {
  if (!measure) {
    const c = document.createElement('canvas').getContext('2d');
    c.font = FONT;
    measure = c.measureText('abcdefghijklmnopqrstuvwxyz0123456789').width / 36 || 7;
  }
  return measure;
}

// FlameGraph draws a tree from buildTree. unit names what values count
// ("samples", "goroutines", "calls").
export class FlameGraph {
  constructor(root, { unit = 'samples', label = 'Flame graph' } = {}) {
    this.root = root;
    this.unit = unit;
    this.focus = root; // the zoomed node
    this.active = root; // the keyboard cursor
    this.term = '';
    this.width = 0;
    this.svg = s('svg', { class: 'flame-svg', role: 'group', 'aria-label': `${label}: ${num(root.value)} ${unit}; arrow keys move, Enter zooms, Escape zooms out` });
    this.tip = h('div', { class: 'flame-tip', role: 'tooltip', hidden: true });
    this.crumbs = h('nav', { class: 'flame-crumbs', 'aria-label': 'Zoom path' });
    this.status = h('p', { class: 'flame-status muted', 'aria-live': 'polite' });
    this.plot = h('div', { class: 'flame-plot' }, this.svg, this.tip);
    this.el = h('div', { class: 'flame' }, this.crumbs, this.plot, this.status);
    this.nodes = new Map(); // <g> → node, for the events
    this.svg.addEventListener('click', (e) => {
      const n = this.nodeAt(e.target);
      if (n) this.zoom(n, true);
    });
    this.svg.addEventListener('pointermove', (e) => {
      const n = this.nodeAt(e.target);
      if (n) this.showTip(n, e.clientX, e.clientY);
      else this.tip.hidden = true;
    });
    this.svg.addEventListener('pointerleave', () => { this.tip.hidden = true; });
    this.svg.addEventListener('keydown', (e) => this.key(e));
    this.svg.addEventListener('focusin', (e) => {
      const n = this.nodeAt(e.target);
      if (n) {
        const r = e.target.getBoundingClientRect();
        this.showTip(n, r.left + Math.min(r.width / 2, 160), r.top);
      }
    });
    this.svg.addEventListener('focusout', () => { this.tip.hidden = true; });
    this.ro = new ResizeObserver(() => {
      const w = Math.floor(this.plot.clientWidth);
      if (w && w !== this.width) this.draw();
    });
    this.ro.observe(this.plot);
  }

  nodeAt(target) {
    const g = target.closest && target.closest('g.fg-node');
    return g ? this.nodes.get(g) : null;
  }

  // zoom makes n span the whole width.
  zoom(n, focusIt) {
    this.focus = n;
    this.active = n;
    this.draw();
    if (focusIt) this.focusActive();
  }

  // search highlights the frames whose name or position contains term.
  search(term) {
    this.term = (term || '').toLowerCase();
    this.draw();
  }

  matches(n) {
    if (!this.term || !n.frame) return false;
    if (n.name.toLowerCase().includes(this.term)) return true;
    for (const p of n.positions) if (p.toLowerCase().includes(this.term)) return true;
    return false;
  }

  showTip(n, cx, cy) {
    const total = this.root.value;
    const lines = [
      h('div', { class: 'flame-tip-fn' }, n.name),
      n.positions && n.positions.size ? h('div', { class: 'flame-tip-pos' }, [...n.positions].slice(0, 4).join(', ')) : null,
      n.frame && n.frame.module ? h('div', { class: 'muted' }, n.frame.module) : null,
      h('div', { class: 'flame-tip-val' }, `${num(n.value)} ${this.unit} · ${(100 * n.value / total).toFixed(1)}%`,
        this.focus !== this.root && this.focus !== n ? ` · ${(100 * n.value / this.focus.value).toFixed(1)}% of zoom` : ''),
      n.inApp ? h('div', { class: 'flame-tip-app' }, 'in app') : null,
      n.frame && n.frame.inlined ? h('div', { class: 'muted' }, 'inlined') : null,
    ];
    clear(this.tip).append(...lines.filter(Boolean));
    this.tip.hidden = false;
    const pr = this.plot.getBoundingClientRect();
    const tw = this.tip.offsetWidth, th = this.tip.offsetHeight;
    let x = cx - pr.left + 14, y = cy - pr.top - th - 10;
    if (x + tw > pr.width) x = Math.max(0, cx - pr.left - tw - 14);
    if (y < 0) y = cy - pr.top + 18;
    this.tip.style.left = x + 'px';
    this.tip.style.top = y + 'px';
  }

  focusActive() {
    for (const [g, n] of this.nodes) {
      if (n === this.active) {
        g.focus();
        return;
      }
    }
  }

  key(e) {
    const n = this.active;
    let next = null;
    switch (e.key) {
      case 'ArrowUp': next = n.children.find((c) => this.visible(c)) || null; break;
      case 'ArrowDown': next = n.parent; break;
      case 'ArrowLeft':
      case 'ArrowRight': {
        const row = [...this.nodes.values()].filter((x) => x.depth === n.depth).sort((a, b) => a.x0 - b.x0);
        const i = row.indexOf(n);
        next = row[i + (e.key === 'ArrowLeft' ? -1 : 1)] || null;
        break;
      }
      case 'Home': next = this.focus; break;
      case 'Enter':
      case ' ': e.preventDefault(); this.zoom(n, true); return;
      case 'Escape':
        if (this.focus !== this.root) {
          e.preventDefault();
          const back = this.focus.parent || this.root;
          this.zoom(back, true);
        }
        return;
      default: return;
    }
    e.preventDefault();
    if (next) {
      this.active = next;
      this.setTabStops();
      this.focusActive();
    }
  }

  visible(n) {
    // Ancestors of the zoomed node and its descendants are drawn.
    for (let a = this.focus; a; a = a.parent) if (a === n) return true;
    for (let a = n; a; a = a.parent) if (a === this.focus) return true;
    return false;
  }

  setTabStops() {
    for (const [g, n] of this.nodes) g.setAttribute('tabindex', n === this.active ? '0' : '-1');
  }

  draw() {
    const W = Math.max(200, Math.floor(this.plot.clientWidth || 800));
    this.width = W;
    const H = (this.root.maxDepth + 1) * ROW;
    const f = this.focus;
    const scale = W / f.value;
    const cw = charWidth();
    clear(this.svg);
    this.nodes.clear();
    this.svg.setAttribute('width', W);
    this.svg.setAttribute('height', H);
    this.svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    this.svg.classList.toggle('searching', !!this.term);
    let matched = 0;
    const walk = (n, topMatch) => {
      let x, w;
      if (n.depth < f.depth || n === f) {
        x = 0;
        w = W; // an ancestor of the zoomed node, or the node itself
      } else {
        x = (n.x0 - f.x0) * scale;
        w = n.value * scale;
      }
      if (w < 0.5) return; // too narrow to see, and so are its children
      const isMatch = this.matches(n);
      if (isMatch && !topMatch) matched += n.value;
      const y = H - (n.depth + 1) * ROW;
      const label = n === this.root ? `${n.name} (${num(n.value)} ${this.unit})` : n.name;
      const g = s('g', {
        class: ['fg-node', colorClass(n), n.frame && n.frame.inlined && 'fg-inlined', n.depth < f.depth && 'fg-ancestor', isMatch && 'fg-match', n === this.active && 'fg-active'],
        transform: `translate(${x.toFixed(2)},${y})`, tabindex: '-1', role: 'button',
        'aria-label': `${n.name}, ${num(n.value)} ${this.unit}, ${(100 * n.value / this.root.value).toFixed(1)}%`,
        'data-name': n.name, 'data-value': n.value, 'data-depth': n.depth,
      },
      s('rect', { width: Math.max(0.5, w - 1).toFixed(2), height: ROW - 1, rx: 2 }));
      const chars = Math.floor((w - 8) / cw);
      if (chars >= 3) {
        const text = label.length <= chars ? label : label.slice(0, chars - 1) + '…';
        g.appendChild(s('text', { x: 4, y: ROW / 2 + 4 }, text));
      }
      this.svg.appendChild(g);
      this.nodes.set(g, n);
      if (n.depth < f.depth) {
        // Only the path to the zoomed node is drawn below it.
        for (const c of n.children) {
          let onPath = false;
          for (let a = f; a; a = a.parent) if (a === c) onPath = true;
          if (onPath) walk(c, topMatch || isMatch);
        }
      } else {
        for (const c of n.children) walk(c, topMatch || isMatch);
      }
    };
    walk(this.root, false);
    if (![...this.nodes.values()].includes(this.active)) this.active = f;
    this.setTabStops();
    this.drawCrumbs();
    const parts = [];
    if (this.term) parts.push(`${num(matched)} of ${num(this.root.value)} ${this.unit} (${(100 * matched / this.root.value).toFixed(1)}%) match “${this.term}”.`);
    if (f !== this.root) parts.push(`Zoomed into ${f.name}: ${num(f.value)} ${this.unit}.`);
    this.status.textContent = parts.join(' ');
  }

  drawCrumbs() {
    clear(this.crumbs);
    this.crumbs.hidden = this.focus === this.root;
    const path = [];
    for (let a = this.focus; a; a = a.parent) path.unshift(a);
    path.forEach((n, i) => {
      if (i) this.crumbs.appendChild(h('span', { class: 'crumb-sep', 'aria-hidden': 'true' }, '›'));
      if (i === path.length - 1) {
        this.crumbs.appendChild(h('span', { class: 'crumb-current', 'aria-current': 'true' }, n === this.root ? 'all' : n.name));
      } else {
        const b = h('button', { type: 'button', class: 'crumb' }, n === this.root ? 'all' : n.name);
        b.addEventListener('click', () => this.zoom(n, true));
        this.crumbs.appendChild(b);
      }
    });
  }

  // destroy stops watching the size.
  destroy() { this.ro.disconnect(); }
}
