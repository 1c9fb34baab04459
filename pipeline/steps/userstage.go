package steps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/stagerun"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// userStage is the generic handler of users' stages of one run kind
// (stage:command, stage:http, stage:lambda): document-scope stages run
// once per workflow, segment-scope ones once per segment of a batch.
func (h *handlers) userStage(handler string) pipeline.Handler {
	document := h.wrap(handler, h.runDocumentStage)
	segment := h.batch(handler, h.runSegmentStage)
	return pipeline.HandlerFunc(func(ctx context.Context, payload []byte) ([]byte, error) {
		var head struct {
			Batch *pipeline.Batch `json:"batch"`
		}
		if json.Unmarshal(payload, &head) == nil && head.Batch != nil {
			return segment.Invoke(ctx, payload)
		}
		return document.Invoke(ctx, payload)
	})
}

// stageJob is one invocation of a user's stage, prepared: its runner, a
// private folder for the files it reads, and the request every run of it
// shares.
type stageJob struct {
	st     pipeline.Stage
	runner stagerun.Runner
	local  bool // a command, which reads files; remote stages get inline inputs
	dir    string
	req    stagerun.Request
}

// prepareStage builds the job: the request's project and document, and,
// for a command, the source document downloaded into the job's folder.
func (h *handlers) prepareStage(ctx context.Context, in pipeline.StepInput, pipe *workflowPipeline) (*stageJob, func(), error) {
	st, _ := pipe.def.Stage(in.Step) // wrap and batch checked it exists
	job := &stageJob{st: st, local: st.Run.Kind() == pipeline.RunCommand}
	timeout := time.Duration(st.TimeoutSeconds) * time.Second
	switch st.Run.Kind() {
	case pipeline.RunCommand:
		job.runner = stagerun.NewCommand(st.Run.Command, pipe.def.Dir, timeout)
	case pipeline.RunHTTP:
		job.runner = stagerun.NewHTTP(st.Run.HTTP, timeout, h.HTTPClient).WithHeaderEnv(st.Run.HeaderEnv())
	case pipeline.RunLambda:
		if h.Lambda == nil {
			return nil, nil, &steperr.StageFailedError{Reason: fmt.Sprintf("%s: lambda stages run only on AWS; this engine has no Lambda client", st.Name)}
		}
		job.runner = stagerun.NewLambda(st.Run.Lambda, timeout, h.Lambda)
	default:
		return nil, nil, &steperr.InvalidInputError{Reason: fmt.Sprintf("stage %q is not a user's stage", st.Name)}
	}
	ref := in.Workflow
	doc, err := h.Repo.GetDocument(ctx, ref.ProjectID, ref.DocumentID)
	if err != nil {
		return nil, nil, storageErr("read document", err)
	}
	proj, err := h.Repo.GetProject(ctx, ref.ProjectID)
	if err != nil {
		return nil, nil, storageErr("read project", err)
	}
	attrs, err := h.docAttrs(ctx, ref)
	if err != nil {
		return nil, nil, err
	}
	job.req = stagerun.Request{
		WorkflowID: ref.WorkflowID,
		Project:    stagerun.Project{ID: proj.ID, Name: proj.Name},
		Document:   stagerun.Document{ID: doc.ID, FileName: doc.FileName, Format: attrs.Format, Language: attrs.Language, Pages: attrs.Pages},
		Stage:      st.Name,
		Scope:      string(st.Scope),
	}
	job.dir, err = os.MkdirTemp(h.TempDir, "docpipe-stage-*")
	if err != nil {
		return nil, nil, fmt.Errorf("temp folder: %w", err)
	}
	cleanup := func() { os.RemoveAll(job.dir) }
	if job.local {
		name := filepath.Base(doc.FileName)
		if name == "." || name == "/" || name == "" {
			name = "source"
		}
		job.req.Inputs.Source = filepath.Join(job.dir, name)
		if err := h.download(ctx, doc.BlobKey, job.req.Inputs.Source); err != nil {
			cleanup()
			return nil, nil, err
		}
	}
	return job, cleanup, nil
}

// runDocumentStage runs a user's document stage and stores its output.
func (h *handlers) runDocumentStage(ctx context.Context, in pipeline.StepInput, pipe *workflowPipeline) (outcome, error) {
	job, cleanup, err := h.prepareStage(ctx, in, pipe)
	if err != nil {
		return outcome{}, err
	}
	defer cleanup()
	req := job.req
	if req.Inputs.Needs, err = h.documentNeeds(ctx, in.Workflow, pipe, job); err != nil {
		return outcome{}, err
	}
	// A command may report its progress on stderr; the first report
	// names the unit. Reports come from one goroutine and end with Run.
	var rec *pipeline.ProgressRecorder
	req.Progress = func(p stagerun.Progress) {
		if rec == nil {
			unit := p.Unit
			if unit == "" {
				unit = "units"
			}
			rec = h.Repo.NewProgressRecorder(in.Workflow.WorkflowID, in.Step, p.Total, unit)
		}
		rec.Set(ctx, p.Done, p.Total)
	}
	res, err := job.runner.Run(ctx, req)
	if err != nil {
		return outcome{}, err
	}
	if rec != nil {
		rec.Finish(ctx)
	}
	if err := blob.PutBytes(ctx, h.Blobs, pipeline.StageOutputBlobKey(in.Workflow, job.st.Name), res.Output); err != nil {
		return outcome{}, storageErr("write stage output", err)
	}
	return outcome{message: fmt.Sprintf("%d bytes of output", len(res.Output))}, nil
}

