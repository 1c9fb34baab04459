package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/docpipe/docpipe/pipeline/blob"
)

// Executor starts the state machine for a workflow. Starting a workflow
// that was already started is not an error and starts nothing: executions
// are named after the workflow id.
type Executor interface {
	Start(ctx context.Context, input ExecutionInput) (executionID string, err error)
}

// Ingester registers documents and their workflows. It is the one place
// that knows how a file becomes a document, a workflow and an execution
// input, for `docpipe run`, `docpipe ingest` and the S3-triggered ingest.
type Ingester struct {
	Repo       *Repository
	Blobs      blob.Store
	Definition Definition
	// Bucket is put in execution inputs for the Distributed Map's
	// ItemReader: the S3 bucket on AWS, any name locally.
	Bucket string
	Now    func() time.Time
}

// IngestRequest describes one file to register.
type IngestRequest struct {
	ProjectID string
	FileName  string
	FileURI   string // where the user's file came from (path or s3:// URI)
	// Body is uploaded to the blob store when BlobKey is empty.
	Body io.Reader
	// BlobKey names bytes already in the blob store (an S3 upload); they
	// are copied to the document's source key and hashed on the way.
	BlobKey string
	// WorkflowID, when set, is the workflow's id (derived from an S3 event
	// so a redelivered event maps onto the same workflow).
	WorkflowID string
	// Pipeline and PipelineVersion name the stored pipeline version the
	// workflow runs, recorded on it for good. The Ingester's Definition
	// must be that version: its stages are the workflow's steps.
	Pipeline        string
	PipelineVersion int
	// NoCache starts the workflow with the stage cache off.
	NoCache bool
	// Reuse makes a file whose content the project already holds map onto
	// that document's newest workflow on the same pipeline version instead
	// of starting a new analysis.
	Reuse bool
}

// Registration is the outcome of registering one file.
type Registration struct {
	Workflow Workflow
	Document Document
	// Existing is true when nothing new was created: the workflow existed
	// (same S3 event again, or same content with Reuse).
	Existing bool
}

// Ref returns the workflow reference of the registration.
func (r Registration) Ref() WorkflowRef {
	return WorkflowRef{ProjectID: r.Workflow.ProjectID, DocumentID: r.Workflow.DocumentID, WorkflowID: r.Workflow.ID}
}

func (ig *Ingester) now() time.Time {
	if ig.Now != nil {
		return ig.Now()
	}
	return time.Now()
}

// EnsureProject creates the project unless it exists.
func (ig *Ingester) EnsureProject(ctx context.Context, id, name string) error {
	err := ig.Repo.CreateProject(ctx, Project{ID: id, Name: name, CreatedAt: ig.now()})
	if errors.Is(err, ErrAlreadyExists) {
		// A project from before projects were listed gets listed now.
		return ig.Repo.IndexProject(ctx, id)
	}
	return err
}

// Register stores the file (when needed) and creates its document and
// workflow items in one transaction: Stage, then Commit.
func (ig *Ingester) Register(ctx context.Context, req IngestRequest) (Registration, error) {
	if req.WorkflowID != "" {
		if reg, ok, err := ig.existingWorkflow(ctx, req.WorkflowID); err != nil || ok {
			return reg, err
		}
	}
	st, err := ig.Stage(ctx, req)
	if err != nil {
		return Registration{}, err
	}
	return ig.Commit(ctx, st)
}

// Staged is a file whose bytes are stored under a new document's source
// key and hashed, not yet registered: Commit registers it, Discard drops
// the copy. Staging is the part of a registration that reads and writes
// the bytes, so a caller with many files stages several at once and
// commits them in order.
type Staged struct {
	req   IngestRequest
	docID string
	key   string
	sum   string
	size  int64
	// written is the blob store's write mark of the copy, so that Commit
	// syncs up to it and no further (see blob.WithWriteMark).
	written uint64
}

// SHA256 is the hex SHA-256 of the staged bytes: files with the same one
// map onto one document when committed with Reuse.
func (st Staged) SHA256() string { return st.sum }

// Stage stores and hashes the file's bytes under a new document id. It
// touches no table item; the copy is the caller's until Commit or Discard.
func (ig *Ingester) Stage(ctx context.Context, req IngestRequest) (Staged, error) {
	if req.Pipeline != "" && req.Pipeline != ig.Definition.Name {
		return Staged{}, fmt.Errorf("register %s: pipeline %s requested, but the ingester runs %s", req.FileName, req.Pipeline, ig.Definition.Name)
	}
	docID := NewID()
	mctx := blob.WithWriteMark(ctx)
	key, sum, size, err := ig.store(mctx, req, docID)
	if err != nil {
		return Staged{}, err
	}
	written, _ := blob.WrittenUnder(mctx)
	return Staged{req: req, docID: docID, key: key, sum: sum, size: size, written: written}, nil
}

// Discard removes a staged copy that will not be committed. It runs even
// when ctx is cancelled: it is the clean-up of a cancelled registration.
func (ig *Ingester) Discard(ctx context.Context, st Staged) {
	if st.key != "" {
		_ = ig.Blobs.Delete(context.WithoutCancel(ctx), st.key)
	}
}

