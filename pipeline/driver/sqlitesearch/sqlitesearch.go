// Package sqlitesearch is docpipe's local search index: SQLite FTS5
// tables in the state file, next to the items they are derived from.
//
// A workflow is indexed in the transaction that marks it completed (the
// Indexer is the state table's write hook): its segments' text and
// outputs live in the blob store, written before, and are read there.
// Only a document's latest completed workflow is in the index; a newer
// one replaces its rows, and deleting a workflow's item drops them. A workflow whose blobs cannot be read is left
// out without failing its completion, and recorded, so that search can
// say so and Reindex can try again.
//
// Rows are one per segment, plus one per document for its summary and
// document stages' outputs. Where a row comes from is a plain table
// (search_rows, indexed by document) whose ids are the rowids of the
// FTS5 table (search_text), so replacing a document's rows never scans
// the index.
package sqlitesearch

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/docread"
	"github.com/docpipe/docpipe/pipeline/driver/sqlitetable"
	"github.com/docpipe/docpipe/pipeline/search"
	"github.com/docpipe/docpipe/pipeline/table"
)

// schema: unicode61 folds case and diacritics, so "resume" finds
// "Résumé".
const schema = `
CREATE TABLE IF NOT EXISTS search_rows (
	id          INTEGER PRIMARY KEY,
	project     TEXT NOT NULL,
	pipeline    TEXT NOT NULL,
	version     INTEGER NOT NULL,
	document    TEXT NOT NULL,
	workflow    TEXT NOT NULL,
	file_name   TEXT NOT NULL,
	segment     INTEGER NOT NULL,
	kind        TEXT NOT NULL,
	audio_start INTEGER,
	audio_end   INTEGER
);
CREATE INDEX IF NOT EXISTS search_rows_document ON search_rows (document);
CREATE VIRTUAL TABLE IF NOT EXISTS search_text USING fts5(
	body, keywords, entities, summary, outputs,
	tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TABLE IF NOT EXISTS search_unindexed (
	workflow TEXT PRIMARY KEY,
	error    TEXT NOT NULL
);
`

// fieldNames are search_text's columns in order, as Hit.Field names them.
var fieldNames = []string{"body", "keywords", "entities", "summary", "outputs"}

// Indexer keeps the index in step with the table: it is the state
// table's sqlitetable.WriteHook.
type Indexer struct {
	Blobs blob.Store
	// StageOrder names a pipeline version's stages in order, which
	// decides which stage's replacement of a segment's text is indexed
	// (docread.Segments); nil, or an error, orders them by name.
	StageOrder func(ctx context.Context, pipeline string, version int) ([]string, error)
}

var _ sqlitetable.WriteHook = (*Indexer)(nil)

// Schema creates the index tables.
func (*Indexer) Schema() string { return schema }

// AfterWrite indexes every workflow the transaction marks completed,
// and drops the rows of every workflow it deletes.
func (ix *Indexer) AfterWrite(ctx context.Context, tx *sql.Tx, changes []sqlitetable.Change) error {
	for _, c := range changes {
		if doc, wf, ok := deletedWorkflow(c); ok {
			if err := deleteWorkflow(ctx, tx, doc, wf); err != nil {
				return fmt.Errorf("search index: %w", err)
			}
			continue
		}
		wf, ok := completedNow(c)
		if !ok {
			continue
		}
		if err := ix.indexOrRecord(ctx, tx, wf); err != nil {
			return err
		}
	}
	return nil
}

// completedNow reports whether c moves a workflow's metadata item
// (DOC#<d> / WF#<w>) to completed, and decodes the workflow.
func completedNow(c sqlitetable.Change) (pipeline.Workflow, bool) {
	var wf pipeline.Workflow
	if c.After == nil || !strings.HasPrefix(c.Key.PK, pipeline.PrefixDocument) || !strings.HasPrefix(c.Key.SK, pipeline.PrefixWorkflow) {
		return wf, false
	}
	if status(c.After) != string(pipeline.WorkflowCompleted) || status(c.Before) == string(pipeline.WorkflowCompleted) {
		return wf, false
	}
	if err := table.DecodeData(c.After, &wf); err != nil {
		return wf, false
	}
	return wf, true
}

// deletedWorkflow reports whether c deletes a workflow's metadata item,
// and names its document and workflow.
func deletedWorkflow(c sqlitetable.Change) (doc, wf string, ok bool) {
	if c.After != nil || c.Before == nil {
		return "", "", false
	}
	doc, isDoc := strings.CutPrefix(c.Key.PK, pipeline.PrefixDocument)
	wf, isWF := strings.CutPrefix(c.Key.SK, pipeline.PrefixWorkflow)
	return doc, wf, isDoc && isWF
}

func status(it table.Item) string {
	s, _ := it.Data()["status"].(string)
	return s
}

// execer is what indexing writes through: the table's transaction, or a
// connection of Reindex's.
type execer interface {
	sqlitetable.RowQueryer
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
}

// indexOrRecord indexes wf inside a savepoint; when its blobs cannot be
// read, the savepoint is rolled back and the failure recorded instead, so
// that a completion is never refused for the index's sake. A database
// error is returned.
func (ix *Indexer) indexOrRecord(ctx context.Context, db execer, wf pipeline.Workflow) error {
	if err := setPendingTerms(ctx, db); err != nil {
		return fmt.Errorf("search index: %w", err)
	}
	if _, err := db.ExecContext(ctx, `SAVEPOINT search_index`); err != nil {
		return fmt.Errorf("search index: %w", err)
	}
	err := ix.index(ctx, db, wf)
	var readErr blobError
	switch {
	case err == nil:
		_, err = db.ExecContext(ctx, `DELETE FROM search_unindexed WHERE workflow = ?`, wf.ID)
	case errors.As(err, &readErr):
		if _, err = db.ExecContext(ctx, `ROLLBACK TO search_index`); err == nil {
			_, err = db.ExecContext(ctx, `INSERT OR REPLACE INTO search_unindexed VALUES (?, ?)`, wf.ID, readErr.Error())
		}
	}
	if err != nil {
		return fmt.Errorf("search index %s: %w", wf.ID, err)
	}
	_, err = db.ExecContext(ctx, `RELEASE search_index`)
	return err
}