// runSegmentStage runs a user's segment stage on every open segment of a
// batch, on the text the stages before it left, and stores the outputs as
// one JSON Lines blob. A segment the stage fails permanently is failed
// with the reason and later stages leave it alone; a transient failure
// fails the batch, which the state machine retries. Only the batch's last
// segment stage finishes the segments that did not fail.
func (h *handlers) runSegmentStage(ctx context.Context, in pipeline.StepInput, pipe *workflowPipeline) (outcome, error) {
	b := *in.Batch
	segs, err := h.batchSegments(ctx, in)
	if err != nil {
		return outcome{}, err
	}
	if finishedBatch(segs) {
		return outcome{message: fmt.Sprintf("batch %d: already done", b.Batch)}, nil
	}
	job, cleanup, err := h.prepareStage(ctx, in, pipe)
	if err != nil {
		return outcome{}, err
	}
	defer cleanup()
	view, err := h.batchView(ctx, in.Workflow, pipe.segmentAncestors(in.Step), b.Batch)
	if err != nil {
		return outcome{}, err
	}
	key := pipeline.StageBatchBlobKey(in.Workflow, job.st.Name, b.Batch)
	earlier, err := h.readStageLines(ctx, key)
	if err != nil {
		return outcome{}, err
	}
	docNeeds, segNeeds, err := h.segmentStageNeeds(ctx, in.Workflow, pipe, job, b.Batch)
	if err != nil {
		return outcome{}, err
	}
	last := pipe.lastSegment == in.Step
	lines := make([]*stageLine, len(segs))
	fins := make([]*pipeline.SegmentFinish, len(segs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(h.parallelism())
	for i, s := range segs {
		if !open(s) {
			if l, ok := earlier[s.Index]; ok {
				lines[i] = &l // finished in an earlier run: keep its output
			}
			continue
		}
		g.Go(func() error {
			text, status, reason, err := h.readSegment(gctx, s, view)
			if err != nil {
				return err
			}
			if status != "" {
				if _, upstream := view.failed[s.Index]; !upstream && (last || status == pipeline.SegmentFailed) {
					fins[i] = &pipeline.SegmentFinish{Index: s.Index, To: status, Result: pipeline.SegmentResult{Error: reason}}
				}
				return nil
			}
			req, err := job.segmentRequest(s.Index, text, docNeeds, segNeeds[s.Index])
			if err != nil {
				return err
			}
			res, err := job.runner.Run(gctx, req)
			var failed *steperr.StageFailedError
			switch {
			case errors.As(err, &failed):
				lines[i] = &stageLine{Index: s.Index, Error: err.Error()}
				fins[i] = &pipeline.SegmentFinish{Index: s.Index, To: pipeline.SegmentFailed, Result: pipeline.SegmentResult{ResultKey: key, Error: err.Error()}}
				return nil
			case err != nil:
				return err
			}
			lines[i] = &stageLine{Index: s.Index, Output: res.Output}
			if last {
				fins[i] = &pipeline.SegmentFinish{Index: s.Index, To: pipeline.SegmentDone, Result: pipeline.SegmentResult{ResultKey: key}}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return outcome{}, err
	}
	var out []stageLine
	failedCount := 0
	for _, l := range lines {
		if l != nil {
			out = append(out, *l)
			if l.Error != "" {
				failedCount++
			}
		}
	}
	raw, err := encodeStageLines(out)
	if err != nil {
		return outcome{}, err
	}
	if err := blob.PutBytes(ctx, h.Blobs, key, raw); err != nil {
		return outcome{}, storageErr("write stage output", err)
	}
	var finish []pipeline.SegmentFinish
	for _, f := range fins {
		if f != nil {
			finish = append(finish, *f)
		}
	}
	if _, err := h.finishSegments(ctx, in.Workflow.WorkflowID, finish); err != nil {
		return outcome{}, storageErr("record segments", err)
	}
	return outcome{message: fmt.Sprintf("batch %d: %d segments, %d failed", b.Batch, len(out), failedCount)}, nil
}

// segmentRequest is the request for one segment: its text inline and, for
// a command, as a file, with the needs' files.
func (job *stageJob) segmentRequest(index int, text string, docNeeds map[string]string, segNeeds map[string]json.RawMessage) (stagerun.Request, error) {
	req := job.req
	req.Segment = &stagerun.Segment{Index: index, Text: text}
	needs := make(map[string]string, len(docNeeds)+len(segNeeds))
	for n, path := range docNeeds {
		needs[n] = path
	}
	if len(segNeeds) > 0 || job.local {
		dir := filepath.Join(job.dir, fmt.Sprintf("segment-%06d", index))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return req, fmt.Errorf("segment folder: %w", err)
		}
		for n, raw := range segNeeds {
			path := filepath.Join(dir, n+".json")
			if err := os.WriteFile(path, raw, 0o600); err != nil {
				return req, fmt.Errorf("write input: %w", err)
			}
			needs[n] = path
		}
		if job.local {
			req.Inputs.SegmentText = filepath.Join(dir, "text.txt")
			if err := os.WriteFile(req.Inputs.SegmentText, []byte(text), 0o600); err != nil {
				return req, fmt.Errorf("write segment text: %w", err)
			}
		}
	}
	req.Inputs.Needs = needs
	return req, nil
}
