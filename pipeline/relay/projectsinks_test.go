package relay_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
	"github.com/docpipe/docpipe/pipeline/relay"
)

// completedIn creates a workflow in project and completes it, writing one
// analysis.completed event.
func (b bundle) completedIn(t testing.TB, project string) pipeline.WorkflowRef {
	t.Helper()
	ctx := context.Background()
	id := pipeline.NewID()
	doc := pipeline.Document{ProjectID: project, ID: id, FileName: "report.pdf", FileURI: "file:///report.pdf",
		BlobKey: project + "/" + id + "/source", SHA256: fmt.Sprintf("%064x", id)}
	wf := pipeline.Workflow{ID: pipeline.NewID(), ProjectID: project, DocumentID: doc.ID, FileName: doc.FileName}
	if err := b.repo.CreateWorkflow(ctx, doc, wf, pipelinefile.Default().Stages); err != nil {
		t.Fatal(err)
	}
	ref := pipeline.WorkflowRef{ProjectID: project, DocumentID: doc.ID, WorkflowID: wf.ID}
	if ok, err := b.repo.SetWorkflowStatus(ctx, ref, []pipeline.WorkflowStatus{pipeline.WorkflowPending}, pipeline.WorkflowCompleted, ""); !ok || err != nil {
		t.Fatalf("complete: %v %v", ok, err)
	}
	return ref
}

func (b bundle) project(t testing.TB, id string, sinks pipeline.ProjectSinks) {
	t.Helper()
	ctx := context.Background()
	if err := b.repo.CreateProject(ctx, pipeline.Project{ID: id, Name: id}); err != nil {
		t.Fatal(err)
	}
	sinks.ProjectID = id
	if err := b.repo.SetProjectSinks(ctx, sinks); err != nil {
		t.Fatal(err)
	}
}

func workflowIDs(evs []pipeline.Event) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev.WorkflowID)
	}
	return out
}

// A project's webhook gets that project's events and no other project's;
// the relay's own sinks get every event.
func TestProjectSinksReceiveOnlyTheirProject(t *testing.T) {
	t.Parallel()
	b := setup(t)
	contracts, invoices, all := newReceiver(t, nil), newReceiver(t, nil), newReceiver(t, nil)
	env := map[string]string{"CONTRACTS_SECRET": secret, "INVOICES_SECRET": secret}
	b.project(t, "contracts", pipeline.ProjectSinks{WebhookURL: contracts.srv.URL, WebhookSecretEnv: "CONTRACTS_SECRET"})
	b.project(t, "invoices", pipeline.ProjectSinks{WebhookURL: invoices.srv.URL, WebhookSecretEnv: "INVOICES_SECRET"})
	c := b.completedIn(t, "contracts")
	i := b.completedIn(t, "invoices")
	d := b.newWorkflow(t, pipeline.WorkflowCompleted) // project "default": no sinks of its own

	r := b.relay(t, webhook(t, all))
	r.ProjectSinks = relay.StoredProjectSinks(b.repo, func(k string) string { return env[k] }, relay.AllowPrivateNetwork())
	if s := drain(t, r); s.Delivered != 3 {
		t.Fatalf("stats %+v, want 3 delivered", s)
	}
	if got := workflowIDs(contracts.events()); len(got) != 1 || got[0] != c.WorkflowID {
		t.Errorf("contracts' webhook got %v, want only %s", got, c.WorkflowID)
	}
	if got := workflowIDs(invoices.events()); len(got) != 1 || got[0] != i.WorkflowID {
		t.Errorf("invoices' webhook got %v, want only %s", got, i.WorkflowID)
	}
	if got := all.events(); len(got) != 3 {
		t.Errorf("the relay's webhook got %v, want all three (%s %s %s)", workflowIDs(got), c.WorkflowID, i.WorkflowID, d.WorkflowID)
	}
}

// Without a sink of any kind an event is left pending untouched, not
// "delivered" to nobody.
func TestEventWithoutSinksStaysPending(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rc := newReceiver(t, nil)
	b.project(t, "contracts", pipeline.ProjectSinks{WebhookURL: rc.srv.URL, WebhookSecretEnv: "S"})
	c := b.completedIn(t, "contracts")
	lonely := b.newWorkflow(t, pipeline.WorkflowCompleted)

	r := b.relay(t)
	r.ProjectSinks = relay.StoredProjectSinks(b.repo, func(string) string { return secret }, relay.AllowPrivateNetwork())
	if s := drain(t, r); s.Delivered != 1 || s.Waiting != 1 {
		t.Fatalf("stats %+v, want 1 delivered, 1 waiting", s)
	}
	if got := workflowIDs(rc.events()); len(got) != 1 || got[0] != c.WorkflowID {
		t.Errorf("contracts' webhook got %v, want %s", got, c.WorkflowID)
	}
	evs, err := b.repo.ListWorkflowEvents(t.Context(), lonely.WorkflowID)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Delivery.State != pipeline.DeliveryPending || evs[0].Delivery.Attempts != 0 {
		t.Errorf("event without sinks: %+v, want pending with no attempt", evs)
	}
}

// A project sink whose secret variable is unset fails its deliveries with
// that reason instead of sending unsigned requests or stopping the relay.
func TestMisconfiguredProjectSinkFailsItsEvents(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rc := newReceiver(t, nil)
	b.project(t, "contracts", pipeline.ProjectSinks{WebhookURL: rc.srv.URL, WebhookSecretEnv: "UNSET_SECRET"})
	c := b.completedIn(t, "contracts")
	r := b.relay(t)
	r.ProjectSinks = relay.StoredProjectSinks(b.repo, func(string) string { return "" }, relay.AllowPrivateNetwork())
	if s := drain(t, r); s.Retrying != 1 {
		t.Fatalf("stats %+v, want 1 retrying", s)
	}
	if n := rc.hits.Load(); n != 0 {
		t.Errorf("receiver hit %d times, want 0", n)
	}
	evs, err := b.repo.ListWorkflowEvents(t.Context(), c.WorkflowID)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || !strings.Contains(evs[0].Delivery.LastError, "UNSET_SECRET") {
		t.Errorf("event %+v, want last_error naming UNSET_SECRET", evs)
	}
}

func TestProjectSinksStorage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	if err := b.repo.SetProjectSinks(ctx, pipeline.ProjectSinks{ProjectID: "nope", WebhookURL: "https://example.com/hook"}); !errors.Is(err, pipeline.ErrNotFound) {
		t.Errorf("sinks of a missing project: %v, want ErrNotFound", err)
	}
	b.project(t, "b", pipeline.ProjectSinks{WebhookURL: "https://example.com/b"})
	b.project(t, "a", pipeline.ProjectSinks{WebhookURL: "https://example.com/a", WebhookSecretEnv: "A_SECRET"})
	list, err := b.repo.ListProjectSinks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ProjectID != "a" || list[0].WebhookSecretEnv != "A_SECRET" || list[1].ProjectID != "b" {
		t.Fatalf("ListProjectSinks = %+v", list)
	}
	if err := b.repo.SetProjectSinks(ctx, pipeline.ProjectSinks{ProjectID: "a"}); err != nil {
		t.Fatal(err)
	}
	got, err := b.repo.GetProjectSinks(ctx, "a")
	if err != nil || !got.Empty() {
		t.Errorf("after clearing: %+v %v, want empty", got, err)
	}
	if list, _ := b.repo.ListProjectSinks(ctx); len(list) != 1 {
		t.Errorf("after clearing a: %+v, want only b", list)
	}
}
