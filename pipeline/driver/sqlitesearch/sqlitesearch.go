// Package sqlitesearch is docpipe's local search index: SQLite FTS5
// tables in the state file, next to the items they are derived from.
//
// A workflow is indexed in the transaction that marks it completed (the
// Indexer is the state table's write hook): its segments' text and
// outputs live in the blob store, written before, and are read there,
// for a document of up to a megabyte of text before the transaction
// waits for the table's one writer (ReadAhead), so that the writer only
// writes the rows. A bigger document that supersedes another (a
// backfill's) is read ahead as digests: when no segment changed, the
// writer relabels its rows and reads nothing.
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
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"

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
CREATE TABLE IF NOT EXISTS search_digests (
	id     INTEGER PRIMARY KEY, -- search_rows.id
	digest BLOB NOT NULL
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

	// pendingTermsSet notes that this process has set FTS5's hashsize,
	// so that the writer does not check it again for every workflow.
	pendingTermsSet atomic.Bool
}

var _ sqlitetable.WriteHook = (*Indexer)(nil)

// Schema creates the index tables.
func (*Indexer) Schema() string { return schema }

// The statements indexing runs for every workflow it indexes.
const (
	savepoint             = `SAVEPOINT search_index`
	rollbackToSavepoint   = `ROLLBACK TO search_index`
	releaseSavepoint      = `RELEASE search_index`
	clearUnindexed        = `DELETE FROM search_unindexed WHERE workflow = ?`
	recordUnindexed       = `INSERT OR REPLACE INTO search_unindexed VALUES (?, ?)`
	setPendingTermsIfNeed = `INSERT INTO search_text (search_text, rank) SELECT 'hashsize', ?1 WHERE NOT EXISTS (SELECT 1 FROM search_text_config WHERE k = 'hashsize' AND v = ?1)`
)

// Statements are the ones indexing runs for every workflow, prepared
// once by the table.
func (*Indexer) Statements() []string {
	return append([]string{savepoint, rollbackToSavepoint, releaseSavepoint, clearUnindexed}, rowStatements...)
}

// AfterWrite indexes every workflow the transaction marks completed,
// and drops the rows of every workflow it deletes. ahead is what
// ReadAhead read of them.
func (ix *Indexer) AfterWrite(ctx context.Context, tx *sqlitetable.HookTx, changes []sqlitetable.Change, ahead any) error {
	read, _ := ahead.(readAheads)
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
		have := read[wf.ID]
		if steps := written(changes, pipeline.StepKey(wf.ID)); !sameItem(steps, have.steps) {
			// The step item was read ahead from a version the writer did
			// not keep (or not at all): its outputs are read again.
			have.steps, have.outputsRead = steps, false
		}
		if err := ix.indexOrRecord(ctx, tx, wf, have); err != nil {
			return err
		}
	}
	return nil
}

// known is what the indexer has of a workflow before it reads anything:
// its segments, read ahead (when read is set), with the digest of each
// (search.SegmentDigest); its step item, when the transaction that
// completes it writes that too; and the document outputs that step item
// names, read ahead (when outputsRead is set).
//
// A workflow that supersedes another of its document and is over the
// read-ahead budget keeps only each segment's place and digest
// (digestsOnly): when every one is unchanged, the writer relabels the
// old rows and reads nothing; else it reads the segments itself.
type known struct {
	read        bool
	segments    []docread.Segment
	digests     [][]byte
	digestsOnly bool
	steps       table.Item
	outputsRead bool
	outputs     map[string]json.RawMessage
}

// readAheads are the workflows ReadAhead read, by id.
type readAheads map[string]known

// aheadTextBudget bounds the text ReadAhead holds for one workflow. A
// bigger document is read inside the writer, a manifest batch at a time,
// so that memory stays bounded; its indexing costs the writer little next
// to everything else such a document writes.
const aheadTextBudget = 1 << 20

