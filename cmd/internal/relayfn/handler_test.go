package relayfn

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/driver/sqlitetable"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
	"github.com/docpipe/docpipe/pipeline/relay"
)

type fixture struct {
	repo *pipeline.Repository
	h    *Handler
	mu   sync.Mutex
	got  []string // event ids the webhook received
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	tb, err := sqlitetable.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	f := &fixture{repo: pipeline.NewRepository(tb)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ev pipeline.Event
		if err := json.Unmarshal(body, &ev); err != nil {
			t.Errorf("event %q: %v", body, err)
		}
		f.mu.Lock()
		f.got = append(f.got, ev.ID)
		f.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	w, err := relay.NewWebhook(srv.URL, "", relay.AllowPrivateNetwork())
	if err != nil {
		t.Fatal(err)
	}
	f.h = &Handler{Relay: &relay.Relay{Repo: f.repo, Sinks: []relay.Sink{w}}}
	return f
}

// completed writes one workflow's analysis.completed event and returns it.
func (f *fixture) completed(t *testing.T) pipeline.Event {
	t.Helper()
	ctx := context.Background()
	id := pipeline.NewID()
	doc := pipeline.Document{ProjectID: "default", ID: id, FileName: "a.pdf", FileURI: "file:///a.pdf", BlobKey: "default/" + id + "/source", SHA256: fmt.Sprintf("%064x", id)}
	wf := pipeline.Workflow{ID: pipeline.NewID(), ProjectID: "default", DocumentID: id, FileName: "a.pdf"}
	if err := f.repo.CreateWorkflow(ctx, doc, wf, pipelinefile.Default().Stages); err != nil {
		t.Fatal(err)
	}
	ref := pipeline.WorkflowRef{ProjectID: "default", DocumentID: id, WorkflowID: wf.ID}
	if ok, err := f.repo.SetWorkflowStatus(ctx, ref, []pipeline.WorkflowStatus{pipeline.WorkflowPending}, pipeline.WorkflowCompleted, ""); !ok || err != nil {
		t.Fatal(ok, err)
	}
	evs, err := f.repo.ListWorkflowEvents(ctx, wf.ID)
	if err != nil || len(evs) != 1 {
		t.Fatal(evs, err)
	}
	return evs[0].Event
}

func (f *fixture) received() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.got)
}

// record is a stream record as Lambda delivers it.
func record(name string, image map[string]string) map[string]any {
	img := map[string]any{}
	for k, v := range image {
		img[k] = map[string]string{"S": v}
	}
	return map[string]any{"eventName": name, "eventSource": "aws:dynamodb", "dynamodb": map[string]any{"NewImage": img}}
}

func invoke(t *testing.T, h *Handler, v any) Response {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.Handle(context.Background(), raw)
	if err != nil {
		t.Fatalf("Handle: %v", err)
	}
	return res
}

func TestStreamRecordsDeliverTheirWorkflows(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ev, other := f.completed(t), f.completed(t)
	pending := map[string]string{"PK": "WF#" + ev.WorkflowID, "SK": "EVENT#" + ev.ID, "GSI1PK": pipeline.OutboxIndexPK(pipeline.DeliveryPending, 3)}
	res := invoke(t, f.h, map[string]any{"Records": []any{
		record("INSERT", pending),
		record("MODIFY", pending), // the same workflow twice: one delivery
		// Not pending outbox items: a delivered event, a step item, a removal.
		record("MODIFY", map[string]string{"PK": "WF#" + other.WorkflowID, "SK": "EVENT#" + other.ID}),
		record("MODIFY", map[string]string{"PK": "WF#" + other.WorkflowID, "SK": "STEP", "GSI1PK": "STEP#ANALYSIS_STATUS#1"}),
		record("REMOVE", map[string]string{"PK": "WF#" + other.WorkflowID, "SK": "EVENT#" + other.ID, "GSI1PK": pipeline.OutboxIndexPK(pipeline.DeliveryPending, 1)}),
	}})
	if res.Mode != "stream" || !slices.Equal(res.Workflows, []string{ev.WorkflowID}) || res.Delivered != 1 {
		t.Fatalf("response %+v, want stream delivery of %s", res, ev.WorkflowID)
	}
	if got := f.received(); !slices.Equal(got, []string{ev.ID}) {
		t.Fatalf("webhook got %v, want only %s", got, ev.ID)
	}

	// The schedule sweeps what the stream did not name.
	res = invoke(t, f.h, map[string]any{"source": "aws.events", "detail-type": "Scheduled Event", "detail": map[string]any{}})
	if res.Mode != "sweep" || res.Delivered != 1 {
		t.Fatalf("sweep %+v, want 1 delivered", res)
	}
	if got := f.received(); !slices.Equal(got, []string{ev.ID, other.ID}) {
		t.Fatalf("webhook got %v, want %s then %s", got, ev.ID, other.ID)
	}
	if res := invoke(t, f.h, map[string]any{"Records": []any{record("INSERT", pending)}}); res.Delivered != 0 {
		t.Fatalf("a replayed record delivered again: %+v", res)
	}
}

func TestUnknownEventIsAnError(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if _, err := f.h.Handle(context.Background(), json.RawMessage(`{"source":"aws.s3","detail-type":"Object Created"}`)); err == nil {
		t.Error("an S3 event: no error")
	}
	if _, err := f.h.Handle(context.Background(), json.RawMessage(`[`)); err == nil {
		t.Error("not JSON: no error")
	}
}
