// The JSON API client. Every request carries the admin token the user
// signed in with; a 401 answer signs the user out.

const TOKEN = 'backtrail.token';
const PROJECT = 'backtrail.project';

export function token() { return localStorage.getItem(TOKEN) || ''; }
export function setToken(t) { localStorage.setItem(TOKEN, t); }
export function signOut() { localStorage.removeItem(TOKEN); }

// project returns the id of the chosen project, as a string ("" for none).
export function project() { return localStorage.getItem(PROJECT) || ''; }
export function setProject(id) { localStorage.setItem(PROJECT, String(id)); }

// APIError is a failed request: status and the server's error code.
export class APIError extends Error {
  constructor(status, code, detail) {
    super(detail || code || ('HTTP ' + status));
    this.status = status;
    this.code = code;
  }
}

let onUnauthorized = () => {};

// setUnauthorizedHandler sets what happens when the token is refused.
export function setUnauthorizedHandler(fn) { onUnauthorized = fn; }

// request sends a request to the API and returns the response, throwing
// an APIError for non-2xx answers.
export async function request(method, path, { query, body, headers, tok } = {}) {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(query || {})) {
    if (v !== undefined && v !== null && v !== '') url.searchParams.set(k, v);
  }
  const hs = new Headers(headers || {});
  hs.set('Authorization', 'Bearer ' + (tok ?? token()));
  let payload = body;
  if (body !== undefined && !(body instanceof Blob) && !(body instanceof ArrayBuffer)) {
    hs.set('Content-Type', 'application/json');
    payload = JSON.stringify(body);
  }
  const resp = await fetch(url, { method, headers: hs, body: payload, credentials: 'omit' });
  if (!resp.ok) {
    let code = '', detail = '';
    try {
      const j = await resp.json();
      code = j.error || '';
      detail = j.detail || '';
    } catch { /* not JSON */ }
    const err = new APIError(resp.status, code, detail);
    if (resp.status === 401 && tok === undefined) onUnauthorized(err);
    throw err;
  }
  return resp;
}

// get fetches JSON.
export async function get(path, query) {
  const r = await request('GET', path, { query });
  return r.json();
}

// put sends JSON and returns the JSON answer.
export async function put(path, body) {
  const r = await request('PUT', path, { body });
  return r.json();
}

// del deletes.
export async function del(path) {
  await request('DELETE', path);
}

// check tells whether t is a valid admin token.
export async function check(t) {
  const r = await request('GET', '/api/v1/projects', { tok: t });
  return r.json();
}

// upload posts a file as the raw request body, reporting progress (0..1).
// fetch cannot report upload progress, so this uses XMLHttpRequest.
export function upload(path, query, file, onProgress) {
  return new Promise((resolve, reject) => {
    const url = new URL(path, location.origin);
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
    const xhr = new XMLHttpRequest();
    xhr.open('POST', url);
    xhr.setRequestHeader('Authorization', 'Bearer ' + token());
    xhr.setRequestHeader('Content-Type', 'application/octet-stream');
    xhr.upload.addEventListener('progress', (e) => {
      if (e.lengthComputable) onProgress(e.loaded / e.total);
    });
    xhr.addEventListener('load', () => {
      let j = null;
      try { j = JSON.parse(xhr.responseText); } catch { /* not JSON */ }
      if (xhr.status >= 200 && xhr.status < 300) resolve(j);
      else {
        const err = new APIError(xhr.status, j && j.error, j && j.detail);
        if (xhr.status === 401) onUnauthorized(err);
        reject(err);
      }
    });
    xhr.addEventListener('error', () => reject(new Error('upload failed: network error')));
    xhr.send(file);
  });
}

// download fetches a file with the token and saves it under the name the
// server gives in Content-Disposition.
export async function download(path, query, fallbackName) {
  const r = await request('GET', path, { query });
  const cd = r.headers.get('Content-Disposition') || '';
  const m = /filename="([^"]+)"/.exec(cd);
  const name = (m && m[1]) || fallbackName;
  const blob = await r.blob();
  const href = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = href;
  a.download = name;
  a.style.display = 'none';
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(href), 10000);
  return { name, size: blob.size };
}
