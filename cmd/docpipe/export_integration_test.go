//go:build integration

package main

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/driver/awstest"
	"github.com/docpipe/docpipe/pipeline/driver/dynamotable"
	"github.com/docpipe/docpipe/pipeline/driver/s3blob"
	"github.com/docpipe/docpipe/pipeline/export"
)

// TestExportReadsDynamoDBAndWritesPartitionsToS3 stores a completed
// two-page analysis in a DynamoDB table and its bucket, and exports it
// with --table/--bucket to s3://OTHER/prefix/.
func TestExportReadsDynamoDBAndWritesPartitionsToS3(t *testing.T) {
	ctx := t.Context()
	ddb, s3c := awstest.DynamoDB(t), awstest.S3(t)
	tableName, bucket, outBucket := awstest.Table(t, ddb), awstest.Bucket(t, s3c), awstest.Bucket(t, s3c)
	t.Setenv("AWS_REGION", "us-east-1")

	repo := pipeline.NewRepository(dynamotable.New(ddb, tableName))
	blobs, err := s3blob.New(s3c, bucket)
	if err != nil {
		t.Fatal(err)
	}
	doc := pipeline.Document{ProjectID: "acme", ID: pipeline.NewID(), FileName: "report.pdf", FileURI: "s3://in/report.pdf", SHA256: strings.Repeat("a", 64)}
	wf := pipeline.Workflow{ID: pipeline.NewID(), ProjectID: "acme", DocumentID: doc.ID, FileName: doc.FileName, FileURI: doc.FileURI, Pipeline: "docpipe", PipelineVersion: 1}
	if err := repo.CreateWorkflow(ctx, doc, wf, []pipeline.Stage{{Name: "segment_builder"}}); err != nil {
		t.Fatal(err)
	}
	ref := pipeline.WorkflowRef{ProjectID: "acme", DocumentID: doc.ID, WorkflowID: wf.ID}
	for key, body := range map[string]string{
		pipeline.UnitsBlobKey(ref):              `[{"index":1,"kind":"page"},{"index":2,"kind":"page"}]`,
		pipeline.SegmentTextBlobKey(ref, 1):     "first page",
		pipeline.SegmentTextBlobKey(ref, 2):     "second page",
		pipeline.ManifestBlobKey(ref):           `[{"batch":1,"from":1,"to":2}]`,
		pipeline.BatchAnalysisBlobKey(ref, 1):   `[{"index":1,"status":"done","result":{"language":"en"}},{"index":2,"status":"done","result":{"language":"de"}}]`,
		pipeline.StageBatchBlobKey(ref, "x", 1): `{"index":2,"output":{"label":"two"}}` + "\n",
	} {
		if err := blob.PutBytes(ctx, blobs, key, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := repo.SetWorkflowStatus(ctx, ref, []pipeline.WorkflowStatus{pipeline.WorkflowPending}, pipeline.WorkflowCompleted, ""); err != nil {
		t.Fatal(err)
	}

	if _, err := cli(t, "export", "--table", tableName, "--bucket", bucket, "--project", "acme", "--out", "s3://"+outBucket+"/exports"); err != nil {
		t.Fatal(err)
	}
	list, err := s3c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(outBucket)})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Contents) != 1 {
		t.Fatalf("objects: %d, want one part", len(list.Contents))
	}
	key := aws.ToString(list.Contents[0].Key)
	if !strings.HasPrefix(key, "exports/project=acme/date=") || !strings.Contains(key, "/part-") || !strings.HasSuffix(key, "-00001.jsonl") {
		t.Errorf("part key %s is not in the partitioned layout", key)
	}
	obj, err := s3c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(outBucket), Key: aws.String(key)})
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Body.Close()
	raw, _ := io.ReadAll(obj.Body)
	var rows []export.Row
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var r export.Row
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		rows = append(rows, r)
	}
	if len(rows) != 2 || rows[0].Text != "first page" || rows[1].Text != "second page" || rows[1].Kind != "page" ||
		rows[0].WorkflowID != wf.ID || rows[0].Pipeline != "docpipe@1" || rows[0].FileURI != "s3://in/report.pdf" ||
		string(rows[1].Outputs["x"]) != `{"label":"two"}` || string(rows[0].Outputs["analysis"]) != `{"language":"en"}` {
		t.Errorf("rows: %+v", rows)
	}

	// There is no search index on AWS.
	_, stderr, code := cliAll("search", "--table", tableName, "--bucket", bucket, "page")
	if code != 2 || !strings.Contains(stderr, "no search index on AWS") {
		t.Errorf("search on AWS: exit %d, %s", code, stderr)
	}
}
