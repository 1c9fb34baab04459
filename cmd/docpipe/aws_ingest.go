package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/docpipe/docpipe/cmd/internal/backend"
	"github.com/docpipe/docpipe/cmd/internal/pipelineroute"
	"github.com/docpipe/docpipe/cmd/internal/s3ingest"
	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
	"github.com/docpipe/docpipe/statemachine/sfn"
)

// awsIngest is `docpipe ingest` and `docpipe rerun` against a deployment
// on AWS, named by the global --table, --bucket and --state-machine.
type awsIngest struct {
	*app
	prefix   string // key prefix uploads go under
	pipeline string // NAME[@VERSION] or a pipeline file new documents run ("": the project's)
}

// open opens the deployment, after checking that it is fully named.
func (a awsIngest) open(ctx context.Context) (*backend.Backend, backend.AWSClients, error) {
	if a.stateMachine == "" {
		return nil, backend.AWSClients{}, usageErrorf("on AWS (--table %s) this needs the state machine: --state-machine or %s", a.table, backend.EnvStateMachineARN)
	}
	if a.bucket == "" {
		return nil, backend.AWSClients{}, usageErrorf("on AWS (--table %s) this needs the bucket: --bucket or %s", a.table, backend.EnvBucket)
	}
	cfg, err := backend.LoadAWSConfig(ctx, nil)
	if err != nil {
		return nil, backend.AWSClients{}, err
	}
	clients := backend.NewAWSClients(cfg)
	b, err := backend.OpenAWSWith(clients, backend.AWSOptions{Table: a.table, Bucket: a.bucket})
	return b, clients, err
}

// ingest uploads each file under the incoming prefix, then registers and
// starts it exactly as the bucket's event would (same workflow id), so
// when that event fires too, both converge on one workflow.
func (a awsIngest) ingest(ctx context.Context, files []string) ([]ingestResult, error) {
	if err := s3ingest.CheckProjectOutsideUploads(a.project, a.prefix); err != nil {
		return nil, usageError{err}
	}
	b, clients, err := a.open(ctx)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	ig := &pipeline.Ingester{Repo: b.Repo, Blobs: b.Blobs, Definition: pipelinefile.Default(), Bucket: b.Bucket}
	if err := ig.EnsureProject(ctx, a.project, a.project); err != nil {
		return nil, err
	}
	ref, err := pipelineRef(ctx, a.app, b, a.pipeline)
	if err != nil {
		return nil, err
	}
	chosen, err := choosePipeline(ctx, b.Repo, a.project, ref)
	if err != nil {
		return nil, err
	}
	machine, err := pipelineroute.StateMachine(ctx, b.Repo, a.stateMachine, chosen.name, chosen.version)
	if err != nil {
		return nil, err
	}
	ig.Definition = chosen.def
	in := s3ingest.Ingest{
		Ingester: ig,
		Executor: &sfn.Executor{API: clients.SFN, StateMachineARN: machine, Repo: b.Repo},
		Project:  a.project,
		Pipeline: chosen.name, PipelineVersion: chosen.version,
	}
	var results []ingestResult
	for _, path := range files {
		r, err := a.ingestOne(ctx, b, clients, in, path)
		if err != nil {
			return results, err
		}
		results = append(results, r)
	}
	return results, nil
}

func (a awsIngest) ingestOne(ctx context.Context, b *backend.Backend, clients backend.AWSClients, in s3ingest.Ingest, path string) (ingestResult, error) {
	f, err := os.Open(path)
	if err != nil {
		return ingestResult{}, err
	}
	defer f.Close()
	key := a.prefix + filepath.Base(path)
	if err := b.Blobs.Put(ctx, key, f); err != nil {
		return ingestResult{}, fmt.Errorf("upload %s: %w", path, err)
	}
	obj, err := s3ingest.Head(ctx, clients.S3, s3ingest.Object{Bucket: a.bucket, Key: key})
	if err != nil {
		return ingestResult{}, err
	}
	r, err := in.Run(ctx, obj)
	if err != nil {
		return ingestResult{}, fmt.Errorf("%s: %w", path, err)
	}
	wf := r.Registration.Workflow
	return ingestResult{File: path, WorkflowID: wf.ID, Status: string(wf.Status), Existing: r.Registration.Existing}, nil
}

// rerun readies a finished workflow on AWS for a re-run of what failed and
// starts it as a new execution (`<workflow>-rerun-<n>`).
func (a awsIngest) rerun(ctx context.Context, workflowID string, scope rerunScope, stdout io.Writer) error {
	b, clients, err := a.open(ctx)
	if err != nil {
		return err
	}
	defer b.Close()
	reset, arn, err := rerunOnAWS(ctx, b, clients, a.stateMachine, workflowID, scope)
	if err != nil {
		return err
	}
	if len(reset) == 0 {
		fmt.Fprintf(stdout, "%s: nothing to re-run (completed, no failed segments)\n", workflowID)
		return nil
	}
	fmt.Fprintf(stdout, "%s: re-running %s as %s\n", workflowID, strings.Join(reset, ", "), arn)
	return nil
}

// rerunOnAWS readies a workflow for a re-run and starts it as a new
// execution, returning the stages reset (none: nothing started) and the
// execution's ARN.
func rerunOnAWS(ctx context.Context, b *backend.Backend, clients backend.AWSClients, stateMachine, workflowID string, scope rerunScope) ([]string, string, error) {
	ig := &pipeline.Ingester{Repo: b.Repo, Definition: pipelinefile.Default(), Bucket: b.Bucket}
	// The workflow's own version's machine, found before anything is reset.
	wf, _, err := findWorkflow(ctx, b.Repo, workflowID)
	if err != nil {
		return nil, "", err
	}
	machine, err := pipelineroute.StateMachine(ctx, b.Repo, stateMachine, wf.Pipeline, wf.PipelineVersion)
	if err != nil {
		return nil, "", err
	}
	reg, reset, err := prepareRerunScope(ctx, b.Repo, b.Blobs, workflowID, scope)
	if err != nil || len(reset) == 0 {
		return reset, "", err
	}
	ex := &sfn.Executor{API: clients.SFN, StateMachineARN: machine, Repo: b.Repo}
	arn, err := ex.StartRerun(ctx, ig.ExecutionInput(reg), sfn.NextRerunAttempt(reg.Workflow.ExecutionID))
	return reset, arn, err
}
