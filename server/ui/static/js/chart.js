// Small SVG charts: sparklines for the issues list and the hourly event
// chart of an issue page.

import { h, s, num } from './dom.js';

// sparkline draws counts (oldest first) as bars. step names one bucket
// ("hour", "day") for the accessible label.
export function sparkline(counts, step) {
  const w = 100, hgt = 24, n = counts.length || 1;
  const max = Math.max(1, ...counts);
  const total = counts.reduce((a, b) => a + b, 0);
  const bw = w / n;
  const label = `${num(total)} events in the last ${n} ${step}s`;
  const svg = s('svg', { class: 'sparkline', viewBox: `0 0 ${w} ${hgt}`, width: w, height: hgt, preserveAspectRatio: 'none', role: 'img', 'aria-label': label },
    s('title', null, label),
    s('line', { x1: 0, y1: hgt - 0.5, x2: w, y2: hgt - 0.5, class: 'spark-base' }));
  counts.forEach((c, i) => {
    if (!c) return;
    const bh = Math.max(2, (c / max) * (hgt - 2));
    svg.appendChild(s('rect', { x: (i * bw + 0.5).toFixed(2), y: (hgt - bh).toFixed(2), width: Math.max(1, bw - 1).toFixed(2), height: bh.toFixed(2), class: 'spark-bar' }));
  });
  return svg;
}

// hourlyChart draws an issue's events per hour over the last days days,
// from buckets [{hour, count}], with a tooltip for the hovered hour.
export function hourlyChart(buckets, days = 14, now = Date.now()) {
  const H = 3600e3;
  const end = Math.floor(now / H) * H + H; // end of the current hour
  const n = days * 24;
  const start = end - n * H;
  const counts = new Array(n).fill(0);
  for (const b of buckets || []) {
    const k = Math.floor((new Date(b.hour).getTime() - start) / H);
    if (k >= 0 && k < n) counts[k] += b.count;
  }
  const total = counts.reduce((a, b) => a + b, 0);
  const max = Math.max(1, ...counts);
  const hgt = 64;
  const svg = s('svg', {
    class: 'hourly', viewBox: `0 0 ${n} ${hgt}`, preserveAspectRatio: 'none', role: 'img', 'data-total': total,
    'aria-label': `${num(total)} events in the last ${days} days, at most ${num(max)} in one hour`,
  });
  for (let d = 1; d < days; d++) svg.appendChild(s('line', { x1: d * 24, x2: d * 24, y1: 0, y2: hgt, class: 'grid' }));
  counts.forEach((c, i) => {
    if (!c) return;
    const bh = Math.max(2, (c / max) * (hgt - 4));
    svg.appendChild(s('rect', { x: i, y: hgt - bh, width: 1, height: bh, class: 'bar', 'data-count': c }));
  });
  const cursor = s('rect', { x: 0, y: 0, width: 1, height: hgt, class: 'cursor', visibility: 'hidden' });
  svg.appendChild(cursor);
  const tip = h('div', { class: 'chart-tip', hidden: true });
  const wrap = h('div', { class: 'chart' },
    h('div', { class: 'chart-head' },
      h('span', { class: 'chart-total' }, `Last ${days} days`),
      h('span', { class: 'muted' }, `${num(total)} event${total === 1 ? '' : 's'} · max ${num(max)}/h`)),
    h('div', { class: 'chart-plot' }, svg, tip),
    h('div', { class: 'chart-axis muted', 'aria-hidden': 'true' },
      h('span', new Date(start).toLocaleDateString(undefined, { month: 'short', day: 'numeric' })),
      h('span', new Date(start + n * H / 2).toLocaleDateString(undefined, { month: 'short', day: 'numeric' })),
      h('span', 'now')));
  if (!total) wrap.appendChild(h('p', { class: 'chart-empty muted' }, `No events in the last ${days} days.`));
  svg.addEventListener('pointermove', (e) => {
    const r = svg.getBoundingClientRect();
    const i = Math.min(n - 1, Math.max(0, Math.floor(((e.clientX - r.left) / r.width) * n)));
    cursor.setAttribute('x', i);
    cursor.setAttribute('visibility', 'visible');
    const t = new Date(start + i * H);
    tip.textContent = `${t.toLocaleString(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' })} · ${num(counts[i])} event${counts[i] === 1 ? '' : 's'}`;
    tip.hidden = false;
    const x = ((i + 0.5) / n) * r.width;
    tip.style.left = Math.min(Math.max(x, 60), r.width - 60) + 'px';
  });
  svg.addEventListener('pointerleave', () => {
    cursor.setAttribute('visibility', 'hidden');
    tip.hidden = true;
  });
  return wrap;
}
