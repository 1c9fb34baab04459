package localrun_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docpipe/docpipe/cmd/internal/backend"
	"github.com/docpipe/docpipe/cmd/internal/localrun"
	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
)

func TestSharesWeighDocumentsBySize(t *testing.T) {
	t.Parallel()
	for size, want := range map[int64]int64{
		0:                          1,
		1:                          1,
		localrun.SmallDocBytes:     1,
		localrun.SmallDocBytes + 1: 2,
		1 << 19:                    49, // 48 and a bit: rounded up
		1 << 20:                    localrun.SlotShares,
		100 << 20:                  localrun.SlotShares,
	} {
		if got := localrun.Shares(size); got != want {
			t.Errorf("Shares(%d) = %d, want %d", size, got, want)
		}
	}
}

// heldEngine counts the executions under way and holds each until
// released.
type heldEngine struct {
	started chan string // a workflow id per execution begun
	release chan struct{}
}

func newHeldEngine() *heldEngine {
	return &heldEngine{started: make(chan string, 100), release: make(chan struct{})}
}

func (e *heldEngine) Run(ctx context.Context, _ pipeline.Definition, _ int, in pipeline.ExecutionInput) error {
	e.started <- in.Workflow.WorkflowID
	select {
	case <-e.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// waitStarted waits until n executions have begun at once.
func (e *heldEngine) waitStarted(t *testing.T, n int) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for i := range n {
		select {
		case <-e.started:
		case <-timeout:
			t.Fatalf("%d of %d documents run at once; small documents each take 1/%d of a slot", i, n, localrun.SlotShares)
		}
	}
}

// newRuntime is a runtime on a fresh state home with one document slot.
func newRuntime(t *testing.T, eng localrun.Engine) *localrun.Runtime {
	t.Helper()
	b, err := backend.OpenLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	def := pipelinefile.Default()
	version, _, err := b.Repo.ApplyPipeline(t.Context(), def)
	if err != nil {
		t.Fatal(err)
	}
	ig := &pipeline.Ingester{Repo: b.Repo, Blobs: b.Blobs, Definition: def, Bucket: b.Bucket}
	if err := ig.EnsureProject(t.Context(), "p", "p"); err != nil {
		t.Fatal(err)
	}
	return localrun.New(localrun.Options{
		Ingester: ig, Engine: eng, Project: "p",
		Pipeline: localrun.Pipeline{Name: def.Name, Version: version}, Concurrency: 1,
	})
}

// smallFiles writes n files of a few bytes each.
func smallFiles(t *testing.T, n int) []string {
	t.Helper()
	dir := t.TempDir()
	var files []string
	for i := range n {
		path := filepath.Join(dir, fmt.Sprintf("doc%d.txt", i))
		if err := os.WriteFile(path, []byte(fmt.Sprintf("Document %d.\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, path)
	}
	return files
}

// Taking up what a home left unfinished (docpipe work) weighs documents
// like a run does: with one slot, three small ones run at once.
func TestResumeWeighsSmallDocuments(t *testing.T) {
	t.Parallel()
	eng := newHeldEngine()
	rt := newRuntime(t, eng)
	if _, err := rt.Register(t.Context(), smallFiles(t, 3)); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var ended []string
	done := make(chan error, 1)
	go func() {
		done <- rt.Resume(t.Context(), func(p pipeline.StepProgress, e localrun.Ended) {
			mu.Lock()
			defer mu.Unlock()
			ended = append(ended, p.FileName)
			if e.Err != nil {
				t.Errorf("%s: %v", p.FileName, e.Err)
			}
		})
	}()
	eng.waitStarted(t, 3)
	close(eng.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(ended) != 3 {
		t.Errorf("ended heard of %v, want the three documents", ended)
	}
}

// A long-running process's uploads (docpipe serve) are weighed the same
// way.
func TestServiceWeighsSmallUploads(t *testing.T) {
	t.Parallel()
	eng := newHeldEngine()
	svc := localrun.NewService(newRuntime(t, eng))
	for i := range 3 {
		if _, err := svc.Upload(t.Context(), "p", fmt.Sprintf("up%d.txt", i), strings.NewReader(fmt.Sprintf("Upload %d.\n", i))); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- svc.Serve(ctx) }()
	eng.waitStarted(t, 3)
	close(eng.release)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A document of 1 MiB or more takes a whole slot: nothing else starts
// beside it.
func TestLargeDocumentTakesWholeSlot(t *testing.T) {
	t.Parallel()
	eng := newHeldEngine()
	rt := newRuntime(t, eng)
	big := filepath.Join(t.TempDir(), "big.txt")
	if err := os.WriteFile(big, []byte(strings.Repeat("A large document.\n", 1<<16)), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := rt.Register(t.Context(), append([]string{big}, smallFiles(t, 1)...))
	if err != nil {
		t.Fatal(err)
	}
	large, small := got[0].Registration, got[1].Registration
	if err := rt.Start(t.Context(), localrun.Job{Workflow: large.Workflow, Size: large.Document.Size}, nil); err != nil {
		t.Fatal(err)
	}
	eng.waitStarted(t, 1)
	// The slot is full: the small document waits until its context ends.
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if err := rt.Start(ctx, localrun.Job{Workflow: small.Workflow, Size: small.Document.Size}, nil); err == nil {
		t.Error("a small document started beside one of 1 MiB on one slot")
	}
	close(eng.release)
	rt.Wait()
}
