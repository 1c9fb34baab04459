package steps

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"sync"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
)

// Code versions: part of every cache key of the stages the code runs
// (the extraction's is extractionCodeVersion).
// Bump one when that code's output changes for the same inputs, so that
// no earlier output is reused for it.
const (
	analyzerCodeVersion = "segment_analyzer/1"
	// stageRequestVersion covers users' stages: what docpipe hands them
	// (the request, the files) is the code docpipe owns there.
	stageRequestVersion = "stage-request/1"
	aiCodeVersion       = "ai-analysis/1"
	// resultsCodeVersion covers graph_builder and document_summarizer.
	resultsCodeVersion = "document-results/1"
)

type cacheOffKey struct{}

// withoutCache marks ctx: the step neither reuses outputs nor offers its
// own (the workflow was started with --no-cache).
func withoutCache(ctx context.Context) context.Context {
	return context.WithValue(ctx, cacheOffKey{}, true)
}

// cacheOn says whether st may reuse and offer outputs in ctx.
func (h *handlers) cacheOn(ctx context.Context, st pipeline.Stage) bool {
	return !cacheOff(ctx) && pipeline.StageCached(st)
}

// cacheOff says whether ctx is a workflow's that reuses nothing
// (--no-cache).
func cacheOff(ctx context.Context) bool {
	off, _ := ctx.Value(cacheOffKey{}).(bool)
	return off
}

// cacheContext is ctx for a step of a workflow whose step item is prog.
func cacheContext(ctx context.Context, prog pipeline.StepProgress) context.Context {
	if prog.NoCache {
		return withoutCache(ctx)
	}
	return ctx
}

// cachedKind is a segment kind whose answers the stage cache keeps.
type cachedKind interface {
	// cacheKeys is the cache key of each call's answer: everything the
	// answer depends on, the segment's own inputs included, and nothing
	// of the batch it came in (batch sizes may differ between versions).
	cacheKeys(ctx context.Context, h *handlers, in pipeline.StepInput, pipe *workflowPipeline, st pipeline.Stage, calls []segmentCall) ([]string, error)
}

// eachKey derives one key per call from base and the call's text, plus
// what more adds for the call's segment.
func eachKey(base *pipeline.CacheKey, calls []segmentCall, more func(index int, k *pipeline.CacheKey)) []string {
	keys := make([]string, len(calls))
	for i, c := range calls {
		k := base.Clone().Add("text", []byte(c.Text))
		if more != nil {
			more(c.Index, k)
		}
		keys[i] = k.Sum()
	}
	return keys
}

func (analyzerKind) cacheKeys(_ context.Context, _ *handlers, _ pipeline.StepInput, _ *workflowPipeline, st pipeline.Stage, calls []segmentCall) ([]string, error) {
	return eachKey(pipeline.NewCacheKey(st, analyzerCodeVersion), calls, nil), nil
}

func (aiKind) cacheKeys(ctx context.Context, h *handlers, in pipeline.StepInput, _ *workflowPipeline, st pipeline.Stage, calls []segmentCall) ([]string, error) {
	base := pipeline.NewCacheKey(st, aiCodeVersion)
	proj, err := h.Repo.GetProject(ctx, in.Workflow.ProjectID)
	if err != nil {
		return nil, storageErr("read project", err)
	}
	attrs, err := h.docAttrs(ctx, in.Workflow)
	if err != nil {
		return nil, err
	}
	base.Add("prompt", []byte(proj.Settings.DocumentPrompt)).Add("language", []byte(attrs.Language))
	return eachKey(base, calls, nil), nil
}

func (userKind) cacheKeys(ctx context.Context, h *handlers, in pipeline.StepInput, pipe *workflowPipeline, st pipeline.Stage, calls []segmentCall) ([]string, error) {
	base, err := h.requestKey(ctx, in.Workflow, st, pipe.def.Dir)
	if err != nil {
		return nil, err
	}
	// The document stages it needs, as their outputs; the ingestion
	// stages' outputs are the segment's text, already in its key (their
	// manifest would tie the key to the batch size).
	perSegment := map[string]map[int]stageLine{}
	for _, name := range st.Needs {
		n, _ := pipe.def.Stage(name)
		switch {
		case n.Scope == pipeline.ScopeSegment:
			lines, err := h.stageLines(ctx, in.Workflow, n, in.Batch.Batch)
			if err != nil {
				return nil, err
			}
			perSegment[name] = lines
		case slices.Contains(pipeline.IngestionStages, name):
		default:
			key, err := h.documentOutputKey(ctx, in.Workflow, n)
			if err != nil {
				return nil, err
			}
			raw, _, err := h.getOptional(ctx, key)
			if err != nil {
				return nil, err
			}
			base.Add("needs/"+name, raw)
		}
	}
	return eachKey(base, calls, func(index int, k *pipeline.CacheKey) {
		for _, name := range st.Needs {
			if lines, ok := perSegment[name]; ok {
				k.Add("needs/"+name, lines[index].Output)
			}
		}
	}), nil
}

