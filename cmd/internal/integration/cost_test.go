//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssfn "github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/driver/awscount"
)

// costPages is the size of the cost-accounting document. The goal is
// stated for 1,000 pages; on moto those take three minutes (every request
// is serialized, see awstest), so the suite runs 400, which spans several
// Map batches all the same; with -short 200, two batches, where the fixed
// requests (some 40 table writes, a dozen PUTs) still leave each per-page
// count well under its goal.
func costPages() int {
	if testing.Short() {
		return 200
	}
	return 400
}

// Per-page goals of a large document.
const (
	maxTransitionsPerPage  = 0.1
	maxDynamoWritesPerPage = 1.2
	maxS3PutsPerPage       = 1.2
)

var (
	dynamoWrites = []string{"DynamoDB.PutItem", "DynamoDB.UpdateItem", "DynamoDB.DeleteItem", "DynamoDB.TransactWriteItems", "DynamoDB.BatchWriteItem"}
	s3Puts       = []string{"S3.PutObject", "S3.UploadPart", "S3.CreateMultipartUpload", "S3.CompleteMultipartUpload"}
)

func sum(counts map[string]int, ops []string) int {
	n := 0
	for _, op := range ops {
		n += counts[op]
	}
	return n
}

// A large PDF through Step Functions: what the worker's requests and the
// state machine's transitions cost per page.
func TestCostPerPage(t *testing.T) {
	t.Parallel()
	counter := &awscount.Counter{}
	d := deploy(t, deployOptions{counter: counter})
	pdf := samplePDF(t, costPages())
	start := time.Now()
	res := d.upload(t, pdf)
	if ex := d.wait(t, res.ExecutionID); ex.Status != "SUCCEEDED" {
		t.Fatalf("execution %s %s %s", ex.Status, ex.Error, ex.Cause)
	}
	elapsed := time.Since(start)
	counts := counter.Snapshot()
	prog, err := d.B.Repo.GetProgress(t.Context(), res.Registration.Workflow.ID)
	if err != nil {
		t.Fatal(err)
	}
	if prog.SegmentsDone != prog.TotalSegments || prog.SegmentsFailed != 0 {
		t.Fatalf("%d of %d segments done, %d failed", prog.SegmentsDone, prog.TotalSegments, prog.SegmentsFailed)
	}
	writes, puts := sum(counts, dynamoWrites), sum(counts, s3Puts)
	parent, children, childNote := transitions(t, d, res.ExecutionID)
	ref := res.Registration.Ref()
	manifest, err := blob.GetBytes(t.Context(), d.B.Blobs, pipeline.ManifestBlobKey(ref), 1<<24)
	if err != nil {
		t.Fatal(err)
	}
	var batches []json.RawMessage
	if err := json.Unmarshal(manifest, &batches); err != nil {
		t.Fatalf("manifest: %v", err)
	}
	pages := float64(costPages())
	t.Logf("%d pages, %d segments in %v on the endpoint", costPages(), prog.TotalSegments, elapsed.Round(time.Millisecond))
	t.Logf("worker requests: %v", counts)
	t.Logf("DynamoDB writes: %d (%.3f per page); S3 PUTs: %d (%.3f per page)", writes, float64(writes)/pages, puts, float64(puts)/pages)
	t.Logf("state transitions: parent %d + Map children %d = %.3f per page (%s)", parent, children, float64(parent+children)/pages, childNote)
	// Each batch is one child execution entering its one Task state.
	est := parent + len(batches)
	t.Logf("state transitions with one per Map batch (%d batches): %d = %.3f per page, goal ≤ %.1f", len(batches), est, float64(est)/pages, maxTransitionsPerPage)
	if float64(writes)/pages > maxDynamoWritesPerPage {
		t.Errorf("%.3f DynamoDB writes per page, goal ≤ %.1f", float64(writes)/pages, maxDynamoWritesPerPage)
	}
	if float64(puts)/pages > maxS3PutsPerPage {
		t.Errorf("%.3f S3 PUTs per page, goal ≤ %.1f", float64(puts)/pages, maxS3PutsPerPage)
	}
	if parent == 0 {
		t.Error("no StateEntered events in the execution history")
	}
}

// transitions counts StateEntered events of an execution and, where the
// endpoint exposes them, of its Map runs' child executions.
func transitions(t *testing.T, d *deployment, execARN string) (parent, children int, note string) {
	t.Helper()
	ctx := t.Context()
	parent = stateEntered(t, ctx, d.SFN, execARN)
	runs, err := d.SFN.ListMapRuns(ctx, &awssfn.ListMapRunsInput{ExecutionArn: aws.String(execARN)})
	if err != nil {
		return parent, 0, "ListMapRuns failed: " + err.Error()
	}
	if len(runs.MapRuns) == 0 {
		return parent, 0, "the endpoint lists no Map runs"
	}
	nexec := 0
	for _, run := range runs.MapRuns {
		// No retries: an endpoint that cannot list a Map run's executions
		// (moto answers 500) should not cost the retryer's backoff.
		p := awssfn.NewListExecutionsPaginator(d.SFN, &awssfn.ListExecutionsInput{MapRunArn: run.MapRunArn})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx, func(o *awssfn.Options) { o.Retryer = aws.NopRetryer{} })
			if err != nil {
				return parent, children, "listing Map run executions failed: " + err.Error()
			}
			for _, ex := range page.Executions {
				nexec++
				children += stateEntered(t, ctx, d.SFN, aws.ToString(ex.ExecutionArn))
			}
		}
	}
	return parent, children, strings.Join([]string{strconv.Itoa(len(runs.MapRuns)), "Map runs,", strconv.Itoa(nexec), "child executions"}, " ")
}

func stateEntered(t *testing.T, ctx context.Context, api *awssfn.Client, execARN string) int {
	t.Helper()
	n := 0
	types := map[string]int{}
	defer func() { t.Logf("history events of %s: %v", execARN, types) }()
	p := awssfn.NewGetExecutionHistoryPaginator(api, &awssfn.GetExecutionHistoryInput{ExecutionArn: aws.String(execARN), MaxResults: 1000})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Logf("history of %s: %v", execARN, err)
			return n
		}
		for _, ev := range page.Events {
			if strings.HasSuffix(string(ev.Type), "StateEntered") {
				n++
			}
			types[string(ev.Type)]++
		}
	}
	return n
}
