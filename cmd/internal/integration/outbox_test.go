//go:build integration

package integration

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/docpipe/docpipe/cmd/internal/relayfn"
	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/driver/awstest"
	"github.com/docpipe/docpipe/pipeline/driver/dynamotable"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
	"github.com/docpipe/docpipe/pipeline/relay"
)

const outboxSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// An outcome written to DynamoDB reaches the relay handler through the
// table's stream, read with the DynamoDB Streams API and handed over in
// the shape Lambda gives it; the handler delivers the event to a signed
// webhook and to EventBridge.
func TestOutboxThroughStreamToRelay(t *testing.T) {
	ctx := t.Context()
	cfg := awstest.Config(t)
	ddb := dynamodb.NewFromConfig(cfg)
	// Options given (none of them WithoutStream): the table has its stream.
	tableName := awstest.Table(t, ddb, []dynamotable.CreateOption{}...)
	repo := pipeline.NewRepository(dynamotable.New(ddb, tableName))

	// One workflow completes: its outcome and event commit together.
	id := pipeline.NewID()
	doc := pipeline.Document{ProjectID: project, ID: id, FileName: "report.pdf", FileURI: "s3://b/report.pdf",
		BlobKey: project + "/" + id + "/source", SHA256: fmt.Sprintf("%064x", id)}
	wf := pipeline.Workflow{ID: pipeline.NewID(), ProjectID: project, DocumentID: id, FileName: doc.FileName}
	if err := repo.CreateWorkflow(ctx, doc, wf, pipelinefile.Default().Stages); err != nil {
		t.Fatal(err)
	}
	ref := pipeline.WorkflowRef{ProjectID: project, DocumentID: id, WorkflowID: wf.ID}
	if ok, err := repo.SetWorkflowStatus(ctx, ref, []pipeline.WorkflowStatus{pipeline.WorkflowPending}, pipeline.WorkflowCompleted, ""); !ok || err != nil {
		t.Fatalf("complete: %v %v", ok, err)
	}

	records := streamRecords(t, ctx, cfg, ddb, tableName)
	if len(records) == 0 {
		t.Fatal("the stream holds no records")
	}

	verifier, err := standardwebhooks.NewWebhook(outboxSecret)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []pipeline.Event
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := verifier.Verify(body, r.Header); err != nil {
			t.Errorf("signature: %v", err)
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var ev pipeline.Event
		if err := json.Unmarshal(body, &ev); err != nil {
			t.Errorf("event %q: %v", body, err)
		}
		mu.Lock()
		got = append(got, ev)
		mu.Unlock()
	}))
	defer srv.Close()
	hook, err := relay.NewWebhook(srv.URL, outboxSecret, relay.AllowPrivateNetwork())
	if err != nil {
		t.Fatal(err)
	}
	bus := &countingBus{api: eventbridge.NewFromConfig(cfg)}
	h := &relayfn.Handler{Relay: &relay.Relay{Repo: repo, Sinks: []relay.Sink{hook, relay.EventBridge{Client: bus}}}}

	raw, err := json.Marshal(map[string]any{"Records": records})
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.Handle(ctx, raw)
	if err != nil {
		t.Fatalf("relay: %v", err)
	}
	if !slices.Equal(res.Workflows, []string{wf.ID}) || res.Delivered != 1 {
		t.Fatalf("relay response %+v, want 1 delivered for %s", res, wf.ID)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0].WorkflowID != wf.ID || got[0].Type != pipeline.EventCompleted {
		t.Fatalf("webhook got %+v, want the completed event of %s", got, wf.ID)
	}
	if n, failed := bus.counts(); n != 1 || failed != 0 {
		t.Fatalf("PutEvents calls %d, failed entries %d; want 1 and 0", n, failed)
	}
	evs, err := repo.ListWorkflowEvents(ctx, wf.ID)
	if err != nil || len(evs) != 1 || evs[0].Delivery.State != pipeline.DeliveryDelivered {
		t.Fatalf("stored events %+v (%v), want one delivered", evs, err)
	}
}

