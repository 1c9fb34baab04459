// Package relayfn is the relay Lambda's handler (cmd/relay): table stream
// batches deliver their workflows' pending events, a schedule sweeps the
// pending index. It is a package of its own so that the integration suite
// can feed it real stream records.
package relayfn

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/relay"
	"github.com/docpipe/docpipe/pipeline/table"
)

// EventBridge names of the scheduled sweep.
const (
	sourceScheduler      = "aws.events"
	detailScheduledEvent = "Scheduled Event"
)

// pendingIndexPrefix starts the GSI1 partition key of every pending outbox
// item, whatever its shard.
var pendingIndexPrefix = strings.TrimSuffix(pipeline.OutboxIndexPK(pipeline.DeliveryPending, 0), "0")

// Handler is the Lambda: stream records deliver their workflows' events,
// a schedule sweeps the pending index.
type Handler struct {
	Relay  *relay.Relay
	Logger *slog.Logger
}

// Response summarizes an invocation (Lambda logs and tests).
type Response struct {
	Mode      string   `json:"mode"`                // "stream" or "sweep"
	Workflows []string `json:"workflows,omitempty"` // workflows the stream named
	Delivered int      `json:"delivered"`
	Retrying  int      `json:"retrying"`
	Dead      int      `json:"dead"`
	Waiting   int      `json:"waiting"`
}

// envelope holds the fields that tell the event shapes apart.
type envelope struct {
	Records    []json.RawMessage `json:"Records"`
	Source     string            `json:"source"`
	DetailType string            `json:"detail-type"`
}

// Handle returns an error only for table failures: Lambda then retries the
// stream batch (or the sweep). A sink's failure is recorded on the event
// with the time of its next attempt, which a later sweep makes.
func (h *Handler) Handle(ctx context.Context, raw json.RawMessage) (Response, error) {
	var env envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		return Response{}, fmt.Errorf("event is not JSON: %w", err)
	}
	switch {
	case env.Records != nil:
		var ev events.DynamoDBEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			return Response{}, fmt.Errorf("decode stream records: %w", err)
		}
		ids := pendingWorkflows(ev.Records)
		res := Response{Mode: "stream", Workflows: ids}
		if len(ids) == 0 {
			return res, nil
		}
		s, err := h.Relay.DeliverWorkflows(ctx, ids)
		h.logger().Info("stream delivery", "workflows", len(ids), "delivered", s.Delivered, "retrying", s.Retrying, "dead", s.Dead, "waiting", s.Waiting)
		return res.with(s), err
	case env.Source == sourceScheduler && env.DetailType == detailScheduledEvent:
		s, err := h.Relay.Drain(ctx)
		h.logger().Info("sweep", "delivered", s.Delivered, "retrying", s.Retrying, "dead", s.Dead, "waiting", s.Waiting)
		return Response{Mode: "sweep"}.with(s), err
	}
	return Response{}, fmt.Errorf("unrecognized event (source %q, detail-type %q)", env.Source, env.DetailType)
}

func (r Response) with(s relay.Stats) Response {
	r.Delivered, r.Retrying, r.Dead, r.Waiting = s.Delivered, s.Retrying, s.Dead, s.Waiting
	return r
}

// pendingWorkflows returns, in first-seen order, the workflows of the
// records that insert or change an outbox item still pending. The event
// source mapping's filter passes only those; checking again here keeps an
// unfiltered mapping (or a test feeding raw records) from waking workflows
// for nothing.
func pendingWorkflows(records []events.DynamoDBEventRecord) []string {
	var ids []string
	seen := map[string]bool{}
	for _, r := range records {
		if r.EventName != string(events.DynamoDBOperationTypeInsert) && r.EventName != string(events.DynamoDBOperationTypeModify) {
			continue
		}
		img := r.Change.NewImage
		sk, gsi1, pk := attr(img, table.AttrSK), attr(img, table.AttrGSI1PK), attr(img, table.AttrPK)
		id, isWorkflow := strings.CutPrefix(pk, pipeline.PrefixWorkflow)
		if !strings.HasPrefix(sk, pipeline.PrefixEvent) || !strings.HasPrefix(gsi1, pendingIndexPrefix) || !isWorkflow || id == "" || seen[id] {
			continue
		}
		seen[id] = true
		ids = append(ids, id)
	}
	return ids
}

// attr reads a string attribute of a stream image; "" when absent or not a
// string.
func attr(img map[string]events.DynamoDBAttributeValue, name string) string {
	v, ok := img[name]
	if !ok || v.DataType() != events.DataTypeString {
		return ""
	}
	return v.String()
}

func (h *Handler) logger() *slog.Logger {
	if h.Logger != nil {
		return h.Logger
	}
	return slog.New(slog.DiscardHandler)
}
