// docpipe dashboard: live updates over server-sent events, the segment
// grid, uploads and re-runs. No inline script and no outside host, so the
// strict Content-Security-Policy holds. Text from the server is always set
// with textContent, never parsed as HTML.
'use strict';

(function () {
  const page = document.body.dataset.page;
  const terminal = (s) => s === 'completed' || s === 'failed';

  function el(tag, props, ...children) {
    const e = document.createElement(tag);
    Object.entries(props || {}).forEach(([k, v]) => {
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else if (k.startsWith('data-')) e.dataset[k.slice(5)] = v;
      else e[k] = v;
    });
    children.forEach((c) => e.append(c));
    return e;
  }

  async function api(url, init) {
    const r = await fetch(url, Object.assign({ headers: { Accept: 'application/json' } }, init));
    const body = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(body.error || r.status + ' ' + r.statusText);
    return body;
  }

  function localTime(s) {
    if (!s) return '';
    const d = new Date(s);
    if (isNaN(d)) return s;
    const p = (n) => String(n).padStart(2, '0');
    return d.getFullYear() + '-' + p(d.getMonth() + 1) + '-' + p(d.getDate()) + ' ' + p(d.getHours()) + ':' + p(d.getMinutes()) + ':' + p(d.getSeconds());
  }

  function took(seconds, started, ended) {
    if (!started || !ended) return '';
    return seconds < 1 ? Math.round(seconds * 1000) + 'ms' : seconds.toFixed(2) + 's';
  }

  function statusBadge(s) {
    return el('span', { class: 'status s-' + s, text: s });
  }

  function progressBar(pct) {
    return el('progress', { max: 100, value: pct, text: pct + '%' });
  }

  // The one live stream of this page: the server polls once for everyone.
  const listeners = [];
  function onSnapshot(fn) { listeners.push(fn); }
  function startLive() {
    const dot = document.getElementById('live');
    const es = new EventSource('/api/events');
    es.addEventListener('snapshot', (ev) => {
      let snap;
      try { snap = JSON.parse(ev.data); } catch (_) { return; }
      dot.classList.toggle('on', !snap.error);
      dot.title = snap.error || 'live: ' + localTime(snap.at);
      listeners.forEach((fn) => fn(snap));
    });
    es.onerror = () => dot.classList.remove('on');
  }

  // watch follows analyses: one fetch when a snapshot says one moved, or
  // while one is unfinished but not among the running ones listed (it may
  // have finished between two snapshots).
  function watch(update) {
    const state = new Map(); // id -> last known status
    const busy = new Set();
    onSnapshot((snap) => {
      const changed = new Set(snap.changed || []);
      const running = new Set((snap.running || []).map((p) => p.workflow_id));
      state.forEach((status, id) => {
        if (busy.has(id) || (terminal(status) && !changed.has(id))) return;
        if (!changed.has(id) && running.has(id)) return;
        busy.add(id);
        api('/api/analyses/' + encodeURIComponent(id) + '?transitions=0')
          .then((v) => { state.set(id, v.progress.status); update(v); })
          .catch(() => {})
          .finally(() => busy.delete(id));
      });
    });
    return (id, status) => state.set(id, status);
  }

  // Re-run buttons, wherever they are.
  document.addEventListener('click', (ev) => {
    const b = ev.target.closest('button.rerun');
    if (!b) return;
    const out = b.parentElement.querySelector('.rerun-result');
    b.disabled = true;
    api('/api/analyses/' + encodeURIComponent(b.dataset.id) + '/rerun', { method: 'POST' })
      .then((r) => { out.textContent = r.reset.length ? 're-running ' + r.reset.join(', ') : r.message; })
      .catch((e) => { out.textContent = e.message; b.disabled = false; });
  });

  // Backfill buttons on a pipeline version's page: the preview is the dry
  // run, per document; the other starts it.
  document.addEventListener('click', (ev) => {
    const b = ev.target.closest('button.backfill, button.backfill-preview');
    if (!b) return;
    const out = b.parentElement.querySelector('.backfill-result');
    const url = '/api/pipelines/' + encodeURIComponent(b.dataset.name) + '/versions/' + b.dataset.version +
      '/backfill?project=' + encodeURIComponent(b.dataset.project);
    b.disabled = true;
    if (b.classList.contains('backfill-preview')) {
      api(url)
        .then((v) => {
          const table = document.getElementById('backfill-forecast');
          table.querySelector('tbody').replaceChildren(...v.forecast.map((f) => el('tr', {},
            el('td', { text: f.file_name }),
            el('td', {}, el('a', { href: '/analyses/' + f.from, text: 'v' + f.from_version })),
            el('td', { text: f.run.join(', ') }),
            el('td', { text: f.reuse.join(', ') }))));
          table.hidden = false;
        })
        .catch((e) => { out.textContent = e.message; })
        .finally(() => { b.disabled = false; });
      return;
    }
    api(url, { method: 'POST' })
      .then((r) => { out.textContent = 'started ' + r.started + ' workflows on ' + r.pipeline; })
      .catch((e) => { out.textContent = e.message; b.disabled = false; });
  });

  function overview() {
    onSnapshot((snap) => {
      Object.entries(snap.counts || {}).forEach(([k, n]) => {
        const c = document.querySelector('[data-count="' + k + '"]');
        if (c) c.textContent = n >= (snap.count_up_to || 200) ? n + '+' : String(n);
      });
      const body = document.querySelector('#running tbody');
      body.replaceChildren(...(snap.running || []).map((p) => el('tr', { 'data-id': p.workflow_id },
        el('td', {}, el('a', { href: '/analyses/' + p.workflow_id, text: p.file_name })),
        el('td', {}, statusBadge(p.status)),
        el('td', { text: p.step_text }),
        el('td', { text: p.segments_done + '/' + p.segments_total }),
        el('td', { class: 'bar' }, progressBar(p.percent)),
        el('td', { text: localTime(p.updated_at) }))));
      document.getElementById('running-empty').hidden = (snap.running || []).length > 0;
    });
  }

  function analysis() {
    const root = document.getElementById('analysis');
    const id = root.dataset.id;
    const base = '/api/analyses/' + encodeURIComponent(id);
    let finished = -1;
    let status = root.dataset.status;
    // Only the results the pipeline writes are asked for.
    const writesSummary = root.dataset.summary === 'true';
    const writesGraph = root.dataset.graph === 'true';

    async function loadGrid() {
      const cells = [];
      let cursor = '';
      do {
        const page = await api(base + '/segments?limit=2000' + (cursor ? '&cursor=' + cursor : ''));
        page.segments.forEach((s) => cells.push(el('button', {
          type: 'button', class: 'cell s-' + s.status, 'data-index': s.index,
          title: 'segment ' + s.index + ': ' + s.status + (s.error ? ' — ' + s.error : ''),
        })));
        cursor = page.next_cursor;
      } while (cursor);
      document.getElementById('grid').replaceChildren(...cells);
      document.getElementById('grid-empty').hidden = cells.length > 0;
    }

    async function showSegment(index) {
      const box = document.getElementById('segment');
      const d = await api(base + '/segments/' + index);
      const s = d.segment;
      box.hidden = false;
      document.getElementById('seg-title').textContent = 'Segment ' + s.index + (s.kind ? ' (' + s.kind + ')' : '');
      document.getElementById('seg-meta').textContent = s.status + ' · ' + s.chars + ' characters' + (s.language ? ' · ' + s.language : '') + (d.truncated ? ' · text cut at 1 MiB' : '');
      const err = document.getElementById('seg-error');
      err.hidden = !s.error;
      err.textContent = s.error || '';
      document.getElementById('seg-text').textContent = d.text;
      const a = d.analysis;
      const out = [];
      if (a) {
        if (a.keywords && a.keywords.length) out.push(el('p', {}, el('strong', { text: 'Keywords: ' }), a.keywords.map((k) => k.term + ' (' + k.count + ')').join(', ')));
        if (a.entities && a.entities.length) out.push(el('p', {}, el('strong', { text: 'Entities: ' }), a.entities.map((e) => e.value + ' [' + e.type + ']').join(', ')));
        if (a.summary && a.summary.length) out.push(el('p', {}, el('strong', { text: 'Summary: ' }), a.summary.map((x) => x.text).join(' ')));
      }
      document.getElementById('seg-analysis').replaceChildren(...out);
      box.scrollIntoView({ block: 'nearest' });
    }

    document.getElementById('grid').addEventListener('click', (ev) => {
      const c = ev.target.closest('.cell');
      if (c) showSegment(c.dataset.index).catch((e) => { document.getElementById('seg-text').textContent = e.message; });
    });

    async function loadSummary() {
      let s;
      try { s = await api(base + '/summary'); } catch (_) { return; }
      const out = [];
      if (s.language) out.push(el('p', { class: 'meta', text: 'language ' + s.language + ' · ' + s.segments + ' segments · ' + s.words + ' words' }));
      if (s.top_keywords && s.top_keywords.length) out.push(el('p', {}, el('strong', { text: 'Top keywords: ' }), s.top_keywords.map((k) => k.term).join(', ')));
      (s.summary || []).forEach((x) => out.push(el('blockquote', { text: x.text })));
      document.getElementById('summary').replaceChildren(...out);
    }

    function loadGraph() {
      const img = el('img', { src: '/analyses/' + encodeURIComponent(id) + '/graph.svg?t=' + Date.now(), alt: 'keyword and entity graph', width: 640, height: 640 });
      img.onerror = () => document.getElementById('graph').replaceChildren(el('p', { class: 'empty', text: 'No graph.' }));
      document.getElementById('graph').replaceChildren(img);
    }

    function showTransitions(list) {
      document.querySelector('#transitions tbody').replaceChildren(...list.map((t) => el('tr', {},
        el('td', { text: localTime(t.at) }), el('td', { text: t.step }), el('td', { text: t.from }),
        el('td', { text: t.to }), el('td', { class: t.to === 'failed' ? 'reason' : 'note', text: t.error || '' }))));
    }

    function show(v) {
      const p = v.progress;
      const st = document.getElementById('a-status');
      st.textContent = p.status;
      st.className = 'status s-' + p.status;
      document.getElementById('a-progress').value = p.percent;
      document.getElementById('a-counts').textContent = p.segments_done + ' done, ' + p.segments_failed + ' failed, ' + p.segments_skipped + ' skipped of ' + p.segments_total + ' segments';
      document.getElementById('a-step').textContent = p.step_text;
      const err = document.getElementById('a-error');
      err.hidden = !p.error;
      err.textContent = p.error || '';
      root.querySelector('button.rerun').hidden = !terminal(p.status);
      document.querySelector('#steps tbody').replaceChildren(...v.steps.map((s) => el('tr', { 'data-step': s.name },
        el('td', { text: s.name }), el('td', {}, statusBadge(s.status)), el('td', { text: localTime(s.started_at) }),
        el('td', { text: took(s.seconds, s.started_at, s.ended_at) }),
        s.error ? el('td', { class: 'reason', text: s.error }) : el('td', { class: 'note', text: s.note || '' }))));
      const done = p.segments_done + p.segments_failed + p.segments_skipped + p.segments_total * 1e6;
      if (done !== finished) { finished = done; loadGrid().catch(() => {}); }
      if (terminal(p.status) && !terminal(status)) {
        if (writesSummary) loadSummary();
        if (writesGraph) loadGraph();
        api(base).then((full) => showTransitions(full.transitions)).catch(() => {});
      }
      status = p.status;
    }

    const follow = watch(show);
    follow(id, status);
    api(base + '?transitions=0').then(show).catch(() => {});
    if (terminal(status) && writesSummary) loadSummary();
  }

  function upload() {
    const form = document.getElementById('upload');
    const input = document.getElementById('files');
    const table = document.getElementById('uploads');
    const project = document.getElementById('project');
    const pipelineName = document.getElementById('project-pipeline');
    const limit = Number(form.dataset.limit);
    const rows = new Map();

    // The pipeline a project runs: a stored project's own, else the
    // built-in one a new project starts with.
    function showPipeline() {
      const known = Array.from(document.getElementById('projects').options).find((o) => o.value === project.value);
      pipelineName.textContent = known ? known.dataset.pipeline : form.dataset.newPipeline;
    }
    project.addEventListener('input', showPipeline);

    const follow = watch((v) => {
      const row = rows.get(v.workflow.id);
      if (!row) return;
      const p = v.progress;
      row.cells[2].replaceChildren(statusBadge(p.status), p.error ? el('span', { class: 'reason', text: ' ' + p.error }) : '');
      row.cells[3].textContent = p.step_text;
      row.cells[4].replaceChildren(progressBar(p.percent));
    });

    function addRow(name) {
      const row = el('tr', {}, el('td', { text: name }), el('td', { text: project.value }), el('td', { text: 'uploading…' }), el('td'), el('td', { class: 'bar' }));
      table.tBodies[0].prepend(row);
      table.hidden = false;
      return row;
    }

    async function send(file) {
      const row = addRow(file.name);
      if (file.size > limit) {
        row.cells[2].replaceChildren(el('span', { class: 'reason', text: 'too large: at most ' + limit + ' bytes' }));
        return;
      }
      if (!project.checkValidity()) {
        row.cells[2].replaceChildren(el('span', { class: 'reason', text: 'name a project: letters, digits, dots, dashes or underscores' }));
        return;
      }
      const body = new FormData();
      body.append('file', file, file.name);
      try {
        const r = await api('/api/uploads?project=' + encodeURIComponent(project.value), { method: 'POST', body: body });
        const u = r.uploads[0];
        row.dataset.id = u.workflow_id;
        row.cells[0].replaceChildren(el('a', { href: u.url, text: u.file }));
        row.cells[1].textContent = u.project;
        row.cells[2].replaceChildren(statusBadge(u.status), u.existing ? el('span', { class: 'note', text: ' (seen before)' }) : '');
        rows.set(u.workflow_id, row);
        follow(u.workflow_id, u.status);
      } catch (e) {
        row.cells[2].replaceChildren(el('span', { class: 'reason', text: e.message }));
      }
    }

    function sendAll(files) { Array.from(files).forEach((f) => send(f)); }
    input.addEventListener('change', () => { sendAll(input.files); input.value = ''; });
    form.addEventListener('submit', (ev) => { ev.preventDefault(); sendAll(input.files); });
    ['dragenter', 'dragover'].forEach((t) => form.addEventListener(t, (ev) => { ev.preventDefault(); form.classList.add('over'); }));
    ['dragleave', 'drop'].forEach((t) => form.addEventListener(t, () => form.classList.remove('over')));
    form.addEventListener('drop', (ev) => { ev.preventDefault(); sendAll(ev.dataTransfer.files); });
  }

  ({ overview: overview, analysis: analysis, upload: upload })[page]?.();
  startLive();
})();
