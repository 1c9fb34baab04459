package sqlitesearch

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/docread"
	"github.com/docpipe/docpipe/pipeline/search"
)

// The rows of a document: search_rows names each (its workflow,
// segment and kind), search_text holds its text, and search_digests a
// hash of what the row was made of (search.SegmentDigest). When a
// document's next workflow has the same for a segment (a backfill that
// reused its extraction and analysis, a rerun), the row is kept and only
// relabelled: building, deleting and tokenizing it again was most of
// what indexing a large backfilled document cost the writer.
const (
	selectDocumentRows = `SELECT r.id, r.segment, r.kind, d.digest FROM search_rows r LEFT JOIN search_digests d ON d.id = r.id WHERE r.document = ?`
	relabelRows        = `UPDATE search_rows SET project = ?, pipeline = ?, version = ?, workflow = ?, file_name = ? WHERE id IN (SELECT value FROM json_each(?))`
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

var rowStatements = []string{selectDocumentRows, relabelRows, insertRow, insertText, insertDigest,
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
	db      execer
	old     map[rowKey]oldRow
	extra   []oldRow // old rows at a place another old row holds: never kept
	relabel []int64  // old rows kept, relabelled by finish in one statement
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

// put writes the row entry builds, whose inputs hash to digest
// (search.SegmentDigest): it keeps the old row at its place when the
// digests are the same, without building the row, else inserts it.
func (w *rowWriter) put(ctx context.Context, wf pipeline.Workflow, k rowKey, digest []byte, entry func() search.Entry) error {
	if r, ok := w.old[k]; ok && bytes.Equal(r.digest, digest) {
		delete(w.old, k)
		w.relabel = append(w.relabel, r.id)
		return nil
	}
	e := entry()
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

// keepsAll reports whether put would keep an old row for each of
// segments, whose digests these are: each has an old row at its place
// with the same digest, and no two share a place.
func (w *rowWriter) keepsAll(segments []docread.Segment, digests [][]byte) bool {
	seen := make(map[rowKey]bool, len(segments))
	for i, s := range segments {
		k := rowKey{s.Index, s.Kind}
		r, ok := w.old[k]
		if !ok || seen[k] || !bytes.Equal(r.digest, digests[i]) {
			return false
		}
		seen[k] = true
	}
	return true
}

// putSegment writes segment s of wf, whose digest is digest.
func (w *rowWriter) putSegment(ctx context.Context, wf pipeline.Workflow, s docread.Segment, digest []byte) error {
	return w.put(ctx, wf, rowKey{s.Index, s.Kind}, digest, func() search.Entry { return search.SegmentEntry(wf, s) })
}

// putDocument writes wf's document row.
func (w *rowWriter) putDocument(ctx context.Context, wf pipeline.Workflow, outputs map[string]json.RawMessage) error {
	return w.put(ctx, wf, rowKey{search.DocumentSegment, "document"}, search.DocumentDigest(outputs), func() search.Entry { return search.DocumentEntry(wf, outputs) })
}

// finish relabels the old rows put kept as wf's and deletes those it
// did not keep.
func (w *rowWriter) finish(ctx context.Context, wf pipeline.Workflow) error {
	if len(w.relabel) > 0 {
		ids, err := json.Marshal(w.relabel)
		if err != nil {
			return err
		}
		if _, err := exec(ctx, w.db, relabelRows, wf.ProjectID, wf.Pipeline, wf.PipelineVersion, wf.ID, wf.FileName, string(ids)); err != nil {
			return err
		}
	}
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

func deleteWorkflow(ctx context.Context, db execer, documentID, workflowID string) error {
	for _, q := range []string{deleteWorkflowText, deleteWorkflowDigs, deleteWorkflowRows} {
		if _, err := exec(ctx, db, q, documentID, workflowID); err != nil {
			return err
		}
	}
	return nil
}
