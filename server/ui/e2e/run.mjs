// End-to-end test of backtrail's web UI in Chromium, run by
// server/ui/e2e_test.go (TestBrowser) against a server it started and
// loaded with test data. It checks what each page shows against the JSON
// API and takes a screenshot of each page.
//
// Environment: BACKTRAIL_URL, BACKTRAIL_TOKEN (admin), BACKTRAIL_REPO (the
// repository root), BACKTRAIL_E2E_LOOP (the loop name of the test's hang
// report), BACKTRAIL_ARTIFACTS (screenshot directory), CHROMIUM (browser).

import { chromium } from 'playwright-core';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

const BASE = must('BACKTRAIL_URL');
const TOKEN = must('BACKTRAIL_TOKEN');
const REPO = must('BACKTRAIL_REPO');
const LOOP = must('BACKTRAIL_E2E_LOOP');
const SHOTS = must('BACKTRAIL_ARTIFACTS');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

function must(name) {
  const v = process.env[name];
  if (!v) throw new Error(`run.mjs: set ${name}`);
  return v;
}

let step = '';
let checks = 0;

function assert(cond, msg) {
  checks++;
  if (!cond) throw new Error(`[${step}] ${msg}`);
}

function eq(have, want, msg) {
  const h = JSON.stringify(have), w = JSON.stringify(want);
  assert(h === w, `${msg}: have ${h}, want ${w}`);
}

function near(have, want, tol, msg) {
  assert(Math.abs(have - want) <= tol, `${msg}: have ${have}, want ${want} ± ${tol}`);
}

function begin(name) {
  step = name;
  console.log(`--- ${name}`);
}

async function api(p) {
  const r = await fetch(BASE + p, { headers: { Authorization: 'Bearer ' + TOKEN } });
  if (!r.ok) throw new Error(`GET ${p}: ${r.status} ${await r.text()}`);
  return r.json();
}

const userDataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'backtrail-chromium-'));
const downloads = await fs.mkdtemp(path.join(os.tmpdir(), 'backtrail-downloads-'));
// Playwright passes --user-data-dir itself (launchPersistentContext) and
// adds --headless for headless: true.
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: CHROMIUM,
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  viewport: { width: 1280, height: 900 },
  colorScheme: 'light',
  locale: 'en-US',
  timezoneId: 'UTC',
  acceptDownloads: true,
  downloadsPath: downloads,
});
await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: BASE });
const page = context.pages()[0] || await context.newPage();
page.setDefaultTimeout(15000);

// Anything the page logs as an error, any uncaught exception (CSP
// violations included) and any request off the server fails the test.
const problems = [];
page.on('pageerror', (e) => problems.push(`[${step}] page error: ${e.message}`));
page.on('console', (m) => {
  if (m.type() === 'error' && !/status of 401/.test(m.text())) problems.push(`[${step}] console error: ${m.text()}`);
});
page.on('request', (r) => {
  const u = r.url();
  if (!u.startsWith(BASE + '/') && !u.startsWith('blob:') && !u.startsWith('data:')) problems.push(`[${step}] request off the server: ${u}`);
});

async function shot(name) {
  await page.waitForTimeout(150); // let hover styles and fonts settle
  await page.screenshot({ path: path.join(SHOTS, name), fullPage: true });
  console.log(`screenshot ${name}`);
}

async function open(p, selector) {
  await page.goto(BASE + p);
  await page.waitForSelector(selector);
}

const text = (sel) => page.locator(sel).first().textContent();
const texts = (sel) => page.$$eval(sel, (els) => els.map((e) => e.textContent));
const rowIDs = () => page.$$eval('#issues tbody tr', (rs) => rs.map((r) => Number(r.dataset.id)));

