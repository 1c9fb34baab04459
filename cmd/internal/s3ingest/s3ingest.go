// Package s3ingest turns an object in the bucket into a started workflow.
// The S3-event Lambda (cmd/ingest) and `docpipe ingest` on AWS share it, so
// both derive the same workflow id for the same object and converge on one
// workflow when both see the upload.
package s3ingest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/docpipe/docpipe/pipeline"
)

// Object identifies one version of an uploaded object.
type Object struct {
	Bucket string
	Key    string
	// VersionID is set in versioned buckets; ETag otherwise tells versions
	// apart.
	VersionID string
	ETag      string
	// LastModified is the object's Last-Modified, at S3's one-second
	// resolution: the time part of the workflow id.
	LastModified time.Time
}

// WorkflowID derives the workflow id of an object version. The time part
// is Last-Modified (seconds), which the bucket notification path and the
// uploader both read the same way with HeadObject; event timestamps differ
// between S3 notifications, EventBridge and the client, so they are not used.
func WorkflowID(o Object) string {
	return pipeline.DeterministicID(o.LastModified.UTC().Truncate(time.Second), o.Bucket, o.Key, o.version())
}

func (o Object) version() string {
	if o.VersionID != "" && o.VersionID != "null" {
		return "v:" + o.VersionID
	}
	return "e:" + NormalizeETag(o.ETag)
}

// NormalizeETag removes the quotes HeadObject puts around an ETag (S3 event
// notifications carry it bare).
func NormalizeETag(etag string) string { return strings.Trim(etag, `"`) }

// HeadAPI is the one S3 call Head makes.
type HeadAPI interface {
	HeadObject(ctx context.Context, in *s3.HeadObjectInput, optFns ...func(*s3.Options)) (*s3.HeadObjectOutput, error)
}

// Head completes o with its Last-Modified (and version and ETag when o does
// not name them) from HeadObject. It asks for o's version when known, so a
// later overwrite of the key does not change the answer.
func Head(ctx context.Context, api HeadAPI, o Object) (Object, error) {
	in := &s3.HeadObjectInput{Bucket: aws.String(o.Bucket), Key: aws.String(o.Key)}
	if o.VersionID != "" && o.VersionID != "null" {
		in.VersionId = aws.String(o.VersionID)
	}
	out, err := api.HeadObject(ctx, in)
	if err != nil {
		return Object{}, fmt.Errorf("head s3://%s/%s: %w", o.Bucket, o.Key, err)
	}
	if out.LastModified == nil {
		return Object{}, fmt.Errorf("head s3://%s/%s: no Last-Modified", o.Bucket, o.Key)
	}
	o.LastModified = *out.LastModified
	if o.VersionID == "" {
		o.VersionID = aws.ToString(out.VersionId)
	}
	if o.ETag == "" {
		o.ETag = NormalizeETag(aws.ToString(out.ETag))
	}
	return o, nil
}

// CheckProjectOutsideUploads refuses a project whose documents' blobs
// (under "<project>/", see pipeline's blobkeys.go) could fall under the
// prefix uploads arrive under: the bucket's event would take the
// pipeline's own outputs for uploads, and the uploads' expiry would
// delete them.
func CheckProjectOutsideUploads(project, prefix string) error {
	own := project + "/"
	if strings.HasPrefix(own, prefix) || strings.HasPrefix(prefix, own) {
		return fmt.Errorf("project %q keeps its documents under %s, which the uploads prefix %q covers: name the project or the prefix otherwise", project, own, prefix)
	}
	return nil
}

// Ingest registers the object as a document of project and starts its
// workflow, or holds it pending while the project runs as many workflows
// as it allows. Registering or starting the same object again does nothing new
// and reports Existing.
type Ingest struct {
	Ingester *pipeline.Ingester
	Executor pipeline.Executor
	Project  string
	// Pipeline and PipelineVersion are the stored version new documents
	// run (Ingester.Definition must be it); "" records none, which runs the
	// built-in pipeline.
	Pipeline        string
	PipelineVersion int
	// Route, when set, picks the pipeline version and the state machine
	// for each object when it arrives, in place of the fields above.
	Route func(ctx context.Context) (Route, error)
}

