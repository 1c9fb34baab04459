package steps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/stagerun"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// userStage is the generic handler of users' stages of one run kind
// (stage:command, stage:http, stage:lambda): document-scope stages run
// once per workflow, segment-scope ones per batch through the segment
// runner.
func (h *handlers) userStage(handler string) pipeline.Handler {
	return documentOrBatch(h.wrap(handler, h.runDocumentStage), h.batch(handler, h.segmentStage(userKind{})))
}

// stageJob is one invocation of a user's stage, prepared: its runner, a
// private folder for the files it reads, and the request every run of it
// shares.
type stageJob struct {
	st     pipeline.Stage
	runner stagerun.Runner
	batch  stagerun.BatchRunner // a command in batch mode: one process a batch
	local  bool                 // a command, which reads files; remote stages get inline inputs
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
		c := stagerun.NewCommand(st.Run.Command, pipe.def.Dir, timeout)
		c.Env = st.Env
		job.runner = c
		if st.Run.Batch {
			b := stagerun.NewBatchCommand(st.Run.Command, pipe.def.Dir, timeout)
			b.Env = st.Env
			job.batch = b
		}
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
		Project:    stageProject(proj),
		Settings:   st.Settings,
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

// stageProject is the project as a user's stage sees it.
func stageProject(p pipeline.Project) stagerun.Project {
	ps := p.Settings
	return stagerun.Project{ID: p.ID, Name: p.Name, Language: ps.Language, DocumentPrompt: ps.DocumentPrompt,
		OCR: stagerun.ProjectOCR{Enabled: ps.OCR.On(), Languages: ps.OCR.Languages}}
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
	outKey := pipeline.StageOutputBlobKey(in.Workflow, job.st.Name)
	cacheKey := ""
	if h.cacheOn(ctx, job.st) {
		k, err := h.requestKey(ctx, in.Workflow, job.st, pipe.def.Dir)
		if err != nil {
			return outcome{}, err
		}
		if err := fileKey(k, req.Inputs.Needs); err != nil {
			return outcome{}, fmt.Errorf("read input: %w", err)
		}
		cacheKey = k.Sum()
		if res, ok, err := h.reuseDocumentOutput(ctx, in.Workflow, cacheKey); err != nil || ok {
			return res, err
		}
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
	if err := blob.PutBytes(ctx, h.Blobs, outKey, res.Output); err != nil {
		return outcome{}, storageErr("write stage output", err)
	}
	return outcome{message: fmt.Sprintf("%d bytes of output", len(res.Output)), offers: documentOffer(in.Workflow, job.st, cacheKey, outKey)}, nil
}

// userKind runs a user's segment stage: each segment's request carries
// its text inline and, for a command, as a file, with the outputs of the
// stages it needs. A segment the stage fails permanently
// (steperr.StageFailedError) fails alone; any other error fails the batch.
type userKind struct{}

func (userKind) store() batchStore { return linesStore{} }

func (userKind) summary(stageLine) (string, []string) { return "", nil }

func (userKind) open(ctx context.Context, h *handlers, in pipeline.StepInput, pipe *workflowPipeline, st pipeline.Stage) (segmentWork, func(), error) {
	job, cleanup, err := h.prepareStage(ctx, in, pipe)
	if err != nil {
		return nil, nil, err
	}
	docNeeds, segNeeds, err := h.segmentStageNeeds(ctx, in.Workflow, pipe, job, in.Batch.Batch)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	if job.batch != nil {
		return job.batchWork(docNeeds, segNeeds), cleanup, nil
	}
	work := eachSegment(h.parallelism(), func(ctx context.Context, c segmentCall) (segmentAnswer, error) {
		req, err := job.segmentRequest(c.Index, c.Text, docNeeds, segNeeds[c.Index])
		if err != nil {
			return segmentAnswer{}, err
		}
		res, err := job.runner.Run(ctx, req)
		var failed *steperr.StageFailedError
		switch {
		case errors.As(err, &failed):
			return segmentAnswer{line: stageLine{Index: c.Index, Error: err.Error()}}, nil
		case err != nil:
			return segmentAnswer{}, err
		}
		return segmentAnswer{line: stageLine{Index: c.Index, Output: res.Output}}, nil
	})
	return work, cleanup, nil
}

// batchWork answers the whole batch with one process: one request a line
// in, one answer a line out.
func (job *stageJob) batchWork(docNeeds map[string]string, segNeeds map[int]map[string]json.RawMessage) segmentWork {
	return func(ctx context.Context, calls []segmentCall) ([]segmentAnswer, error) {
		reqs := make([]stagerun.Request, len(calls))
		for i, c := range calls {
			req, err := job.segmentRequest(c.Index, c.Text, docNeeds, segNeeds[c.Index])
			if err != nil {
				return nil, err
			}
			reqs[i] = req
		}
		answers, err := job.batch.RunBatch(ctx, reqs)
		if err != nil {
			return nil, err
		}
		out := make([]segmentAnswer, len(answers))
		for i, a := range answers {
			var failed *steperr.StageFailedError
			switch {
			case errors.As(a.Err, &failed):
				out[i] = segmentAnswer{line: stageLine{Index: a.Index, Error: a.Err.Error()}}
			case a.Err != nil:
				return nil, a.Err
			default:
				out[i] = segmentAnswer{line: stageLine{Index: a.Index, Output: a.Result.Output}}
			}
		}
		return out, nil
	}
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
