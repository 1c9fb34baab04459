package sqlitesearch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"

	"github.com/docpipe/docpipe/pipeline/search"
)

// The rows of a document: search_rows names each (its workflow,
// segment and kind), search_text holds its text, and search_digests a
// hash of that text. When a document's next workflow indexes the same
// text for a segment (a backfill that reused its extraction and
// analysis, a rerun), the row is kept and only relabelled: deleting
// and tokenizing it again was most of what indexing a large backfilled
// document cost the writer.
const (
	selectDocumentRows = `SELECT r.id, r.segment, r.kind, d.digest FROM search_rows r LEFT JOIN search_digests d ON d.id = r.id WHERE r.document = ?`
	relabelRow         = `UPDATE search_rows SET project = ?, pipeline = ?, version = ?, workflow = ?, file_name = ? WHERE id = ?`
	insertRow          = `INSERT INTO search_rows (project, pipeline, version, document, workflow, file_name, segment, kind, audio_start, audio_end) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	insertText         = `INSERT INTO search_text (rowid, body, keywords, entities, summary, outputs) VALUES (?, ?, ?, ?, ?, ?)`
	insertDigest       = `INSERT OR REPLACE INTO search_digests (id, digest) VALUES (?, ?)`
	deleteRowText      = `DELETE FROM search_text WHERE rowid = ?`
	deleteRowDigest    = `DELETE FROM search_digests WHERE id = ?`
	deleteRow          = `DELETE FROM search_rows WHERE id = ?`
	deleteWorkflowText = `DELETE FROM search_text WHERE rowid IN (SELECT id FROM search_rows WHERE document = ? AND workflow = ?)`
	deleteWorkflowDigs = `DELETE FROM search_digests WHERE id IN (SELECT id FROM search_rows WHERE document = ? AND workflow = ?)`
	deleteWorkflowRows = `DELETE FROM search_rows WHERE document = ? AND workflow = ?`
)

var rowStatements = []string{selectDocumentRows, relabelRow, insertRow, insertText, insertDigest,
	deleteRowText, deleteRowDigest, deleteRow, deleteWorkflowText, deleteWorkflowDigs, deleteWorkflowRows}

// rowKey is where a row sits in its document.
type rowKey struct {
	segment int
	kind    string
}

type oldRow struct {
	id     int64
	digest []byte
}

// rowWriter replaces a document's rows: put each of the new ones, then
// finish, which deletes the old ones no new one kept.
type rowWriter struct {
	db    execer
	old   map[rowKey]oldRow
	extra []oldRow // old rows at a place another old row holds: never kept
}

// replaceDocument starts replacing the rows of document.
func replaceDocument(ctx context.Context, db execer, document string) (*rowWriter, error) {
	st, err := db.Prepared(ctx, selectDocumentRows)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(ctx, document)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	w := &rowWriter{db: db, old: map[rowKey]oldRow{}}
	for rows.Next() {
		var k rowKey
		var r oldRow
		if err := rows.Scan(&r.id, &k.segment, &k.kind, &r.digest); err != nil {
			return nil, err
		}
		if _, dup := w.old[k]; dup {
			w.extra = append(w.extra, r)
			continue
		}
		w.old[k] = r
	}
	return w, rows.Err()
}

// put writes e: relabels the old row at its place when its text is the
// same, else inserts it.
func (w *rowWriter) put(ctx context.Context, e search.Entry) error {
	wf := e.Workflow
	digest := entryDigest(e)
	k := rowKey{e.Segment, e.Kind}
	if r, ok := w.old[k]; ok && bytes.Equal(r.digest, digest) {
		delete(w.old, k)
		_, err := exec(ctx, w.db, relabelRow, wf.ProjectID, wf.Pipeline, wf.PipelineVersion, wf.ID, wf.FileName, r.id)
		return err
	}
	var start, end any
	if e.AudioStartMS >= 0 {
		start, end = e.AudioStartMS, e.AudioEndMS
	}
	res, err := exec(ctx, w.db, insertRow, wf.ProjectID, wf.Pipeline, wf.PipelineVersion, wf.DocumentID, wf.ID, wf.FileName, e.Segment, e.Kind, start, end)
	if err != nil {
		return err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return err
	}
	if _, err := exec(ctx, w.db, insertText, id, e.Body, e.Keywords, e.Entities, e.Summary, e.Outputs); err != nil {
		return err
	}
	_, err = exec(ctx, w.db, insertDigest, id, digest)
	return err
}

// finish deletes the old rows no new row kept.
func (w *rowWriter) finish(ctx context.Context) error {
	left := w.extra
	for _, r := range w.old {
		left = append(left, r)
	}
	for _, r := range left {
		for _, q := range []string{deleteRowText, deleteRowDigest, deleteRow} {
			if _, err := exec(ctx, w.db, q, r.id); err != nil {
				return err
			}
		}
	}
	return nil
}

// entryDigest hashes what a row holds besides its labels: its audio span
// and its text, each field framed by its length.
func entryDigest(e search.Entry) []byte {
	h := sha256.New()
	var n [8]byte
	for _, v := range []int64{e.AudioStartMS, e.AudioEndMS} {
		binary.BigEndian.PutUint64(n[:], uint64(v))
		h.Write(n[:])
	}
	for _, f := range []string{e.Body, e.Keywords, e.Entities, e.Summary, e.Outputs} {
		binary.BigEndian.PutUint64(n[:], uint64(len(f)))
		h.Write(n[:])
		h.Write([]byte(f))
	}
	return h.Sum(nil)
}

func deleteWorkflow(ctx context.Context, db execer, documentID, workflowID string) error {
	for _, q := range []string{deleteWorkflowText, deleteWorkflowDigs, deleteWorkflowRows} {
		if _, err := exec(ctx, db, q, documentID, workflowID); err != nil {
			return err
		}
	}
	return nil
}