// ReadAhead reads the segments of each workflow the writes complete,
// before the transaction waits for the writer: reading a small document's
// blobs was a third of its indexing. A write to a workflow the writer's
// cache already holds as completed (linking it to a backfill's) reads
// nothing. The blobs are final by then (every
// stage has finished); a read that fails is left to AfterWrite, which
// records the failure.
func (ix *Indexer) ReadAhead(ctx context.Context, writes []sqlitetable.Change) any {
	var out readAheads
	for _, c := range writes {
		wf, ok := completedNow(c)
		if !ok {
			continue
		}
		k, ok := ix.readSegments(ctx, wf)
		if !ok {
			continue
		}
		k.readOutputs(ctx, ix.Blobs, wf, written(writes, pipeline.StepKey(wf.ID)))
		if out == nil {
			out = readAheads{}
		}
		out[wf.ID] = k
	}
	if out == nil {
		return nil
	}
	return out
}

// errOverBudget stops a read ahead whose text outgrew aheadTextBudget.
var errOverBudget = errors.New("over the read-ahead budget")

func (ix *Indexer) readSegments(ctx context.Context, wf pipeline.Workflow) (known, bool) {
	k := known{read: true}
	size := 0
	err := docread.Segments(ctx, ix.Blobs, workflowRef(wf), ix.stageOrder(ctx, wf), func(s docread.Segment) error {
		k.digests = append(k.digests, search.SegmentDigest(s))
		if !k.digestsOnly {
			size += len(s.Text)
			for _, o := range s.Outputs {
				size += len(o)
			}
			if size > aheadTextBudget {
				if wf.Supersedes == "" {
					// Nothing says the rows are there to keep: the writer
					// reads the segments once, not twice.
					return errOverBudget
				}
				k.digestsOnly = true
				for i := range k.segments {
					k.segments[i] = placeOf(k.segments[i])
				}
			}
		}
		if k.digestsOnly {
			s = placeOf(s)
		}
		k.segments = append(k.segments, s)
		return nil
	})
	return k, err == nil
}

// placeOf is s without its text and outputs: where its row sits.
func placeOf(s docread.Segment) docread.Segment {
	return docread.Segment{Index: s.Index, Kind: s.Kind, Audio: s.Audio}
}

// readOutputs reads ahead the document outputs that steps, the step item
// the completing transaction writes, names; without one, or when they
// cannot be read, the writer reads them.
func (k *known) readOutputs(ctx context.Context, blobs blob.Store, wf pipeline.Workflow, steps table.Item) {
	var prog pipeline.StepProgress
	if steps == nil || table.DecodeData(steps, &prog) != nil {
		return
	}
	outputs, err := docread.DocumentOutputs(ctx, blobs, workflowRef(wf), prog)
	if err != nil {
		return
	}
	k.steps, k.outputs, k.outputsRead = steps, outputs, true
}

