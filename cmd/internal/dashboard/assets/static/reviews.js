// docpipe reviews page: claim, release, approve (with edits) and reject
// through the JSON API, as the reviewer whose name is typed on the page
// and kept in a cookie. Text from the server is set with textContent.
'use strict';

(function () {
  const cookie = 'docpipe_reviewer';
  const input = document.getElementById('reviewer');

  function remember() {
    document.cookie = cookie + '=' + encodeURIComponent(input.value.trim()) + '; path=/; max-age=31536000; SameSite=Strict';
  }
  input.addEventListener('change', remember);

  // edits reads the summary field and the STAGE.FIELD=VALUE lines.
  function edits(row) {
    const out = {};
    const summary = row.querySelector('[name=summary]').value.trim();
    if (summary) out.summary = summary;
    row.querySelector('[name=edits]').value.split('\n').forEach((line) => {
      const at = line.indexOf('=');
      if (at > 0) out[line.slice(0, at).trim()] = line.slice(at + 1).trim();
    });
    return out;
  }

  document.addEventListener('click', async (ev) => {
    const b = ev.target.closest('#reviews button[data-action]');
    if (!b) return;
    const row = b.closest('tr');
    const out = row.querySelector('.review-result');
    const by = input.value.trim();
    if (!by) { out.textContent = 'type your name first'; input.focus(); return; }
    remember();
    const body = { by: by, comment: row.querySelector('[name=comment]').value };
    if (b.dataset.action === 'approve') body.edits = edits(row);
    row.querySelectorAll('button').forEach((x) => { x.disabled = true; });
    try {
      const r = await fetch('/api/reviews/' + encodeURIComponent(row.dataset.id) + '/' + b.dataset.action, {
        method: 'POST', headers: { Accept: 'application/json', 'Content-Type': 'application/json' }, body: JSON.stringify(body),
      });
      const v = await r.json().catch(() => ({}));
      if (!r.ok) throw new Error(v.error || r.status + ' ' + r.statusText);
      out.textContent = v.state + (v.state === 'claimed' ? ' by ' + v.owner : v.decided_by ? ' by ' + v.decided_by : '');
      row.dataset.state = v.state;
      if (v.state === 'open' || v.state === 'claimed') location.reload();
    } catch (e) {
      out.textContent = e.message;
      row.querySelectorAll('button').forEach((x) => { x.disabled = false; });
    }
  });
})();