// countingBus passes PutEvents through and counts the calls and the
// entries the service failed.
type countingBus struct {
	api          relay.EventBridgeAPI
	mu           sync.Mutex
	calls, fails int
}

func (c *countingBus) PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, opts ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	out, err := c.api.PutEvents(ctx, in, opts...)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil {
		c.calls++
		c.fails += int(out.FailedEntryCount)
	}
	return out, err
}

func (c *countingBus) counts() (int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls, c.fails
}

// streamRecords reads every record of the table's stream, each shard from
// its start, as Lambda's DynamoDB event records (JSON objects).
func streamRecords(t *testing.T, ctx context.Context, cfg aws.Config, ddb *dynamodb.Client, tableName string) []map[string]any {
	t.Helper()
	desc, err := ddb.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(tableName)})
	if err != nil {
		t.Fatal(err)
	}
	streamARN := desc.Table.LatestStreamArn
	if streamARN == nil {
		t.Fatal("the table has no stream")
	}
	api := dynamodbstreams.NewFromConfig(cfg)
	sd, err := api.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: streamARN})
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, shard := range sd.StreamDescription.Shards {
		it, err := api.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{
			StreamArn: streamARN, ShardId: shard.ShardId, ShardIteratorType: streamtypes.ShardIteratorTypeTrimHorizon,
		})
		if err != nil {
			t.Fatal(err)
		}
		iter := it.ShardIterator
		for iter != nil {
			page, err := api.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range page.Records {
				out = append(out, lambdaRecord(r))
			}
			if len(page.Records) == 0 {
				break // an open shard never ends; an empty page is its present end
			}
			iter = page.NextShardIterator
		}
	}
	return out
}

// lambdaRecord is r as the Lambda event source mapping delivers it.
func lambdaRecord(r streamtypes.Record) map[string]any {
	change := map[string]any{"StreamViewType": string(r.Dynamodb.StreamViewType)}
	for name, img := range map[string]map[string]streamtypes.AttributeValue{"Keys": r.Dynamodb.Keys, "NewImage": r.Dynamodb.NewImage, "OldImage": r.Dynamodb.OldImage} {
		if img != nil {
			change[name] = lambdaImage(img)
		}
	}
	return map[string]any{
		"eventID": aws.ToString(r.EventID), "eventName": string(r.EventName), "eventSource": "aws:dynamodb",
		"awsRegion": aws.ToString(r.AwsRegion), "dynamodb": change,
	}
}

func lambdaImage(img map[string]streamtypes.AttributeValue) map[string]any {
	out := map[string]any{}
	for k, v := range img {
		out[k] = lambdaValue(v)
	}
	return out
}

// lambdaValue renders one attribute value in DynamoDB's JSON form.
func lambdaValue(v streamtypes.AttributeValue) map[string]any {
	switch v := v.(type) {
	case *streamtypes.AttributeValueMemberS:
		return map[string]any{"S": v.Value}
	case *streamtypes.AttributeValueMemberN:
		return map[string]any{"N": v.Value}
	case *streamtypes.AttributeValueMemberBOOL:
		return map[string]any{"BOOL": v.Value}
	case *streamtypes.AttributeValueMemberNULL:
		return map[string]any{"NULL": true}
	case *streamtypes.AttributeValueMemberB:
		return map[string]any{"B": base64.StdEncoding.EncodeToString(v.Value)}
	case *streamtypes.AttributeValueMemberSS:
		return map[string]any{"SS": v.Value}
	case *streamtypes.AttributeValueMemberNS:
		return map[string]any{"NS": v.Value}
	case *streamtypes.AttributeValueMemberM:
		return map[string]any{"M": lambdaImage(v.Value)}
	case *streamtypes.AttributeValueMemberL:
		l := make([]any, len(v.Value))
		for i, e := range v.Value {
			l[i] = lambdaValue(e)
		}
		return map[string]any{"L": l}
	}
	return map[string]any{"NULL": true}
}