// documentOutputKey is the blob holding document stage n's output for
// workflow ref: the one it wrote, or the one it points at (a reuse).
func (h *handlers) documentOutputKey(ctx context.Context, ref pipeline.WorkflowRef, n pipeline.Stage) (string, error) {
	own := pipeline.StageOutputBlobKey(ref, n.Name)
	if k := builtinOutputKey(n.Run.Builtin, ref); n.Run.Kind() == pipeline.RunBuiltin && k != "" {
		own = k // a builtin stores its output in its own blob
	}
	prog, err := h.Repo.GetProgress(ctx, ref.WorkflowID)
	if err != nil {
		return "", storageErr("read progress", err)
	}
	return prog.OutputBlobKey(ref, own), nil
}

// requestKey starts the key of a user's stage from what every request of
// it carries: its name (two stages may run one command, which answers by
// the name it is given), the source's content, the project and the
// document; and, for a command, the files its command line names in the
// pipeline's folder dir (commandFilesKey).
func (h *handlers) requestKey(ctx context.Context, ref pipeline.WorkflowRef, st pipeline.Stage, dir string) (*pipeline.CacheKey, error) {
	k := pipeline.NewCacheKey(st, stageRequestVersion)
	doc, err := h.Repo.GetDocument(ctx, ref.ProjectID, ref.DocumentID)
	if err != nil {
		return nil, storageErr("read document", err)
	}
	proj, err := h.Repo.GetProject(ctx, ref.ProjectID)
	if err != nil {
		return nil, storageErr("read project", err)
	}
	attrs, err := h.docAttrs(ctx, ref)
	if err != nil {
		return nil, err
	}
	project, _ := json.Marshal(stageProject(proj))
	document, _ := json.Marshal(struct {
		FileName string
		Attrs    *pipeline.DocAttrs
	}{doc.FileName, attrs})
	k.Add("stage", []byte(st.Name)).Add("source", []byte(doc.SHA256)).Add("project", project).Add("document", document)
	commandFilesKey(k, st, dir)
	return k, nil
}

// cachedSegments looks keys up for workflow self: the line the cache
// holds for each (nil for a miss) and the workflow the first hit from
// another workflow came from. A line another workflow answered says so
// (ReusedFrom); one self answered before (a re-run, a retried batch) is
// its own. A hit whose blob or line is gone is a miss.
func (h *handlers) cachedSegments(ctx context.Context, kind segmentKind, keys []string, self string) ([]*stageLine, string, error) {
	found, hits, err := h.Repo.LookupStageCaches(ctx, keys)
	if err != nil {
		return nil, "", storageErr("read stage cache", err)
	}
	entries := make([]*pipeline.CachedOutput, len(keys))
	for i := range found {
		if hits[i] {
			entries[i] = &found[i]
		}
	}
	var mu sync.Mutex
	blobs := map[string]map[int]stageLine{}
	load := func(key string) (map[int]stageLine, error) {
		mu.Lock()
		defer mu.Unlock()
		if lines, ok := blobs[key]; ok {
			return lines, nil
		}
		lines, err := kind.store().load(ctx, h, key)
		blobs[key] = lines
		return lines, err
	}
	out := make([]*stageLine, len(keys))
	from := ""
	for i, e := range entries {
		if e == nil {
			continue
		}
		lines, err := load(e.Blob)
		if err != nil {
			return nil, "", err
		}
		l, ok := lines[e.Index]
		if !ok || l.Error != "" {
			continue
		}
		out[i] = &l
		if e.Workflow.WorkflowID == self {
			continue
		}
		l.ReusedFrom = e.Workflow.WorkflowID
		if from == "" {
			from = e.Workflow.WorkflowID
		}
	}
	return out, from, nil
}

// cachedDocument looks key up: the cached output's entry; found is false
// for a miss (or a blob gone since).
func (h *handlers) cachedDocument(ctx context.Context, key string) (e pipeline.CachedOutput, found bool, err error) {
	e, found, err = h.Repo.LookupStageCache(ctx, key)
	switch {
	case err != nil:
		return e, false, storageErr("read stage cache", err)
	case !found:
		return e, false, nil
	}
	switch _, err := h.Blobs.Head(ctx, e.Blob); {
	case errors.Is(err, blob.ErrNotFound):
		return e, false, nil
	case err != nil:
		return e, false, storageErr("read stage cache", err)
	}
	return e, true, nil
}

// analysisResultKey is the cache key of a document result built from
// the workflow's segment analysis (the graph, the summary): the stage,
// the code, and the analysis as stored (the manifest and every batch's
// blob, in order). "" when the cache is off for st or there is no
// analysis to key (the stage runs and says why).
func (h *handlers) analysisResultKey(ctx context.Context, ref pipeline.WorkflowRef, st pipeline.Stage) (string, error) {
	if !h.cacheOn(ctx, st) {
		return "", nil
	}
	raw, found, err := h.getOptional(ctx, pipeline.ManifestBlobKey(ref))
	if err != nil || !found {
		return "", err
	}
	var manifest []pipeline.Batch
	if json.Unmarshal(raw, &manifest) != nil {
		return "", nil
	}
	k := pipeline.NewCacheKey(st, resultsCodeVersion).Add("manifest", raw)
	for _, b := range manifest {
		raw, _, err := h.getOptional(ctx, pipeline.BatchAnalysisBlobKey(ref, b.Batch))
		if err != nil {
			return "", err
		}
		k.Add("analysis", raw)
	}
	return k.Sum(), nil
}