try {
  begin('sign in');
  await page.goto(BASE + '/issues');
  await page.waitForURL((u) => u.pathname === '/sign-in');
  eq(new URL(page.url()).searchParams.get('next'), '/issues', 'sign-in remembers where to go');
  await page.waitForSelector('#token');
  await shot('01-sign-in.png');
  await page.fill('#token', 'not-the-token');
  await page.click('#sign-in-form button[type=submit]');
  await page.waitForFunction(() => /not accepted/.test(document.querySelector('#sign-in-error').textContent));
  eq(await page.evaluate(() => localStorage.getItem('backtrail.token')), null, 'a refused token is not kept');
  await page.fill('#token', TOKEN);
  await page.click('#sign-in-form button[type=submit]');
  await page.waitForURL((u) => u.pathname === '/issues');
  await page.waitForSelector('#issues tbody tr');
  eq(await page.evaluate(() => localStorage.getItem('backtrail.token')), TOKEN, 'token kept in localStorage');

  begin('issues list');
  const projects = await api('/api/v1/projects');
  const proj = projects[0];
  const unresolved = await api(`/api/v1/issues?project=${proj.id}&status=unresolved&limit=1000`);
  assert(unresolved.length > 25, `more issues (${unresolved.length}) than one page`);
  eq(await rowIDs(), unresolved.slice(0, 25).map((i) => i.id), 'page 1 rows are the API’s first 25 unresolved issues, newest first');
  const all = await api(`/api/v1/issues?project=${proj.id}&limit=1000`);
  const hang = all.find((i) => i.kind === 'hang' && i.title.includes(LOOP));
  assert(hang, `hang issue of loop ${LOOP}`);
  const cart = all.find((i) => i.culprit.includes('cart.(*Cart).Add'));
  const nullDeref = all.find((i) => i.culprit.startsWith('-[CRLCrashNULL crash]'));
  const xss = all.find((i) => i.title.includes('<script>'));
  assert(cart && nullDeref && xss, 'the Go crash, CrashProbe NULL dereference and the markup test issues exist');
  eq(await page.$$eval(`#issues tr[data-id="${hang.id}"] .spark-bar`, (b) => b.length), 1, 'fresh hang issue: one sparkline bar (this hour)');
  eq(await page.$$eval(`#issues tr[data-id="${cart.id}"] .spark-bar`, (b) => b.length), 0, '2025 crash: no bar in the last 14 days');
  const xssTitle = await text(`#issues tr[data-id="${xss.id}"] .issue-title`);
  assert(xssTitle.includes('<script>window.xss=2</script>'), `markup in a title shows as text: ${xssTitle}`);
  eq(await page.evaluate(() => [typeof window.xss, document.querySelectorAll('#issues script, #xss, #xss-frame').length]), ['undefined', 0], 'markup in event data is not run or parsed');
  await shot('02-issues.png');
  let culprits = await texts('#issues .issue-culprit');
  await page.click('.pager a[rel=next]');
  await page.waitForURL((u) => u.searchParams.get('page') === '1');
  await page.waitForFunction((n) => document.querySelectorAll('#issues tbody tr').length === n, unresolved.length - 25);
  eq(await rowIDs(), unresolved.slice(25).map((i) => i.id), 'page 2 rows');
  culprits = culprits.concat(await texts('#issues .issue-culprit'));
  for (const c of ['-[CRLCrashNULL crash] (CRLCrashNULL.m:37)', '-[CRLCrashAbort crash] (CRLCrashAbort.m:37)', '-[CRLCrashTrap crash] (CRLCrashTrap.m:37)',
    '-[CRLCrashObjCException crash] (CRLCrashObjCException.m:41)', '-[CRLCrashGarbage crash] (CRLCrashGarbage.m:52)']) {
    assert(culprits.includes(c), `CrashProbe issue ${c} listed (symbolicated from the dSYMs)`);
  }

  begin('keyboard');
  await open('/issues', '#issues tbody tr');
  for (let i = 0; i < 40 && !(await page.evaluate(() => document.activeElement.matches('.issue-title'))); i++) await page.keyboard.press('Tab');
  const first = await page.evaluate(() => document.activeElement.closest('tr').dataset.id);
  eq(Number(first), unresolved[0].id, 'Tab reaches the first issue');
  await page.keyboard.press('Enter');
  await page.waitForURL((u) => u.pathname === `/issues/${first}`);
  await page.waitForSelector('#issue-title');

  begin('filter by kind and status');
  await open('/issues', '#issues tbody tr');
  await page.selectOption('#kind-filter', 'hang');
  await page.waitForURL((u) => u.searchParams.get('kind') === 'hang');
  await page.waitForFunction(() => {
    const rs = [...document.querySelectorAll('#issues tbody tr')];
    return rs.length > 0 && rs.every((r) => r.dataset.kind === 'hang');
  });
  const hangs = await api(`/api/v1/issues?project=${proj.id}&kind=hang&status=unresolved`);
  eq(await rowIDs(), hangs.map((i) => i.id), 'kind=hang rows');
  eq(hangs.length, 2, 'two hang issues (report/testdata/hang.json and the test’s)');
  await shot('03-issues-hang.png');
  await page.click('#status-filter a[data-status=resolved]');
  await page.waitForURL((u) => u.searchParams.get('status') === 'resolved' && u.searchParams.get('kind') === 'hang');
  await page.waitForSelector('.empty');
  assert((await text('.empty')).includes('No issues match'), 'no resolved hang issues yet');
  await page.click('#status-filter a[data-status=all]');
  await page.waitForSelector('#issues tbody tr');
  eq((await rowIDs()).length, 2, 'status=all, kind=hang');

  begin('crash issue: threads, frames, in-app');
  await open(`/issues/${nullDeref.id}`, '#threads .thread.crashed .frame');
  const nullEvents = await api(`/api/v1/issues/${nullDeref.id}/events`);
  const nullEv = await api(`/api/v1/events/${nullEvents[0].id}?project=${nullDeref.project}`);
  const crashed = nullEv.threads.find((t) => t.crashed);
  const frames = await page.$$eval('#threads .thread.crashed .stack > .frame', (fs) => fs.map((f) => ({
    fn: f.querySelector('.frame-fn').textContent,
    pos: f.querySelector('.frame-pos') ? f.querySelector('.frame-pos').textContent : '',
    inApp: f.classList.contains('in-app'),
  })));
  eq(frames.length, crashed.frames.length, 'crashed thread: every frame shown');
  eq(frames.map((f) => f.inApp), crashed.frames.map((f) => !!f.in_app), 'in-app frames highlighted, and only those');
  eq(frames[0], { fn: '-[CRLCrashNULL crash]', pos: 'CRLCrashNULL.m:37', inApp: true }, 'top frame with file:line');
  eq(frames[1], { fn: '-[CRLDetailViewController doCrash]', pos: 'CRLDetailViewController.m:53', inApp: true }, 'second frame');
  const styles = await page.$$eval('#threads .thread.crashed .stack > .frame', (fs) => {
    const st = (f) => { const c = getComputedStyle(f); return c.backgroundColor + '|' + c.borderLeftColor; };
    return [st(fs.find((f) => f.classList.contains('in-app'))), st(fs.find((f) => !f.classList.contains('in-app')))];
  });
  assert(styles[0] !== styles[1], `in-app frames look different: ${styles}`);
  eq((await page.$$('#threads details.thread')).length, nullEv.threads.length, 'all threads listed');
  const exc = await text('#exception');
  assert(exc.includes('EXC_BAD_ACCESS') && exc.includes('Attempted to dereference null pointer.'), `exception shown: ${exc}`);
  await page.check('#in-app-only');
  await page.waitForFunction((n) => document.querySelectorAll('#threads .thread.crashed .stack > .frame').length === n, crashed.frames.filter((f) => f.in_app).length);
  assert((await text('#threads .thread.crashed .frame-gap')).includes('not in app hidden'), 'hidden frames are counted');
  await page.uncheck('#in-app-only');
  eq((await text('#issue-stats .big-number')).trim(), String(nullDeref.count), 'event count');
  eq(await page.$('#tab-flame'), null, 'no flame graph tab for a crash without samples');
  await shot('04-issue-crash.png');

  begin('Go crash: inlined frames, trail, raw download');
  await open(`/issues/${cart.id}`, '#trail .hop');
  const cartEv = await api(`/api/v1/events/${(await api(`/api/v1/issues/${cart.id}/events`))[0].id}?project=${cart.project}`);
  const inl = await page.$$eval('#threads .frame.inlined', (fs) => fs.map((f) => f.querySelector('.frame-fn').textContent + ' ' + f.querySelector('.badge-inlined').textContent));
  eq(inl, ['example.com/shop/cart.total inlined'], 'inlined frame marked');
  eq((await page.$$('#trail .hop')).length, cartEv.trail.length, 'trail hops');
  const hop = await text('#trail .hop');
  assert(hop.includes('example.com/shop/api.handle') && hop.includes('api.go:88') && hop.includes('1f2e3d4c5b6a7980'), `trail hop: ${hop}`);
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#download-raw')]);
  eq(dl.suggestedFilename(), `${cartEv.id}.json`, 'raw report file name');
  const got = await fs.readFile(await dl.path());
  const want = await fs.readFile(path.join(REPO, 'report', 'testdata', 'crash.json'));
  assert(got.equals(want), `raw report is the payload as posted (${got.length} vs ${want.length} bytes)`);
  await page.waitForFunction(() => /Saved/.test(document.querySelector('.dl-note').textContent));
  await shot('05-issue-trail.png');

  begin('hang flame graph');
  await open(`/issues/${hang.id}`, '#hang');
  assert((await text('#hang')).includes('2,100 ms'), 'hang duration');
  await page.click('#tab-flame');
  await page.waitForSelector('#flame g.fg-node');
  const nodes = () => page.$$eval('#flame g.fg-node', (gs) => gs.map((g) => {
    const m = g.transform.baseVal.consolidate().matrix;
    return { name: g.dataset.name, value: Number(g.dataset.value), depth: Number(g.dataset.depth), x: m.e, y: m.f, w: Number(g.querySelector('rect').getAttribute('width')) };
  }));
  const W = await page.$eval('#flame svg.flame-svg', (s) => Number(s.getAttribute('width')));
  let ns = await nodes();
  const by = (n) => ns.find((x) => x.name === n);
  eq(by('all').value, 10, 'root: total weight');
  eq([by('runtime.main').depth, by('main.main').depth, by('main.handle').depth], [1, 2, 3], 'outer frames stack up from the root');
  assert(by('all').y > by('runtime.main').y && by('runtime.main').y > by('main.handle').y, 'root at the bottom, callees above');
  for (const n of ns) near(n.w + 1, (n.value / 10) * W, 1.01, `${n.name}: width proportional to its weight`);
  const kids = ['main.compute', 'main.alloc', 'os.(*File).Read'].map(by);
  eq(kids.map((k) => k.value), [6, 3, 1], 'sample weights');
  near((kids[0].w + 1) / (kids[2].w + 1), 6, 0.05, 'main.compute is 6× os.(*File).Read');
  near((kids[1].w + 1) / (kids[2].w + 1), 3, 0.05, 'main.alloc is 3× os.(*File).Read');
  assert(kids[0].x < kids[1].x && kids[1].x < kids[2].x, 'heaviest first');
  eq(by('main.sum').depth, 5, 'inlined frame is a level of its own');
  await page.hover(`#flame g.fg-node[data-name="main.compute"]`);
  await page.waitForSelector('.flame-tip:not([hidden])');
  const tip = await text('.flame-tip');
  assert(tip.includes('main.compute') && tip.includes('6 samples') && tip.includes('60.0%') && tip.includes('compute.go:42'), `tooltip: ${tip}`);
  await shot('06-flame-hang.png');
  await page.click(`#flame g.fg-node[data-name="main.alloc"]`);
  await page.waitForFunction(() => !document.querySelector('#flame g.fg-node[data-name="main.compute"]'));
  ns = await nodes();
  near(by('main.alloc').w + 1, W, 1.01, 'zoomed frame spans the width');
  near(by('runtime.mallocgc').w + 1, W, 1.01, 'its callee too');
  assert((await text('.flame-crumbs')).includes('main.alloc'), 'zoom path shown');
  assert((await text('.flame-status')).includes('Zoomed into main.alloc'), 'zoom announced');
  await shot('07-flame-zoomed.png');
  eq(await page.evaluate(() => document.activeElement.dataset.name), 'main.alloc', 'zoomed frame has the focus');
  await page.keyboard.press('Escape');
  await page.waitForSelector('#flame g.fg-node[data-name="main.compute"]');
  ns = await nodes();
  near(by('main.handle').w + 1, W, 1.01, 'Escape zooms out to the parent');
  near(by('main.compute').w + 1, 0.6 * W, 1.01, 'siblings back in proportion');
  await page.keyboard.press('ArrowUp');
  eq(await page.evaluate(() => document.activeElement.dataset.name), 'main.compute', 'ArrowUp moves to the heaviest callee');
  await page.keyboard.press('ArrowRight');
  eq(await page.evaluate(() => document.activeElement.dataset.name), 'main.alloc', 'ArrowRight moves to the next frame');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => !document.querySelector('#flame g.fg-node[data-name="main.compute"]'));
  await page.click('#flame-reset');
  await page.waitForSelector('#flame g.fg-node[data-name="main.compute"]');
  await page.fill('#flame-search', 'malloc');
  await page.waitForFunction(() => document.querySelectorAll('#flame .fg-match').length === 1);
  assert((await text('.flame-status')).includes('3 of 10 samples (30.0%)'), 'search reports the share of matching samples');
  await page.fill('#flame-search', '');
  await page.click('#flame-source a[data-source=snapshot]');
  await page.waitForURL((u) => u.searchParams.get('source') === 'snapshot');
  await page.waitForSelector('#flame g.fg-node[data-name="main.worker"]');
  ns = await nodes();
  eq(by('all').value, 50, 'snapshot: goroutines');
  assert((await text('#flame g.fg-node[data-name="all"] text')).includes('50 goroutines'), 'root label names the unit');
  near((by('main.worker').w + 1) / (by('runtime.main').w + 1), 4, 0.05, '40 vs 10 goroutines');
  await shot('08-flame-snapshot.png');

  begin('status actions');
  await open(`/issues/${nullDeref.id}`, '#action-resolve');
  await page.click('#action-resolve');
  await page.waitForSelector('#action-reopen');
  eq((await text('.issue-head .issue-meta .badge-ok')).trim(), 'resolved', 'status badge says resolved');
  eq((await api(`/api/v1/issues/${nullDeref.id}`)).status, 'resolved', 'API: resolved');
  await shot('09-issue-resolved.png');
  await page.click('.breadcrumb a');
  await page.waitForSelector('#issues tbody tr');
  assert(!(await rowIDs()).includes(nullDeref.id), 'resolved issue left the unresolved list');
  await page.click('#status-filter a[data-status=resolved]');
  await page.waitForFunction(() => document.querySelectorAll('#issues tbody tr').length === 1);
  eq(await rowIDs(), [nullDeref.id], 'resolved list');
  await shot('10-issues-resolved.png');
  await page.click(`#issues tr[data-id="${nullDeref.id}"] .issue-title`);
  await page.waitForSelector('#action-reopen');
  await page.click('#action-reopen');
  await page.waitForSelector('#action-resolve');
  eq((await api(`/api/v1/issues/${nullDeref.id}`)).status, 'unresolved', 'API: reopened');
  await open(`/issues/${xss.id}`, '#action-ignore');
  assert((await text('#exception')).includes('<img src=x id=xss'), 'markup in an exception shows as text');
  eq(await page.evaluate(() => [typeof window.xss, document.querySelectorAll('#xss, #xss-frame').length]), ['undefined', 0], 'markup in event data is not run or parsed');
  await page.click('#action-ignore');
  await page.waitForSelector('#action-reopen');
  eq((await api(`/api/v1/issues/${xss.id}`)).status, 'ignored', 'API: ignored');

  begin('missing symbols');
  await open('/missing-symbols', '#missing tbody tr');
  const missing = await api(`/api/v1/missing-symbols?project=${proj.id}`);
  const ids = await page.$$eval('#missing tbody tr', (rs) => rs.map((r) => r.dataset.debugId));
  eq([...ids].sort(), missing.map((m) => m.debug_id).sort(), 'every missing module listed');
  const uikit = missing.find((m) => m.name === 'UIKit');
  const uikitRow = await page.$$eval(`#missing tr[data-debug-id="${uikit.debug_id}"] td`, (tds) => tds.map((td) => td.textContent));
  assert(uikitRow[0].startsWith('UIKit') && uikitRow[1].includes(uikit.debug_id) && uikitRow[2].includes('.dSYM of UIKit') && uikitRow[3] === String(uikit.events),
    `UIKit row: ${uikitRow}`);
  const uploaded = await api(`/api/v1/debug-files?project=${proj.id}`);
  for (const f of uploaded) assert(!ids.includes(f.debug_id), `uploaded ${f.name} is not missing`);
  assert((await text('#upload-command')).includes(`--url ${BASE} `), 'upload command names this server');
  await shot('11-missing-symbols.png');

  begin('debug files');
  await open('/debug-files', '#debug-files tbody tr');
  const dfRows = () => page.$$eval('#debug-files tbody tr', (rs) => rs.map((r) => r.dataset.debugId));
  eq((await dfRows()).sort(), uploaded.map((f) => f.debug_id).sort(), 'uploaded dSYMs listed');
  const cpRow = await page.$$eval(`#debug-files tr[data-debug-id="${uploaded[0].debug_id}"] td`, (tds) => tds.map((td) => td.textContent));
  assert(cpRow[2] === uploaded[0].arch && uploaded[0].features.every((f) => cpRow[3].includes(f)), `arch and features: ${cpRow}`);
  await page.setInputFiles('#upload-file', path.join(REPO, 'testdata', 'sentry-symbolic', 'linux', 'crash.debug'));
  await page.click('#upload-submit');
  await page.waitForFunction(() => /Uploaded crash\.debug: 1 object/.test(document.querySelector('#upload-status').textContent));
  await page.waitForFunction((n) => document.querySelectorAll('#debug-files tbody tr').length === n, uploaded.length + 1);
  const after = await api(`/api/v1/debug-files?project=${proj.id}`);
  const added = after.find((f) => f.name === 'crash.debug');
  assert(added && added.arch === 'x86_64', 'upload stored through the API');
  await shot('12-debug-files.png');
  await page.click(`#debug-files tr[data-debug-id="${added.debug_id}"] button[data-action=delete]`);
  await page.click(`#debug-files tr[data-debug-id="${added.debug_id}"] button[data-action=confirm-delete]`);
  await page.waitForFunction((n) => document.querySelectorAll('#debug-files tbody tr').length === n, uploaded.length);
  eq((await api(`/api/v1/debug-files?project=${proj.id}`)).length, uploaded.length, 'deleted through the API');

  begin('project');
  await open('/projects', '#dsn');
  eq(await text('#dsn'), proj.dsn, 'DSN shown');
  await page.click('#dsn + button');
  await page.waitForSelector('#dsn + button.copied');
  eq(await page.evaluate(() => navigator.clipboard.readText()), proj.dsn, 'copy button copies the DSN');
  eq(await page.$eval('#project-picker', (s) => s.selectedOptions[0].textContent), proj.name, 'project picker');
  await shot('13-project.png');

  begin('narrow window');
  await page.setViewportSize({ width: 390, height: 844 });
  const noOverflow = async (what) => {
    const [sw, cw] = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
    assert(sw <= cw + 1, `${what}: no horizontal scrolling at 390px (scrollWidth ${sw} > ${cw})`);
  };
  await open('/issues', '#issues tbody tr');
  await noOverflow('issues');
  await shot('14-narrow-issues.png');
  await open(`/issues/${cart.id}`, '#threads .frame');
  await noOverflow('issue');
  await shot('15-narrow-issue.png');
  await page.setViewportSize({ width: 1280, height: 900 });

  begin('dark theme');
  await open(`/issues/${hang.id}`, '#hang');
  await page.click('#theme-toggle');
  eq(await page.evaluate(() => document.documentElement.dataset.theme), 'dark', 'theme toggled');
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  const lum = bg.match(/\d+/g).slice(0, 3).reduce((a, b) => a + Number(b), 0) / 765;
  assert(lum < 0.2, `dark background: ${bg}`);
  await shot('16-dark-issue.png');
  await open(`/issues/${hang.id}/flame`, '#flame g.fg-node');
  eq(await page.evaluate(() => document.documentElement.dataset.theme), 'dark', 'theme kept across pages');
  await shot('17-dark-flame.png');
  await page.click('#theme-toggle');

  begin('regression');
  await open(`/issues/${cart.id}`, '#action-resolve');
  await page.click('#action-resolve');
  await page.waitForSelector('#action-reopen');
  // The same crash again, from a newer release, reopens the issue.
  const again = JSON.parse(await fs.readFile(path.join(REPO, 'report', 'testdata', 'crash.json'), 'utf8'));
  again.event_id = 'e2e0000000000000000000000000' + String(Date.now() % 10000).padStart(4, '0');
  again.release = 'shop@1.5.0';
  again.timestamp = new Date().toISOString();
  const posted = await fetch(BASE + '/api/v1/reports', { method: 'POST', headers: { Authorization: 'Bearer ' + must('BACKTRAIL_KEY'), 'Content-Type': 'application/json' }, body: JSON.stringify(again) });
  assert(posted.ok, `POST /api/v1/reports: ${posted.status}`);
  for (let i = 0; i < 200 && (await api(`/api/v1/issues/${cart.id}`)).status !== 'unresolved'; i++) await page.waitForTimeout(50);
  const regressed = await api(`/api/v1/issues/${cart.id}`);
  assert(regressed.status === 'unresolved' && regressed.regressed_at, 'API: regressed');
  await open(`/issues/${cart.id}`, '#threads .frame');
  eq((await text('.issue-head .badge-regressed')).trim(), 'regressed', 'regressed marker');
  assert((await text('.regressed-note')).includes('after it was resolved in shop@1.4.2'), 'says which release it was resolved in');
  eq(await texts('#issue-releases .chip'), ['shop@1.5.0', 'shop@1.4.2'], 'releases, newest first');
  eq(await page.$eval('#issue-stats svg.hourly', (s) => Number(s.dataset.total)), 1, 'hourly chart: the new event');
  eq(await page.$$eval('#issue-stats svg.hourly rect.bar', (b) => b.length), 1, 'one bar');
  eq(await page.$eval('#event-picker', (s) => s.options.length), 2, 'both events in the picker');
  await shot('19-regressed.png');
  await open('/issues', '#issues tbody tr');
  assert(await page.$(`#issues tr[data-id="${cart.id}"] .badge-regressed`), 'regressed marker in the list');

  begin('events and event picker');
  const multi = all.filter((i) => i.count >= 2).sort((a, b) => b.count - a.count)[0];
  assert(multi, 'an issue with two events');
  const evs = await api(`/api/v1/issues/${multi.id}/events`);
  await open(`/issues/${multi.id}/events`, '#events tbody tr');
  eq((await page.$$('#events tbody tr')).length, evs.length, 'events listed');
  await page.click(`#events tbody tr:nth-child(2) a`);
  await page.waitForURL((u) => u.searchParams.get('event') === evs[1].id);
  await page.waitForSelector('#event-picker');
  eq(await page.$eval('#event-picker', (s) => s.value), evs[1].id, 'picker shows the chosen event');
  eq(await text('#event-id'), evs[1].id, 'chosen event shown');
  eq(await page.$eval('#event-older', (b) => b.disabled), true, 'oldest event: no older one');
  await page.click('#event-newer');
  await page.waitForURL((u) => u.searchParams.get('event') === evs[0].id);
  await page.waitForFunction((id) => document.querySelector('#event-id') && document.querySelector('#event-id').textContent === id, evs[0].id);
  await page.selectOption('#event-picker', evs[1].id);
  await page.waitForURL((u) => u.searchParams.get('event') === evs[1].id);
  await open(`/issues/${multi.id}/events`, '#events tbody tr');
  await shot('18-events.png');

  begin('sign out');
  await page.click('#sign-out');
  await page.waitForURL((u) => u.pathname === '/sign-in');
  eq(await page.evaluate(() => localStorage.getItem('backtrail.token')), null, 'token forgotten');
  await page.goto(BASE + '/debug-files');
  await page.waitForURL((u) => u.pathname === '/sign-in');

  begin('console');
  eq(problems, [], 'no errors in the page, no requests off the server');
  console.log(`ok: ${checks} checks`);
} catch (err) {
  console.error(`FAIL ${err.message}`);
  if (problems.length) console.error(problems.join('\n'));
  try { await page.screenshot({ path: path.join(SHOTS, 'failure.png'), fullPage: true }); } catch { /* closed */ }
  process.exitCode = 1;
} finally {
  await context.close();
  await fs.rm(userDataDir, { recursive: true, force: true });
  await fs.rm(downloads, { recursive: true, force: true });
}
