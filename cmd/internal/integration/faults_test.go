//go:build integration

package integration

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/logging"

	"github.com/docpipe/docpipe/cmd/internal/backend"
	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/driver/awstest"
	"github.com/docpipe/docpipe/pipeline/driver/dynamotable"
	"github.com/docpipe/docpipe/pipeline/driver/s3blob"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
	"github.com/docpipe/docpipe/statemachine/embedded"
)

var samplesDir = filepath.Join("..", "..", "..", "samples", "docs")

// sampleFiles are the documents the suite pushes through the pipeline.
func sampleFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, name := range []string{"letter.txt", "notes.md", "page.html", "report.docx"} {
		files = append(files, filepath.Join(samplesDir, name))
	}
	return files
}

// runEmbedded runs files through the embedded engine over b and returns
// the registrations.
func runEmbedded(t *testing.T, b *backend.Backend, files []string) []pipeline.Registration {
	t.Helper()
	ctx := context.Background()
	rec := pipeline.BatchRecorder(b.Repo)
	reg, err := backend.Registry(b, backend.StepOptions{PDFBackend: "go", Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := embedded.New(reg, b.Blobs, embedded.Options{Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	ig := &pipeline.Ingester{Repo: b.Repo, Blobs: b.Blobs, Definition: pipelinefile.Default(), Bucket: b.Bucket}
	if err := ig.EnsureProject(ctx, "it", "it"); err != nil {
		t.Fatal(err)
	}
	var regs []pipeline.Registration
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		r, err := ig.Register(ctx, pipeline.IngestRequest{ProjectID: "it", FileName: filepath.Base(path), FileURI: path, Body: f})
		f.Close()
		if err != nil {
			t.Fatalf("register %s: %v", path, err)
		}
		// A write whose answer was lost is resent and finds itself done:
		// that is success, not an error for the engine to handle.
		if err := eng.Run(ctx, ig.Definition, 0, ig.ExecutionInput(r)); err != nil {
			t.Errorf("%s: execution ended with %v", path, err)
		}
		regs = append(regs, r)
	}
	return regs
}

// results are what must not depend on where or how a workflow ran.
type results struct {
	Status              pipeline.WorkflowStatus
	Total, Done, Failed int
	Segments            []string // per segment: status and text
	Summary, Graph      string
}

func readResults(t *testing.T, b *backend.Backend, r pipeline.Registration) results {
	t.Helper()
	ctx := context.Background()
	prog, err := b.Repo.GetProgress(ctx, r.Workflow.ID)
	if err != nil {
		t.Fatal(err)
	}
	res := results{Status: prog.Status, Total: prog.TotalSegments, Done: prog.SegmentsDone, Failed: prog.SegmentsFailed}
	segs, _, err := b.Repo.ListSegments(ctx, r.Workflow.ID, 1000, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range segs {
		text, err := blob.GetBytes(ctx, b.Blobs, s.TextKey, 1<<20)
		if err != nil {
			t.Fatalf("segment %d text: %v", s.Index, err)
		}
		res.Segments = append(res.Segments, string(s.Status)+":"+string(text))
	}
	ref := r.Ref()
	sum, err := blob.GetBytes(ctx, b.Blobs, pipeline.SummaryBlobKey(ref), 1<<24)
	if err != nil {
		t.Fatalf("summary: %v", err)
	}
	graph, err := blob.GetBytes(ctx, b.Blobs, pipeline.GraphBlobKey(ref), 1<<24)
	if err != nil {
		t.Fatalf("graph: %v", err)
	}
	res.Summary, res.Graph = string(sum), string(graph)
	return res
}

// With 10% of DynamoDB and S3 calls throttled or failing with 5xx — half
// of them after the service did the work — the pipeline still completes,
// and its results equal a fault-free local run: nothing lost, nothing
// counted twice.
func TestPipelineSurvivesInjectedFaults(t *testing.T) {
	t.Parallel()
	cfg := awstest.Config(t)
	faulty := NewFaultyClient(cfg.HTTPClient, 0.10, 42)
	plain := awstest.DynamoDB(t)
	tableName := awstest.Table(t, plain)
	bucket := awstest.Bucket(t, awstest.S3(t))
	cfg.HTTPClient = faulty
	cfg.Logger = logging.Nop{} // the SDK warns about every injected fault
	// The production retryer, its backoff capped: the test is about what
	// is retried and how often, and a second of backoff per fault is 40 s
	// of sleeping.
	cfg.Retryer = func() aws.Retryer { return retry.AddWithMaxBackoffDelay(dynamotable.NewRetryer(), 20*time.Millisecond) }
	clients := backend.AWSClients{
		Config:   cfg,
		DynamoDB: dynamodb.NewFromConfig(cfg),
		S3:       s3.NewFromConfig(cfg, s3blob.PathStyleForEndpoint),
	}
	aws, err := backend.OpenAWSWith(clients, backend.AWSOptions{Table: tableName, Bucket: bucket})
	if err != nil {
		t.Fatal(err)
	}
	local, err := backend.OpenLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()

	files := sampleFiles(t)
	got := runEmbedded(t, aws, files)
	want := runEmbedded(t, local, files)
	t.Logf("injected %d faults into %d calls", faulty.Injected.Load(), faulty.Calls.Load())
	if faulty.Injected.Load() == 0 {
		t.Fatal("no fault was injected; the test proves nothing")
	}
	for i := range files {
		g, w := readResults(t, aws, got[i]), readResults(t, local, want[i])
		if g.Status != pipeline.WorkflowCompleted || g.Done != g.Total || g.Failed != 0 {
			t.Errorf("%s: %+v", files[i], g)
		}
		if len(g.Segments) != g.Total {
			t.Errorf("%s: %d segment items for %d segments", files[i], len(g.Segments), g.Total)
		}
		if g.Summary != w.Summary || g.Graph != w.Graph || len(g.Segments) != len(w.Segments) {
			t.Errorf("%s: results differ from the fault-free local run", files[i])
		}
		for j := range min(len(g.Segments), len(w.Segments)) {
			if g.Segments[j] != w.Segments[j] {
				t.Errorf("%s: segment %d differs", files[i], j+1)
			}
		}
	}
}