// sameItem reports whether a and b are one item, the very map: the
// writer writes an update's item as computed before the batch when the
// item has not changed since, so that identity says nothing changed.
func sameItem(a, b table.Item) bool {
	return a != nil && b != nil && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// written is the item the changes leave under key, or nil when they do
// not write it.
func written(changes []sqlitetable.Change, key table.Key) table.Item {
	for _, c := range changes {
		if c.Key == key {
			return c.After
		}
	}
	return nil
}

func workflowRef(wf pipeline.Workflow) pipeline.WorkflowRef {
	return pipeline.WorkflowRef{ProjectID: wf.ProjectID, DocumentID: wf.DocumentID, WorkflowID: wf.ID}
}

// stageOrder is wf's pipeline version's stages in order, or nil (by
// name) when it cannot be told.
func (ix *Indexer) stageOrder(ctx context.Context, wf pipeline.Workflow) []string {
	if ix.StageOrder == nil {
		return nil
	}
	order, _ := ix.StageOrder(ctx, wf.Pipeline, wf.PipelineVersion)
	return order
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
// transaction of Reindex's.
type execer interface {
	sqlitetable.RowQueryer
	Prepared(ctx context.Context, query string) (*sql.Stmt, error)
}

// exec runs query through db's statement for it.
func exec(ctx context.Context, db execer, query string, args ...any) (sql.Result, error) {
	st, err := db.Prepared(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// indexOrRecord indexes wf inside a savepoint; when its blobs cannot be
// read, the savepoint is rolled back and the failure recorded instead, so
// that a completion is never refused for the index's sake. A database
// error is returned.
func (ix *Indexer) indexOrRecord(ctx context.Context, db execer, wf pipeline.Workflow, have known) error {
	if !ix.pendingTermsSet.Load() {
		if err := setPendingTerms(ctx, db); err != nil {
			return fmt.Errorf("search index: %w", err)
		}
		// Should this transaction roll back, the setting is lost until
		// the next process: only the index's segment size depends on it.
		ix.pendingTermsSet.Store(true)
	}
	if _, err := exec(ctx, db, savepoint); err != nil {
		return fmt.Errorf("search index: %w", err)
	}
	err := ix.index(ctx, db, wf, have)
	var readErr blobError
	switch {
	case err == nil:
		_, err = exec(ctx, db, clearUnindexed, wf.ID)
	case errors.As(err, &readErr):
		if _, err = exec(ctx, db, rollbackToSavepoint); err == nil {
			_, err = exec(ctx, db, recordUnindexed, wf.ID, readErr.Error())
		}
	}
	if err != nil {
		return fmt.Errorf("search index %s: %w", wf.ID, err)
	}
	_, err = exec(ctx, db, releaseSavepoint)
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
	_, err := exec(ctx, db, setPendingTermsIfNeed, pendingTermsBytes)
	return err
}

// index replaces the rows of wf's document with wf's, from what it
// has (known) and what it reads.
func (ix *Indexer) index(ctx context.Context, db execer, wf pipeline.Workflow, have known) error {
	ref := workflowRef(wf)
	ins, err := replaceDocument(ctx, db, wf.DocumentID)
	if err != nil {
		return err
	}
	if have.digestsOnly && !ins.keepsAll(have.segments, have.digests) {
		// A segment changed: its row needs the text read ahead left out.
		have.read = false
	}
	if have.read {
		for i, s := range have.segments {
			if err := ins.putSegment(ctx, wf, s, have.digests[i]); err != nil {
				return err
			}
		}
	} else {
		var dbErr error
		err = docread.Segments(ctx, ix.Blobs, ref, ix.stageOrder(ctx, wf), func(s docread.Segment) error {
			dbErr = ins.putSegment(ctx, wf, s, search.SegmentDigest(s))
			return dbErr
		})
		if dbErr != nil {
			return dbErr
		}
		if err != nil {
			return blobError{err}
		}
	}
	outputs := have.outputs
	if !have.outputsRead {
		if outputs, err = ix.readOutputs(ctx, db, wf, have.steps); err != nil {
			return err
		}
	}
	if len(outputs) > 0 {
		if err := ins.putDocument(ctx, wf, outputs); err != nil {
			return err
		}
	}
	return ins.finish(ctx, wf)
}

// readOutputs reads wf's document outputs. The step item (steps, or as
// stored) says which outputs the workflow reused from another (the stage
// cache): those are read where they are.
func (ix *Indexer) readOutputs(ctx context.Context, db execer, wf pipeline.Workflow, steps table.Item) (map[string]json.RawMessage, error) {
	var prog pipeline.StepProgress
	if steps != nil {
		if err := table.DecodeData(steps, &prog); err != nil {
			return nil, err
		}
	} else if err := sqlitetable.GetDataIn(ctx, db, pipeline.StepKey(wf.ID), &prog); err != nil && !errors.Is(err, table.ErrNotFound) {
		return nil, err
	}
	outputs, err := docread.DocumentOutputs(ctx, ix.Blobs, workflowRef(wf), prog)
	if err != nil {
		return nil, blobError{err}
	}
	return outputs, nil
}