// blobError is a failure to read what a workflow left in the blob store.
type blobError struct{ err error }

func (e blobError) Error() string { return e.err.Error() }

// pendingTermsBytes is how much FTS5 holds in memory of what a
// transaction indexes before writing it out as a new segment of the
// index (its hashsize, 1 MB unless set). Each segment written must later
// be merged with others: with 1 MB, a 3,000-page document made about ten
// and merging them was most of its indexing's CPU (BenchmarkIndexWorkflow).
const pendingTermsBytes = 16 << 20

// setPendingTerms sets FTS5's hashsize where it is not set yet. It is set
// here, within a write, since setting it on opening would take the
// state's write lock for every command.
func setPendingTerms(ctx context.Context, db execer) error {
	_, err := db.ExecContext(ctx, `INSERT INTO search_text (search_text, rank) SELECT 'hashsize', ?1
		WHERE NOT EXISTS (SELECT 1 FROM search_text_config WHERE k = 'hashsize' AND v = ?1)`, pendingTermsBytes)
	return err
}

// index replaces the rows of wf's document with wf's.
func (ix *Indexer) index(ctx context.Context, db execer, wf pipeline.Workflow) error {
	if err := deleteDocument(ctx, db, wf.DocumentID); err != nil {
		return err
	}
	ref := pipeline.WorkflowRef{ProjectID: wf.ProjectID, DocumentID: wf.DocumentID, WorkflowID: wf.ID}
	var order []string
	if ix.StageOrder != nil {
		order, _ = ix.StageOrder(ctx, wf.Pipeline, wf.PipelineVersion)
	}
	ins, err := prepareInsert(ctx, db)
	if err != nil {
		return err
	}
	defer ins.close()
	var dbErr error
	err = docread.Segments(ctx, ix.Blobs, ref, order, func(s docread.Segment) error {
		dbErr = ins.insert(ctx, search.SegmentEntry(wf, s))
		return dbErr
	})
	if dbErr != nil {
		return dbErr
	}
	if err != nil {
		return blobError{err}
	}
	// The step item says which outputs the workflow reused from another
	// (the stage cache): those are read where they are.
	var prog pipeline.StepProgress
	if err := sqlitetable.GetDataIn(ctx, db, pipeline.StepKey(wf.ID), &prog); err != nil && !errors.Is(err, table.ErrNotFound) {
		return err
	}
	outputs, err := docread.DocumentOutputs(ctx, ix.Blobs, ref, prog)
	if err != nil {
		return blobError{err}
	}
	if len(outputs) == 0 {
		return nil
	}
	return ins.insert(ctx, search.DocumentEntry(wf, outputs))
}

func deleteWorkflow(ctx context.Context, db execer, documentID, workflowID string) error {
	const rows = `SELECT id FROM search_rows WHERE document = ? AND workflow = ?`
	if _, err := db.ExecContext(ctx, `DELETE FROM search_text WHERE rowid IN (`+rows+`)`, documentID, workflowID); err != nil {
		return err
	}
	_, err := db.ExecContext(ctx, `DELETE FROM search_rows WHERE id IN (`+rows+`)`, documentID, workflowID)
	return err
}

func deleteDocument(ctx context.Context, db execer, documentID string) error {
	if _, err := db.ExecContext(ctx, `DELETE FROM search_text WHERE rowid IN (SELECT id FROM search_rows WHERE document = ?)`, documentID); err != nil {
		return err
	}
	_, err := db.ExecContext(ctx, `DELETE FROM search_rows WHERE document = ?`, documentID)
	return err
}

// inserter adds rows with statements prepared once per workflow:
// parsing them is a good part of a small row's cost.
type inserter struct{ row, text *sql.Stmt }

func prepareInsert(ctx context.Context, db execer) (inserter, error) {
	row, err := db.PrepareContext(ctx, `INSERT INTO search_rows (project, pipeline, version, document, workflow, file_name, segment, kind, audio_start, audio_end)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return inserter{}, err
	}
	text, err := db.PrepareContext(ctx, `INSERT INTO search_text (rowid, body, keywords, entities, summary, outputs) VALUES (?, ?, ?, ?, ?, ?)`)
	if err != nil {
		row.Close()
		return inserter{}, err
	}
	return inserter{row: row, text: text}, nil
}

func (in inserter) close() {
	in.row.Close()
	in.text.Close()
}

func (in inserter) insert(ctx context.Context, e search.Entry) error {
	var start, end any
	if e.AudioStartMS >= 0 {
		start, end = e.AudioStartMS, e.AudioEndMS
	}
	wf := e.Workflow
	res, err := in.row.ExecContext(ctx, wf.ProjectID, wf.Pipeline, wf.PipelineVersion, wf.DocumentID, wf.ID, wf.FileName, e.Segment, e.Kind, start, end)
	if err != nil {
		return err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return err
	}
	_, err = in.text.ExecContext(ctx, id, e.Body, e.Keywords, e.Entities, e.Summary, e.Outputs)
	return err
}
