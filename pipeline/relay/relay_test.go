package relay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/driver/sqlitetable"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
	"github.com/docpipe/docpipe/pipeline/relay"
)

const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

type bundle struct {
	repo  *pipeline.Repository
	clock *fakeClock
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func setup(t testing.TB) bundle {
	t.Helper()
	tb, err := sqlitetable.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	clock := &fakeClock{t: time.Now().UTC()}
	return bundle{repo: pipeline.NewRepository(tb, pipeline.WithClock(clock.Now)), clock: clock}
}

// newWorkflow creates a workflow and records outcomes on it, in order.
func (b bundle) newWorkflow(t testing.TB, outcomes ...pipeline.WorkflowStatus) pipeline.WorkflowRef {
	t.Helper()
	ctx := context.Background()
	id := pipeline.NewID()
	doc := pipeline.Document{ProjectID: "default", ID: id, FileName: "report.pdf", FileURI: "file:///report.pdf",
		BlobKey: "default/" + id + "/source", SHA256: fmt.Sprintf("%064x", id)}
	wf := pipeline.Workflow{ID: pipeline.NewID(), ProjectID: doc.ProjectID, DocumentID: doc.ID, FileName: doc.FileName}
	if err := b.repo.CreateWorkflow(ctx, doc, wf, pipelinefile.Default().Stages); err != nil {
		t.Fatal(err)
	}
	ref := pipeline.WorkflowRef{ProjectID: doc.ProjectID, DocumentID: doc.ID, WorkflowID: wf.ID}
	from := []pipeline.WorkflowStatus{pipeline.WorkflowPending}
	for _, to := range outcomes {
		if to == pipeline.WorkflowInProgress {
			from = []pipeline.WorkflowStatus{pipeline.WorkflowCompleted, pipeline.WorkflowFailed}
		}
		if ok, err := b.repo.SetWorkflowStatus(ctx, ref, from, to, map[bool]string{true: "boom"}[to == pipeline.WorkflowFailed]); !ok || err != nil {
			t.Fatalf("SetWorkflowStatus → %s: %v %v", to, ok, err)
		}
		from = []pipeline.WorkflowStatus{pipeline.WorkflowInProgress}
	}
	return ref
}

// receiver is a webhook endpoint that verifies signatures and records what
// it got. fail decides per request whether to answer 500.
type receiver struct {
	t    testing.TB
	mu   sync.Mutex
	got  []pipeline.Event
	hits atomic.Int64
	fail func(n int64, ev pipeline.Event) bool
	srv  *httptest.Server
}

func newReceiver(t testing.TB, fail func(n int64, ev pipeline.Event) bool) *receiver {
	rc := &receiver{t: t, fail: fail}
	verifier, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := rc.hits.Add(1)
		body, _ := io.ReadAll(r.Body)
		if err := verifier.Verify(body, r.Header); err != nil {
			t.Errorf("signature: %v", err)
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var ev pipeline.Event
		if err := json.Unmarshal(body, &ev); err != nil || ev.ID != r.Header.Get("webhook-id") {
			t.Errorf("body %s (id header %s): %v", body, r.Header.Get("webhook-id"), err)
		}
		if rc.fail != nil && rc.fail(n, ev) {
			http.Error(w, "try later", http.StatusInternalServerError)
			return
		}
		rc.mu.Lock()
		rc.got = append(rc.got, ev)
		rc.mu.Unlock()
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) events() []pipeline.Event {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.got)
}

func (b bundle) relay(t testing.TB, sinks ...relay.Sink) *relay.Relay {
	return &relay.Relay{Repo: b.repo, Sinks: sinks, Now: b.clock.Now, MaxAttempts: 4,
		Backoff: func(n int) time.Duration { return time.Duration(n) * time.Minute }}
}

func webhook(t testing.TB, rc *receiver, opts ...relay.WebhookOption) *relay.Webhook {
	w, err := relay.NewWebhook(rc.srv.URL, secret, append(opts, relay.AllowPrivateNetwork())...)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func drain(t testing.TB, r *relay.Relay) relay.Stats {
	t.Helper()
	s, err := r.Drain(context.Background())
	if err != nil {
		t.Fatalf("Drain: %v", err)
	}
	return s
}

func TestDeliversSignedEventsOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ref := b.newWorkflow(t, pipeline.WorkflowFailed, pipeline.WorkflowInProgress, pipeline.WorkflowCompleted)
	rc := newReceiver(t, nil)
	r := b.relay(t, webhook(t, rc))
	r.BlobURI = func(key string) string { return "s3://bucket/" + key }
	if s := drain(t, r); s.Delivered != 3 {
		t.Fatalf("stats %+v, want 3 delivered", s)
	}
	drain(t, r) // nothing left: no second delivery
	got := rc.events()
	var types []pipeline.EventType
	for _, ev := range got {
		types = append(types, ev.Type)
	}
	want := []pipeline.EventType{pipeline.EventFailed, pipeline.EventRerunStarted, pipeline.EventCompleted}
	if !slices.Equal(types, want) {
		t.Fatalf("received %v, want %v", types, want)
	}
	if res := got[2].Results; res == nil || res.SummaryURI != "s3://bucket/"+pipeline.SummaryBlobKey(ref) {
		t.Fatalf("completed event results = %+v", res)
	}
	stored, err := b.repo.ListWorkflowEvents(t.Context(), ref.WorkflowID)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range stored {
		if e.Delivery.State != pipeline.DeliveryDelivered || e.Delivery.Attempts != 1 {
			t.Errorf("stored event %s: %+v", e.Event.ID, e.Delivery)
		}
	}
}

// A receiver answering 500 gets the event again after the backoff, with the
// same id; the workflow's later events wait behind it.
func TestRetriesInOrderWithSameID(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ref := b.newWorkflow(t, pipeline.WorkflowFailed, pipeline.WorkflowInProgress, pipeline.WorkflowCompleted)
	b.newWorkflow(t, pipeline.WorkflowCompleted) // another workflow, not held up
	var mu sync.Mutex
	var ids []string          // every attempt's event id, in order
	tries := map[string]int{} // attempts per event id
	rc := newReceiver(t, func(_ int64, ev pipeline.Event) bool {
		mu.Lock()
		defer mu.Unlock()
		ids = append(ids, ev.ID)
		tries[ev.ID]++
		// ref's first event fails twice.
		return ev.WorkflowID == ref.WorkflowID && ev.Type == pipeline.EventFailed && tries[ev.ID] <= 2
	})
	r := b.relay(t, webhook(t, rc))

	s := drain(t, r)
	if s.Delivered != 1 || s.Retrying != 1 || s.Waiting != 2 {
		t.Fatalf("first pass %+v; want other's event delivered, ref's first retrying, two waiting", s)
	}
	if s := drain(t, r); s.Delivered != 0 || s.Waiting != 3 {
		t.Fatalf("before the backoff %+v; want nothing attempted", s)
	}
	b.clock.Advance(time.Minute)
	if s := drain(t, r); s.Retrying != 1 {
		t.Fatalf("second attempt %+v", s)
	}
	b.clock.Advance(2 * time.Minute)
	if s := drain(t, r); s.Delivered != 3 {
		t.Fatalf("third attempt %+v; want the three events of ref delivered", s)
	}
	var order []pipeline.EventType
	for _, ev := range rc.events() {
		if ev.WorkflowID == ref.WorkflowID {
			order = append(order, ev.Type)
		}
	}
	if !slices.Equal(order, []pipeline.EventType{pipeline.EventFailed, pipeline.EventRerunStarted, pipeline.EventCompleted}) {
		t.Fatalf("ref's events arrived as %v", order)
	}
	failed := rc.events()[1].ID // after the other workflow's event
	if n := tries[failed]; n != 3 {
		t.Fatalf("ref's first event %s was sent %d times under its id, want 3 (ids %v)", failed, n, ids)
	}
}

// A receiver that never accepts: after MaxAttempts the event is dead, the
// next one of its workflow goes out, and redelivery sends the dead one again.
func TestDeadAfterMaxAttemptsAndRedeliver(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ref := b.newWorkflow(t, pipeline.WorkflowFailed, pipeline.WorkflowInProgress)
	var refuse atomic.Bool
	refuse.Store(true)
	rc := newReceiver(t, func(_ int64, ev pipeline.Event) bool { return refuse.Load() && ev.Type == pipeline.EventFailed })
	r := b.relay(t, webhook(t, rc))
	var last relay.Stats
	for range 4 {
		last = drain(t, r)
		b.clock.Advance(time.Hour)
	}
	if last.Dead != 1 || last.Delivered != 1 {
		t.Fatalf("fourth attempt %+v; want the failed event dead and the rerun event delivered", last)
	}
	dead, err := b.repo.ListDeadEvents(t.Context(), 0)
	if err != nil || len(dead) != 1 || dead[0].Delivery.Attempts != 4 || !strings.Contains(dead[0].Delivery.LastError, "500") {
		t.Fatalf("dead events = %+v, %v", dead, err)
	}
	refuse.Store(false)
	if err := b.repo.RedeliverEvent(t.Context(), ref.WorkflowID, dead[0].Event.ID); err != nil {
		t.Fatal(err)
	}
	if s := drain(t, r); s.Delivered != 1 {
		t.Fatalf("after redeliver %+v", s)
	}
	if got := rc.events(); len(got) != 2 || got[1].ID != dead[0].Event.ID {
		t.Fatalf("received %+v", got)
	}
}

// A receiver slower than the timeout counts as a failure, and the event is
// delivered once it answers in time.
func TestWebhookTimeout(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.newWorkflow(t, pipeline.WorkflowCompleted)
	release := make(chan struct{})
	var slow atomic.Bool
	slow.Store(true)
	rc := newReceiver(t, func(int64, pipeline.Event) bool {
		if slow.Load() {
			<-release
		}
		return false
	})
	t.Cleanup(func() { close(release) })
	// The slow receiver blocks until released, so it times out whatever
	// the timeout; a second leaves the prompt one room on a busy machine.
	r := b.relay(t, webhook(t, rc, relay.WithTimeout(time.Second)))
	if s := drain(t, r); s.Retrying != 1 {
		t.Fatalf("slow receiver: %+v", s)
	}
	slow.Store(false)
	b.clock.Advance(time.Hour)
	if s := drain(t, r); s.Delivered != 1 {
		t.Fatalf("prompt receiver: %+v", s)
	}
}

func TestCommandSink(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ref := b.newWorkflow(t, pipeline.WorkflowCompleted)
	out := filepath.Join(t.TempDir(), "events")
	failing := relay.Command{Line: "echo nope >&2; exit 3"}
	r := b.relay(t, failing)
	if s := drain(t, r); s.Retrying != 1 {
		t.Fatalf("failing command: %+v", s)
	}
	evs, _ := b.repo.ListWorkflowEvents(t.Context(), ref.WorkflowID)
	if e := evs[0].Delivery; !strings.Contains(e.LastError, "exit status 3") || !strings.Contains(e.LastError, "nope") {
		t.Fatalf("recorded failure %q", e.LastError)
	}
	r.Sinks = []relay.Sink{relay.Command{Line: `{ echo "$DOCPIPE_EVENT_TYPE $DOCPIPE_EVENT_ID"; cat; } > ` + out}}
	b.clock.Advance(time.Hour)
	if s := drain(t, r); s.Delivered != 1 {
		t.Fatalf("command: %+v", s)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	head, body, _ := strings.Cut(string(got), "\n")
	var ev pipeline.Event
	if err := json.Unmarshal([]byte(body), &ev); err != nil || head != "analysis.completed "+ev.ID || ev.WorkflowID != ref.WorkflowID {
		t.Fatalf("command got %q: %v", got, err)
	}
}

// Not parallel: it sets the test process's environment.
func TestCommandSinkGetsAMinimalEnvironment(t *testing.T) {
	t.Setenv("AWS_SECRET_ACCESS_KEY", "aws-secret")
	t.Setenv("DOCPIPE_TOKEN", "dashboard-token")
	t.Setenv("DOCPIPE_WEBHOOK_SECRET", "whsec_c2VjcmV0")
	t.Setenv("SLACK_HOOK", "named")
	b := setup(t)
	b.newWorkflow(t, pipeline.WorkflowCompleted)
	out := filepath.Join(t.TempDir(), "env")
	r := b.relay(t, relay.Command{Line: "env > " + out, Env: []string{"SLACK_HOOK"}})
	if s := drain(t, r); s.Delivered != 1 {
		t.Fatalf("command: %+v", s)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	env := strings.Split(string(raw), "\n")
	for _, kv := range []string{"SLACK_HOOK=named", "DOCPIPE_EVENT_TYPE=analysis.completed"} {
		if !slices.Contains(env, kv) {
			t.Errorf("the event command's environment lacks %s:\n%s", kv, raw)
		}
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, "AWS_") || strings.HasPrefix(kv, "DOCPIPE_TOKEN=") || strings.HasPrefix(kv, "DOCPIPE_WEBHOOK_SECRET=") {
			t.Errorf("the event command sees %s", kv)
		}
	}
}

func TestWebhookNeverShowsSecrets(t *testing.T) {
	t.Parallel()
	w, err := relay.NewWebhook("https://user:pass@example.com/hook?token=tk-1", secret)
	if err != nil {
		t.Fatal(err)
	}
	s := fmt.Sprint(w)
	if strings.Contains(s, "pass") || strings.Contains(s, "tk-1") || strings.Contains(s, secret[6:]) {
		t.Fatalf("String() = %q shows a secret", s)
	}
	if _, err := relay.NewWebhook("https://example.com", "whsec_not base64!"); err == nil || strings.Contains(err.Error(), "base64!") {
		t.Fatalf("bad secret error %v", err)
	}
}

// BenchmarkDeliver: events delivered per second to a local receiver.
func BenchmarkDeliver(b *testing.B) {
	bd := setup(b)
	for range b.N {
		bd.newWorkflow(b, pipeline.WorkflowCompleted)
	}
	rc := newReceiver(b, nil)
	r := bd.relay(b, webhook(b, rc))
	b.ResetTimer()
	s := drain(b, r)
	b.StopTimer()
	if s.Delivered != b.N {
		b.Fatalf("delivered %d of %d", s.Delivered, b.N)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
