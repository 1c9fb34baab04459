// docpipe reviews: the queue remembers the reviewer's name (a cookie);
// one review's page claims, releases, approves (with the values the
// reviewer changed) and rejects through the JSON API. An edit the server
// refuses is shown beside its field. Text from the server is set with
// textContent.
'use strict';

(function () {
  const cookie = 'docpipe_reviewer';
  const input = document.getElementById('reviewer');

  function remember() {
    document.cookie = cookie + '=' + encodeURIComponent(input.value.trim()) + '; path=/; max-age=31536000; SameSite=Strict';
  }
  if (input) input.addEventListener('change', remember);

  const form = document.getElementById('review');
  if (!form) return;
  const result = document.getElementById('r-result');
  form.addEventListener('submit', (ev) => { ev.preventDefault(); });

  // An editError belongs beside one field: the edit it names.
  class EditError extends Error {
    constructor(edit, message) { super(message); this.edit = edit; }
  }

  function showError(edit, message) {
    const at = Array.from(form.querySelectorAll('[data-error-for]')).find((e) => e.dataset.errorFor === edit) ||
      form.querySelector('[data-error-for="other-edits"]');
    at.textContent = message;
  }

  // edits are the fields whose value the reviewer changed, and the
  // STAGE.FIELD=VALUE lines of Other edits, as `review approve --set`
  // takes them.
  function edits() {
    const out = {};
    form.querySelectorAll('[data-edit]').forEach((el) => {
      if (el.value !== el.defaultValue) out[el.name] = el.value;
    });
    form.querySelector('#other-edits').value.split('\n').forEach((line) => {
      if (!line.trim()) return;
      const at = line.indexOf('=');
      if (at <= 0) throw new EditError('other-edits', '"' + line + '": want STAGE.FIELD=VALUE');
      out[line.slice(0, at).trim()] = line.slice(at + 1).trim();
    });
    return out;
  }

  const buttons = () => form.querySelectorAll('#decision button');

  form.addEventListener('click', async (ev) => {
    const b = ev.target.closest('#decision button[data-action]');
    if (!b) return;
    form.querySelectorAll('[data-error-for]').forEach((e) => { e.textContent = ''; });
    result.textContent = '';
    const by = input.value.trim();
    if (!by) { result.textContent = 'type your name first'; input.focus(); return; }
    remember();
    buttons().forEach((x) => { x.disabled = true; });
    try {
      const body = { by: by, comment: form.querySelector('#comment').value };
      if (b.dataset.action === 'approve') body.edits = edits();
      const r = await fetch('/api/reviews/' + encodeURIComponent(form.dataset.id) + '/' + b.dataset.action, {
        method: 'POST', headers: { Accept: 'application/json', 'Content-Type': 'application/json' }, body: JSON.stringify(body),
      });
      const v = await r.json().catch(() => ({}));
      if (!r.ok) throw v.edit ? new EditError(v.edit, v.error) : new Error(v.error || r.status + ' ' + r.statusText);
      result.textContent = v.state + (v.state === 'claimed' ? ' by ' + v.owner : v.decided_by ? ' by ' + v.decided_by : '');
      const state = document.getElementById('r-state');
      state.textContent = v.state;
      state.className = 'status s-review-' + v.state;
      if (v.state === 'open' || v.state === 'claimed') { location.reload(); return; }
      form.querySelector('.review-content').disabled = true;
    } catch (e) {
      if (e instanceof EditError) showError(e.edit, e.message);
      result.textContent = e.message;
      buttons().forEach((x) => { x.disabled = false; });
    }
  });
})();
