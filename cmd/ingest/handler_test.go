package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/docpipe/docpipe/cmd/internal/backend"
	"github.com/docpipe/docpipe/cmd/internal/s3ingest"
	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/driver/dirblob"
	"github.com/docpipe/docpipe/pipeline/driver/sqlitetable"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
	"github.com/docpipe/docpipe/statemachine/sfn"
)

var lastModified = time.Date(2026, 11, 22, 2, 0, 0, 0, time.UTC)

// fakeHead answers HeadObject for keys present in the blob directory.
type fakeHead struct{ root string }

func (f fakeHead) HeadObject(_ context.Context, in *s3.HeadObjectInput, _ ...func(*s3.Options)) (*s3.HeadObjectOutput, error) {
	if _, err := os.Stat(filepath.Join(f.root, *in.Key)); err != nil {
		return nil, &types.NotFound{}
	}
	return &s3.HeadObjectOutput{LastModified: aws.Time(lastModified), ETag: aws.String(`"5d41402abc4b2a76b9719d911017c592"`)}, nil
}

type fakeExecutor struct {
	mu     sync.Mutex
	starts map[string]int
}

func (f *fakeExecutor) Start(_ context.Context, in pipeline.ExecutionInput) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.starts[in.Workflow.WorkflowID]++
	return "exec-" + in.Workflow.WorkflowID, nil
}

func setup(t *testing.T) (*handler, *fakeExecutor, *pipeline.Repository) {
	t.Helper()
	dir := t.TempDir()
	tbl, err := sqlitetable.Open(filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tbl.Close() })
	blobs, err := dirblob.New(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	if err := blobs.Put(t.Context(), "incoming/annual report (2026).pdf", strings.NewReader("hello")); err != nil {
		t.Fatal(err)
	}
	repo := pipeline.NewRepository(tbl)
	ex := &fakeExecutor{starts: map[string]int{}}
	return &handler{
		Ingest: s3ingest.Ingest{
			Ingester: &pipeline.Ingester{Repo: repo, Blobs: blobs, Definition: pipelinefile.Default(), Bucket: "docs"},
			Executor: ex, Project: "default",
		},
		S3:         fakeHead{root: filepath.Join(dir, "blobs")},
		Reconciler: &sfn.Reconciler{Repo: repo, StateMachineARN: "arn:aws:states:us-east-1:123456789012:stateMachine:docpipe"},
		Prefix:     "incoming/",
	}, ex, repo
}

func load(t *testing.T, name string) json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Both event shapes for the same upload converge on one workflow; the
// pipeline's own output key is ignored; redelivery starts nothing new.
func TestObjectCreatedShapesConverge(t *testing.T) {
	t.Parallel()
	h, ex, _ := setup(t)
	res, err := h.Handle(t.Context(), load(t, "s3_notification.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Started) != 1 || len(res.Ignored) != 1 || res.Ignored[0] != "p/d/w/segments/000001/text.txt" {
		t.Fatalf("notification: %+v", res)
	}
	want := s3ingest.WorkflowID(s3ingest.Object{Bucket: "docs", Key: "incoming/annual report (2026).pdf", ETag: "5d41402abc4b2a76b9719d911017c592", LastModified: lastModified})
	if res.Started[0] != want {
		t.Fatalf("workflow %s, want %s", res.Started[0], want)
	}
	for range 2 {
		res, err = h.Handle(t.Context(), load(t, "eventbridge_object_created.json"))
		if err != nil || len(res.Existing) != 1 || res.Existing[0] != want || len(res.Started) != 0 {
			t.Fatalf("EventBridge: %+v, %v", res, err)
		}
	}
	if ex.starts[want] != 3 || len(ex.starts) != 1 {
		t.Fatalf("starts %v: every delivery of a pending workflow starts (idempotently) the same execution", ex.starts)
	}
}

func TestStatusChangeEvent(t *testing.T) {
	t.Parallel()
	h, _, repo := setup(t)
	res, err := h.Handle(t.Context(), load(t, "s3_notification.json"))
	if err != nil {
		t.Fatal(err)
	}
	wf := res.Started[0]
	ev := strings.ReplaceAll(string(load(t, "execution_status_change.json")), "WORKFLOW", wf)
	var env envelope
	if err := json.Unmarshal([]byte(ev), &env); err != nil {
		t.Fatal(err)
	}
	var d sfn.StatusChange
	if err := json.Unmarshal(env.Detail, &d); err != nil || d.Status != "ABORTED" || d.Input != nil {
		t.Fatalf("detail %+v, %v", d, err)
	}
	out, err := h.Handle(t.Context(), json.RawMessage(ev))
	if err != nil || out.Outcome != string(sfn.OutcomeMarked) {
		t.Fatalf("%+v, %v", out, err)
	}
	p, err := repo.GetProgress(t.Context(), wf)
	if err != nil || p.Status != pipeline.WorkflowFailed || p.Error != "execution aborted: Operator: stopped by hand" {
		t.Fatalf("%s %q %v", p.Status, p.Error, err)
	}
}

func TestUnknownEvent(t *testing.T) {
	t.Parallel()
	h, _, _ := setup(t)
	for _, ev := range []string{`{"source":"aws.ec2","detail-type":"x"}`, `not json`} {
		if _, err := h.Handle(t.Context(), json.RawMessage(ev)); err == nil {
			t.Errorf("%s accepted", ev)
		}
	}
}

// An object deleted before the event is handled is ignored, and does not
// make Lambda redeliver the records that were processed.
func TestDeletedObjectIsIgnored(t *testing.T) {
	t.Parallel()
	h, ex, _ := setup(t)
	ev := strings.ReplaceAll(string(load(t, "eventbridge_object_created.json")), "annual%20report%20%282026%29.pdf", "gone.pdf")
	ev = strings.ReplaceAll(ev, "annual report (2026).pdf", "gone.pdf")
	res, err := h.Handle(t.Context(), json.RawMessage(ev))
	if err != nil {
		t.Fatalf("err = %v", err)
	}
	if len(res.Started) != 0 || len(res.Ignored) != 1 || len(ex.starts) != 0 {
		t.Fatalf("res = %+v, starts %v", res, ex.starts)
	}
}

// The ingest function refuses, before it touches AWS, to run a project
// whose outputs its own bucket event would take for uploads.
func TestHandlerRefusesAProjectUnderTheUploadsPrefix(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		backend.EnvStateMachineARN: "arn:aws:states:us-east-1:000000000000:stateMachine:docpipe",
		backend.EnvProject:         "incoming",
	}
	_, err := newHandler(t.Context(), func(k string) string { return env[k] }, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "uploads prefix") {
		t.Fatalf("err = %v, want the project refused", err)
	}
}