// Route is where a new document goes: the stored pipeline version it runs
// ("" records none: the built-in pipeline) and what starts it.
type Route struct {
	Pipeline        string
	PipelineVersion int
	Definition      pipeline.Definition
	Executor        pipeline.Executor
}

// Result is what one ingest did.
type Result struct {
	Registration pipeline.Registration
	ExecutionID  string
	// Held is true when the project was full: the workflow is registered
	// and pending, and the reconciler starts it when a slot frees.
	Held bool
}

// Run registers and starts o (which must carry LastModified; see Head).
func (in Ingest) Run(ctx context.Context, o Object) (Result, error) {
	if o.LastModified.IsZero() {
		return Result{}, errors.New("s3ingest: object has no Last-Modified")
	}
	name := o.Key
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	if err := in.Ingester.EnsureProject(ctx, in.Project, in.Project); err != nil {
		return Result{}, err
	}
	if in.Route != nil {
		r, err := in.Route(ctx)
		if err != nil {
			return Result{}, err
		}
		ig := *in.Ingester
		ig.Definition = r.Definition
		in.Ingester, in.Executor, in.Pipeline, in.PipelineVersion = &ig, r.Executor, r.Pipeline, r.PipelineVersion
	}
	reg, err := in.Ingester.Register(ctx, pipeline.IngestRequest{
		ProjectID: in.Project, FileName: name, FileURI: "s3://" + o.Bucket + "/" + o.Key,
		BlobKey: o.Key, WorkflowID: WorkflowID(o),
		Pipeline: in.Pipeline, PipelineVersion: in.PipelineVersion,
	})
	if err != nil {
		return Result{}, err
	}
	return in.Start(ctx, reg)
}

// Start starts a registered workflow through its project's admission: at
// once, or held pending when the project is full (the reconciler starts
// it when a slot frees). Ingestion and backfill start workflows this way.
// Even an existing registration is started: an earlier delivery may have
// registered (or admitted) and then failed to start. Starting twice
// starts nothing.
func (in Ingest) Start(ctx context.Context, reg pipeline.Registration) (Result, error) {
	lost := reg.Workflow.Status == pipeline.WorkflowInProgress && reg.Workflow.ExecutionID == ""
	if reg.Existing && reg.Workflow.Status != pipeline.WorkflowPending && !lost {
		return Result{Registration: reg, ExecutionID: reg.Workflow.ExecutionID}, nil
	}
	if held, err := in.hold(ctx, reg); err != nil || held {
		return Result{Registration: reg, Held: held}, err
	}
	execID, err := in.Executor.Start(ctx, in.Ingester.ExecutionInput(reg))
	if err != nil {
		return Result{Registration: reg}, err
	}
	return Result{Registration: reg, ExecutionID: execID}, nil
}

// hold admits a new workflow of a project that limits its running
// workflows (max_concurrent_workflows) and reports whether the project is
// full: the workflow then stays pending, and the reconciler starts it when
// a slot frees. Workflows of other projects are not admitted here: their
// first step moves them to in_progress.
func (in Ingest) hold(ctx context.Context, reg pipeline.Registration) (bool, error) {
	if reg.Workflow.Status != pipeline.WorkflowPending {
		return false, nil // admitted by an earlier delivery
	}
	p, err := in.Ingester.Repo.GetProject(ctx, reg.Workflow.ProjectID)
	if err != nil || p.Settings.MaxConcurrentWorkflows <= 0 {
		return false, err
	}
	err = in.Ingester.Repo.AdmitWorkflow(ctx, reg.Ref())
	if errors.Is(err, pipeline.ErrNotAdmitted) {
		return true, nil
	}
	return false, err
}
