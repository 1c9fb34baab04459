package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/docpipe/docpipe/cmd/internal/s3ingest"
	"github.com/docpipe/docpipe/statemachine/sfn"
)

// EventBridge names of the events this function handles.
const (
	sourceS3             = "aws.s3"
	detailObjectCreated  = "Object Created"
	sourceScheduler      = "aws.events"
	detailScheduledEvent = "Scheduled Event"
)

// handler is the Lambda: S3 uploads (bucket notifications or EventBridge)
// start workflows; execution status changes and a schedule reconcile.
type handler struct {
	Ingest     s3ingest.Ingest
	S3         s3ingest.HeadAPI
	Reconciler *sfn.Reconciler
	// Prefix is where uploads to process arrive; everything else in the
	// bucket (the pipeline's own outputs) is ignored.
	Prefix string
	Logger *slog.Logger
}

// response summarizes an invocation (Lambda logs and tests).
type response struct {
	Started  []string       `json:"started,omitempty"`  // workflow ids started now
	Existing []string       `json:"existing,omitempty"` // already registered
	Held     []string       `json:"held,omitempty"`     // registered, pending until their project has a free slot
	Ignored  []string       `json:"ignored,omitempty"`  // keys outside the prefix
	Outcome  string         `json:"outcome,omitempty"`  // status change outcome
	Report   map[string]int `json:"report,omitempty"`   // reconcile report
}

// envelope holds the fields that tell the event shapes apart.
type envelope struct {
	Records    json.RawMessage `json:"Records"`
	Source     string          `json:"source"`
	DetailType string          `json:"detail-type"`
	Detail     json.RawMessage `json:"detail"`
}

func (h *handler) Handle(ctx context.Context, raw json.RawMessage) (response, error) {
	var env envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		return response{}, fmt.Errorf("event is not JSON: %w", err)
	}
	switch {
	case len(env.Records) > 0:
		var ev events.S3Event
		if err := json.Unmarshal(raw, &ev); err != nil {
			return response{}, fmt.Errorf("decode S3 notification: %w", err)
		}
		objs := make([]s3ingest.Object, 0, len(ev.Records))
		for _, r := range ev.Records {
			if !strings.HasPrefix(r.EventName, "ObjectCreated:") {
				continue
			}
			objs = append(objs, s3ingest.Object{Bucket: r.S3.Bucket.Name, Key: r.S3.Object.Key, VersionID: r.S3.Object.VersionID, ETag: r.S3.Object.ETag})
		}
		return h.objects(ctx, objs)
	case env.Source == sourceS3 && env.DetailType == detailObjectCreated:
		var d eventBridgeS3Detail
		if err := json.Unmarshal(env.Detail, &d); err != nil {
			return response{}, fmt.Errorf("decode EventBridge S3 detail: %w", err)
		}
		return h.objects(ctx, []s3ingest.Object{{Bucket: d.Bucket.Name, Key: d.Object.Key, VersionID: d.Object.VersionID, ETag: d.Object.ETag}})
	case env.Source == sfn.StatusChangeSource && env.DetailType == sfn.StatusChangeDetailType:
		var d sfn.StatusChange
		if err := json.Unmarshal(env.Detail, &d); err != nil {
			return response{}, fmt.Errorf("decode status change: %w", err)
		}
		out, err := h.Reconciler.HandleStatusChange(ctx, d)
		return response{Outcome: string(out)}, err
	case env.Source == sourceScheduler && env.DetailType == detailScheduledEvent:
		rep, err := h.Reconciler.ReconcileInProgress(ctx)
		res := response{Report: map[string]int{}}
		for k, v := range rep {
			res.Report[string(k)] = v
		}
		return res, err
	}
	return response{}, fmt.Errorf("unrecognized event (source %q, detail-type %q)", env.Source, env.DetailType)
}

// eventBridgeS3Detail is the detail of EventBridge's S3 "Object Created".
type eventBridgeS3Detail struct {
	Bucket struct {
		Name string `json:"name"`
	} `json:"bucket"`
	Object struct {
		Key       string `json:"key"`
		Size      int64  `json:"size"`
		ETag      string `json:"etag"`
		VersionID string `json:"version-id"`
		Sequencer string `json:"sequencer"`
	} `json:"object"`
	Reason string `json:"reason"`
}

func (h *handler) objects(ctx context.Context, objs []s3ingest.Object) (response, error) {
	var res response
	var errs []error
	for _, o := range objs {
		o, err := h.resolve(ctx, o)
		var nf *types.NotFound
		if errors.As(err, &nf) {
			// Deleted (or replaced) before we got to it: nothing to process,
			// and no reason to make Lambda redeliver the other records.
			h.logger().Warn("object is gone", "key", o.Key)
			res.Ignored = append(res.Ignored, o.Key)
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !strings.HasPrefix(o.Key, h.Prefix) {
			res.Ignored = append(res.Ignored, o.Key)
			continue
		}
		r, err := h.Ingest.Run(ctx, o)
		if err != nil {
			errs = append(errs, fmt.Errorf("ingest s3://%s/%s: %w", o.Bucket, o.Key, err))
			continue
		}
		id := r.Registration.Workflow.ID
		switch {
		case r.Held:
			res.Held = append(res.Held, id)
		case r.Registration.Existing:
			res.Existing = append(res.Existing, id)
		default:
			res.Started = append(res.Started, id)
		}
		h.logger().Info("ingested", "key", o.Key, "workflow", id, "existing", r.Registration.Existing, "held", r.Held, "execution", r.ExecutionID)
	}
	// An error makes Lambda redeliver the event; objects already done are
	// then recognized and skipped.
	return res, errors.Join(errs...)
}

// resolve decodes the key and reads the object's Last-Modified. Bucket
// notifications URL-encode keys (space as '+'); the raw key is tried too,
// for a key that was sent as is.
func (h *handler) resolve(ctx context.Context, o s3ingest.Object) (s3ingest.Object, error) {
	raw := o.Key
	if dec, err := url.QueryUnescape(raw); err == nil {
		o.Key = dec
	}
	if !strings.HasPrefix(o.Key, h.Prefix) && !strings.HasPrefix(raw, h.Prefix) {
		return o, nil // ignored without a request
	}
	got, err := s3ingest.Head(ctx, h.S3, o)
	var nf *types.NotFound
	if errors.As(err, &nf) && raw != o.Key {
		o.Key = raw
		got, err = s3ingest.Head(ctx, h.S3, o)
	}
	return got, err
}

func (h *handler) logger() *slog.Logger {
	if h.Logger != nil {
		return h.Logger
	}
	return slog.New(slog.DiscardHandler)
}