// Commit registers a staged file: with Reuse, onto the workflow of a
// document with the same bytes when there is one (the copy is dropped);
// otherwise as a new document and workflow, created in one transaction
// once the bytes are durable. Files with the same bytes committed one
// after the other map onto one document.
func (ig *Ingester) Commit(ctx context.Context, st Staged) (Registration, error) {
	req := st.req
	// dropCopy removes this registration's copy of the bytes when no new
	// document ends up owning it.
	dropCopy := func() { ig.Discard(ctx, st) }
	if req.Reuse {
		if reg, ok, err := ig.sameContent(ctx, req, st.sum); err != nil || ok {
			dropCopy() // the bytes are already stored under the earlier document
			return reg, err
		}
	}
	now := ig.now()
	doc := Document{ProjectID: req.ProjectID, ID: st.docID, FileName: req.FileName, FileURI: req.FileURI, BlobKey: st.key, SHA256: st.sum, Size: st.size, CreatedAt: now}
	wfID := req.WorkflowID
	if wfID == "" {
		wfID = NewID()
	}
	wf := Workflow{
		ID: wfID, ProjectID: req.ProjectID, DocumentID: st.docID,
		FileURI: req.FileURI, FileName: req.FileName,
		Pipeline: req.Pipeline, PipelineVersion: req.PipelineVersion, NoCache: req.NoCache,
		Status: WorkflowPending, CreatedAt: now, UpdatedAt: now,
	}
	// The workflow item promises the source bytes: make them durable first.
	// The flush covers this copy, not every write since the last sync, so
	// one sync serves a batch of staged files, and a sync begun for other
	// work that covered the copy already makes it a no-op.
	fctx := blob.WithWriteMark(ctx)
	blob.NoteWrite(fctx, st.written)
	if err := blob.Flush(fctx, ig.Blobs); err != nil {
		dropCopy()
		return Registration{}, fmt.Errorf("register %s: %w", req.FileName, err)
	}
	if err := ig.Repo.CreateWorkflow(ctx, doc, wf, ig.Definition.Stages); err != nil {
		if errors.Is(err, ErrAlreadyExists) {
			// Either our own create committed and a retry of it (after a
			// lost response) found it, or a concurrent delivery of the same
			// event won the race. Both leave the workflow in place.
			if reg, ok, err2 := ig.existingWorkflow(ctx, wfID); err2 == nil && ok {
				reg.Existing = reg.Document.ID != st.docID
				if reg.Existing {
					dropCopy()
				}
				return reg, nil
			}
		}
		dropCopy()
		return Registration{}, fmt.Errorf("register %s: %w", req.FileName, err)
	}
	return Registration{Workflow: wf, Document: doc}, nil
}

// store copies the document's bytes to the document's own source key,
// hashing them on the way: from the request body, or from an upload already
// in the blob store (an S3 upload under incoming/, which a later upload to
// the same key may overwrite — the copy pins the bytes this workflow was
// registered for).
func (ig *Ingester) store(ctx context.Context, req IngestRequest, docID string) (key, sum string, size int64, err error) {
	body := req.Body
	if req.BlobKey != "" {
		rc, err := ig.Blobs.Get(ctx, req.BlobKey)
		if err != nil {
			return "", "", 0, fmt.Errorf("read %s: %w", req.BlobKey, err)
		}
		defer rc.Close()
		body = rc
	}
	if body == nil {
		return "", "", 0, errors.New("ingest: request has neither a body nor a blob key")
	}
	h := sha256.New()
	key = SourceBlobKey(req.ProjectID, docID)
	cr := &countingReader{r: io.TeeReader(body, h)}
	if err := ig.Blobs.Put(ctx, key, cr); err != nil {
		return "", "", 0, fmt.Errorf("store %s: %w", req.FileName, err)
	}
	return key, hex.EncodeToString(h.Sum(nil)), cr.n, nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (ig *Ingester) existingWorkflow(ctx context.Context, workflowID string) (Registration, bool, error) {
	prog, err := ig.Repo.GetProgress(ctx, workflowID)
	if errors.Is(err, ErrNotFound) {
		return Registration{}, false, nil
	}
	if err != nil {
		return Registration{}, false, err
	}
	wf, err := ig.Repo.GetWorkflow(ctx, prog.DocumentID, workflowID)
	if err != nil {
		return Registration{}, false, err
	}
	doc, err := ig.Repo.GetDocument(ctx, prog.ProjectID, prog.DocumentID)
	if err != nil {
		return Registration{}, false, err
	}
	return Registration{Workflow: wf, Document: doc, Existing: true}, true, nil
}

// sameContent finds the newest workflow on the requested pipeline version
// of a document of this project with the same bytes.
func (ig *Ingester) sameContent(ctx context.Context, req IngestRequest, sum string) (Registration, bool, error) {
	docs, err := ig.Repo.DocumentsByContent(ctx, sum)
	if err != nil {
		return Registration{}, false, err
	}
	for _, d := range docs {
		if d.ProjectID != req.ProjectID {
			continue
		}
		wfs, err := ig.Repo.ListDocumentWorkflows(ctx, d.ID)
		if err != nil {
			return Registration{}, false, err
		}
		// Only an analysis by the same pipeline version is the same
		// analysis: another pipeline's results are not what was asked for.
		for _, wf := range wfs {
			if wf.Pipeline == req.Pipeline && wf.PipelineVersion == req.PipelineVersion {
				return Registration{Workflow: wf, Document: d, Existing: true}, true, nil
			}
		}
	}
	return Registration{}, false, nil
}

// ExecutionInput builds the state machine input of a registration.
func (ig *Ingester) ExecutionInput(r Registration) ExecutionInput {
	ref := r.Ref()
	return ExecutionInput{
		Workflow:    ref,
		Bucket:      ig.Bucket,
		ManifestKey: ManifestBlobKey(ref),
	}
}
