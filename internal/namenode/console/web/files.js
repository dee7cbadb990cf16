// The namenode console's file manager: everything goes through WebHDFS
// (/webhdfs/v1), the way any other WebHDFS client would use it.
(() => {
  'use strict';
  const root = document.getElementById('files');
  const secure = root.dataset.secure === 'true';
  const $ = (id) => document.getElementById(id);
  const store = window.sessionStorage;
  let path = new URLSearchParams(location.search).get('path') || '/';
  if (!path.startsWith('/')) path = '/' + path;

  const say = (text, bad) => { $('msg').textContent = text; $('msg').className = bad ? 'err' : ''; };
  const join = (dir, name) => (dir.endsWith('/') ? dir : dir + '/') + name;
  const enc = (p) => p.split('/').map(encodeURIComponent).join('/');

  // Who the requests act as: a delegation token in secure mode, else
  // user.name.
  function authParams() {
    if (secure) return store.getItem('webhdfs.delegation') ? { delegation: store.getItem('webhdfs.delegation') } : null;
    return { 'user.name': store.getItem('webhdfs.user') || 'dr.who' };
  }

  function url(p, op, extra) {
    return '/webhdfs/v1' + enc(p) + '?' + new URLSearchParams(Object.assign({ op }, authParams(), extra || {}));
  }

  // call runs one WebHDFS operation and returns its JSON (null for an
  // empty body); a RemoteException becomes an Error with its message.
  async function call(method, p, op, extra, init) {
    const r = await fetch(url(p, op, extra), Object.assign({ method }, init || {}));
    return answer(r);
  }

  async function answer(r) {
    const text = await r.text();
    let j = null;
    try { j = text ? JSON.parse(text) : null; } catch (e) { j = null; }
    if (!r.ok) {
      const re = j && j.RemoteException;
      throw new Error(re ? re.exception + ': ' + re.message : 'HTTP ' + r.status + ' ' + text);
    }
    return j;
  }

  function crumbs() {
    const c = $('crumbs');
    c.textContent = '';
    const add = (name, p) => {
      const a = document.createElement('a');
      a.href = '/files?path=' + encodeURIComponent(p);
      a.textContent = name;
      c.append(a, ' / ');
    };
    add('(root)', '/');
    let acc = '';
    for (const part of path.split('/').filter(Boolean)) { acc += '/' + part; add(part, acc); }
  }

  function button(text, cls, fn) {
    const b = document.createElement('button');
    b.textContent = text;
    b.className = cls;
    b.type = 'button';
    b.addEventListener('click', fn);
    return b;
  }

  function cell(tr, text, cls) {
    const td = document.createElement('td');
    if (text instanceof Node) td.append(text); else td.textContent = text;
    if (cls) td.className = cls;
    tr.append(td);
    return td;
  }

  function mode(st) {
    const bits = parseInt(st.permission, 8);
    let s = st.type === 'DIRECTORY' ? 'd' : '-';
    for (let i = 8; i >= 0; i--) s += (bits >> i) & 1 ? 'rwx'[(8 - i) % 3] : '-';
    return s + (st.aclBit ? '+' : '');
  }

  async function list() {
    crumbs();
    const body = $('listing').tBodies[0];
    body.textContent = '';
    if (!authParams()) { say('Sign in with your credential to browse as yourself.'); return; }
    let j;
    try {
      j = await call('GET', path, 'LISTSTATUS');
    } catch (e) { say('list ' + path + ': ' + e.message, true); return; }
    const entries = j.FileStatuses.FileStatus;
    if (entries.length === 1 && entries[0].pathSuffix === '' && entries[0].type === 'FILE') {
      location.replace('/files?path=' + encodeURIComponent(path.replace(/\/[^/]*$/, '') || '/'));
      return;
    }
    for (const st of entries) {
      const p = join(path, st.pathSuffix);
      const tr = document.createElement('tr');
      tr.dataset.name = st.pathSuffix;
      let name;
      if (st.type === 'DIRECTORY') {
        name = document.createElement('a');
        name.href = '/files?path=' + encodeURIComponent(p);
        name.textContent = st.pathSuffix + '/';
      } else {
        name = document.createTextNode(st.pathSuffix);
      }
      cell(tr, name);
      cell(tr, mode(st));
      cell(tr, st.owner);
      cell(tr, st.group);
      cell(tr, st.type === 'FILE' ? String(st.length) : '-', 'n');
      cell(tr, st.type === 'FILE' ? String(st.replication) : '-', 'n');
      cell(tr, new Date(st.modificationTime).toISOString().replace('T', ' ').slice(0, 19));
      const actions = cell(tr, '');
      if (st.type === 'FILE') {
        actions.append(button('view', 'view', () => view(p)), ' ', button('download', 'download', () => download(p, st.pathSuffix)), ' ');
      }
      actions.append(button('delete', 'delete', () => remove(p, st.type === 'DIRECTORY')));
      body.append(tr);
    }
    if (entries.length === 0) {
      const tr = document.createElement('tr');
      cell(tr, 'empty directory').colSpan = 8;
      body.append(tr);
    }
  }

  // OPEN is redirected to a datanode; fetch follows the redirect.
  async function read(p, extra) {
    const r = await fetch(url(p, 'OPEN', extra));
    if (!r.ok) await answer(r);
    return r.blob();
  }

  async function view(p) {
    try {
      const b = await read(p, { length: '65536' });
      $('viewtitle').textContent = p + (b.size === 65536 ? ' (first 64 KiB)' : '');
      $('view').textContent = await b.text();
      $('viewtitle').hidden = $('view').hidden = false;
      say('');
    } catch (e) { say('view ' + p + ': ' + e.message, true); }
  }

  async function download(p, name) {
    try {
      const b = await read(p);
      const a = document.createElement('a');
      a.href = URL.createObjectURL(b);
      a.download = name;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(a.href), 60000);
      say('downloaded ' + p + ' (' + b.size + ' bytes)');
    } catch (e) { say('download ' + p + ': ' + e.message, true); }
  }

  async function remove(p, dir) {
    if (!window.confirm('Delete ' + p + (dir ? ' and everything in it' : '') + '?')) return;
    try {
      const j = await call('DELETE', p, 'DELETE', { recursive: String(dir) });
      say(j && j.boolean ? 'deleted ' + p : p + ' was not there');
    } catch (e) { say('delete ' + p + ': ' + e.message, true); }
    list();
  }

  $('mkdir').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const name = $('dirname').value.trim();
    if (!name || name.includes('/')) { say('a directory name, without "/"', true); return; }
    try {
      await call('PUT', join(path, name), 'MKDIRS');
      $('dirname').value = '';
      say('created ' + join(path, name));
    } catch (e) { say('mkdir ' + join(path, name) + ': ' + e.message, true); }
    list();
  });

  // Upload in WebHDFS's two steps: CREATE at the namenode answers where
  // (noredirect=true), then the bytes go to that datanode URL.
  $('upload').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const f = $('file').files[0];
    if (!f) { say('choose a file first', true); return; }
    const p = join(path, f.name);
    try {
      say('uploading ' + p + ' ...');
      const j = await call('PUT', p, 'CREATE', { noredirect: 'true', overwrite: 'false' });
      await answer(await fetch(j.Location, { method: 'PUT', body: f }));
      say('uploaded ' + p + ' (' + f.size + ' bytes)');
    } catch (e) { say('upload ' + p + ': ' + e.message, true); }
    list();
  });

  $('who').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (!secure) {
      store.setItem('webhdfs.user', $('user').value.trim() || 'dr.who');
    } else {
      const cred = $('cred').value.trim();
      try {
        const r = await fetch('/webhdfs/v1/?op=GETDELEGATIONTOKEN', { headers: { Authorization: 'Bearer ' + cred } });
        const j = await answer(r);
        store.setItem('webhdfs.delegation', j.Token.urlString);
        // Who the token acts as, from the namenode (a Hadoop token's
        // urlString does not show it): the user's home directory.
        const home = await call('GET', '/', 'GETHOMEDIRECTORY');
        store.setItem('webhdfs.who', home.Path.split('/').pop());
        $('cred').value = '';
      } catch (e) { say('sign in: ' + e.message, true); return; }
    }
    showWho();
    list();
  });

  function showWho() {
    const dt = store.getItem('webhdfs.delegation');
    if (secure) {
      $('whoami').textContent = dt ? 'signed in as ' + (store.getItem('webhdfs.who') || '?') : 'not signed in';
    } else {
      $('user').value = store.getItem('webhdfs.user') || 'dr.who';
      $('whoami').textContent = 'acting as ' + $('user').value + ' (user.name: simple authentication)';
    }
  }

  showWho();
  list();
})();