// cachedResult is a document result step (the graph, the summary) that
// writes its output at out: answered from the cache when its analysis is
// one the cache has seen, else run and its output offered.
func (h *handlers) cachedResult(out func(pipeline.WorkflowRef) string, body stepFunc) stepFunc {
	return func(ctx context.Context, in pipeline.StepInput, pipe *workflowPipeline) (outcome, error) {
		st, _ := pipe.def.Stage(in.Step)
		key, err := h.analysisResultKey(ctx, in.Workflow, st)
		if err != nil {
			return outcome{}, err
		}
		if key != "" {
			if res, ok, err := h.reuseDocumentOutput(ctx, in.Workflow, key); err != nil || ok {
				return res, err
			}
		}
		res, err := body(ctx, in, pipe)
		if err != nil {
			return res, err
		}
		res.offers = append(res.offers, documentOffer(in.Workflow, st, key, out(in.Workflow))...)
		return res, nil
	}
}

// fileKey adds the files a stage reads, by name, to k.
func fileKey(k *pipeline.CacheKey, files map[string]string) error {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		raw, err := os.ReadFile(files[n])
		if err != nil {
			return err
		}
		k.Add("needs/"+n, raw)
	}
	return nil
}

// segmentLookup is what the cache holds for a batch's calls: each call's
// key and cached line (nil: a miss). No keys: the cache is off.
type segmentLookup struct {
	keys []string
	hits []*stageLine
	from string // the workflow the first hit came from
}

// segmentCache looks the calls of st up in the stage cache.
func (h *handlers) segmentCache(ctx context.Context, in pipeline.StepInput, pipe *workflowPipeline, st pipeline.Stage, kind segmentKind, calls []segmentCall) (segmentLookup, error) {
	ck, ok := kind.(cachedKind)
	if !ok || len(calls) == 0 || !h.cacheOn(ctx, st) {
		return segmentLookup{hits: make([]*stageLine, len(calls))}, nil
	}
	keys, err := ck.cacheKeys(ctx, h, in, pipe, st, calls)
	if err != nil {
		return segmentLookup{}, err
	}
	hits, from, err := h.cachedSegments(ctx, kind, keys, in.Workflow.WorkflowID)
	if err != nil {
		return segmentLookup{}, err
	}
	return segmentLookup{keys: keys, hits: hits, from: from}, nil
}

// batchRecord is what a batch records with its segments' outcomes
// (pipeline.BatchRecord): the answers the stage gave now (at: their
// positions in lines, in the order of cache.keys) offered as reusable
// under the batch blob at blobKey, and the batch's reused and run
// segments counted on the stage's step. Failed answers are not offered:
// a failure may be the moment's, and is tried again. Nothing when the
// cache is off.
func batchRecord(ref pipeline.WorkflowRef, st pipeline.Stage, blobKey string, cache segmentLookup, lines []*segmentAnswer, at []int, reused, own int) pipeline.BatchRecord {
	if cache.keys == nil {
		return pipeline.BatchRecord{}
	}
	rec := pipeline.BatchRecord{Stage: st.Name, StageCounts: pipeline.StageCounts{Reused: reused, Ran: len(at), Own: own, From: cache.from}}
	for j, i := range at {
		if a := lines[i]; a != nil && a.line.Error == "" {
			rec.Offers = append(rec.Offers, pipeline.CachedOutput{Key: cache.keys[j], Stage: st.Name, Workflow: ref, Blob: blobKey, Index: a.line.Index})
		}
	}
	return rec
}

// reuseDocumentOutput answers a document stage of workflow ref from the
// cache: ok is false for a miss. A hit copies nothing: the stage points
// at the producer's blob (outcome.output, StepState.Output), where every
// reader finds it (StepProgress.OutputBlobKey). Its own earlier output,
// on a re-run, stays where it is.
func (h *handlers) reuseDocumentOutput(ctx context.Context, ref pipeline.WorkflowRef, key string) (outcome, bool, error) {
	e, found, err := h.cachedDocument(ctx, key)
	if err != nil || !found {
		return outcome{}, false, err
	}
	from := e.Workflow.WorkflowID
	if from == ref.WorkflowID {
		return outcome{message: pipeline.OwnOutputNote, note: pipeline.OwnOutputNote}, true, nil
	}
	return outcome{message: "reused from " + from, reusedFrom: from, output: e.Blob}, true, nil
}

// documentOffer is the stage cache entry offering the document stage
// output at outKey under key (none when the cache is off: key ""). It
// is recorded with the step's completion, once the blob is durable.
func documentOffer(ref pipeline.WorkflowRef, st pipeline.Stage, key, outKey string) []pipeline.CachedOutput {
	if key == "" {
		return nil
	}
	return []pipeline.CachedOutput{{Key: key, Stage: st.Name, Workflow: ref, Blob: outKey}}
}
