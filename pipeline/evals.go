package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/docpipe/docpipe/pipeline/table"
)

// An evaluation run is one pipeline version scored on a truth set: its
// summary is kept so that versions can be compared over time. Runs are
// written once and never changed. The keys are in keys.go (EvalRunKey).

// EvalRun is the summary of one evaluation run.
type EvalRun struct {
	ID       string    `json:"id"` // a ULID for At
	Pipeline string    `json:"pipeline"`
	Version  int       `json:"version"`
	Truth    TruthSet  `json:"truth"`
	At       time.Time `json:"at"` // when the run was recorded
	Project  string    `json:"project,omitempty"`
	// Score is the overall score from 0 to 1; Fields the mean score of each
	// field path, in path order. A list rather than a map: field paths hold
	// dots, which an attribute path would read as nesting.
	Score     float64          `json:"score"`
	Fields    []EvalFieldScore `json:"fields"`
	Pages     *float64         `json:"pages,omitempty"` // share of page snippets found
	Documents int              `json:"documents"`
	Cost      EvalCost         `json:"cost"`
	// MeanSeconds is the mean latency of a document's analysis.
	MeanSeconds float64 `json:"mean_seconds"`
}

// String is NAME@VERSION.
func (r EvalRun) String() string { return fmt.Sprintf("%s@%d", r.Pipeline, r.Version) }

// TruthSet says which truth files a run was scored on: the folder's name
// and a hash of the files' contents, so that runs on the same set compare
// and an edited set is told apart.
type TruthSet struct {
	Name string `json:"name"`
	Hash string `json:"hash"` // hex SHA-256
}

// EvalFieldScore is the mean score of one field path.
type EvalFieldScore struct {
	Path  string  `json:"path"`
	Score float64 `json:"score"`
}

// EvalCost is what a run's analyses cost together.
type EvalCost struct {
	Transitions  int      `json:"transitions"`
	InputTokens  int64    `json:"input_tokens"`
	OutputTokens int64    `json:"output_tokens"`
	PriceUSD     float64  `json:"price_usd"`
	Unpriced     []string `json:"unpriced_models,omitempty"` // AI models without a list price
}

// RecordEvalRun stores run under a new id at the repository's clock's time
// and returns it as stored. It never overwrites a run.
func (r *Repository) RecordEvalRun(ctx context.Context, run EvalRun) (EvalRun, error) {
	if err := validName("pipeline", run.Pipeline); err != nil {
		return EvalRun{}, err
	}
	switch {
	case run.Version < 1:
		return EvalRun{}, fmt.Errorf("pipeline: evaluation run of %s: version %d, want 1 or more", run.Pipeline, run.Version)
	case run.Truth.Name == "" || run.Truth.Hash == "":
		return EvalRun{}, fmt.Errorf("pipeline: evaluation run of %s: the truth set needs a name and a hash", run)
	case math.IsNaN(run.Score) || run.Score < 0 || run.Score > 1:
		return EvalRun{}, fmt.Errorf("pipeline: evaluation run of %s: score %v, want 0 to 1", run, run.Score)
	}
	run.At = r.now().UTC()
	run.ID = NewIDAt(run.At)
	if run.Fields == nil {
		run.Fields = []EvalFieldScore{}
	}
	it, err := entityItem(EvalRunKey(run.Pipeline, run.At, run.ID), run,
		table.AttrGSI2PK, PipelineIndexPK(run.Pipeline),
		table.AttrGSI2SK, EvalVersionIndexSK(run.Version, run.At, run.ID))
	if err != nil {
		return EvalRun{}, err
	}
	err = r.t.Put(ctx, it, table.NotExists{Path: table.AttrPK})
	if errors.Is(err, table.ErrConditionFailed) {
		return EvalRun{}, fmt.Errorf("pipeline: evaluation run %s of %s: %w", run.ID, run, ErrAlreadyExists)
	}
	if err != nil {
		return EvalRun{}, fmt.Errorf("pipeline: record evaluation run of %s: %w", run, err)
	}
	return run, nil
}

// ListEvalRuns pages through a pipeline's evaluation runs, every version,
// newest first: one Query on the pipeline's partition.
func (r *Repository) ListEvalRuns(ctx context.Context, name string, limit int, pageToken string) ([]EvalRun, string, error) {
	return queryPage[EvalRun](ctx, r.t, table.Query{
		PK: PrefixPipeline + name, SKPrefix: PrefixEval,
		Reverse: true, Limit: limit, PageToken: pageToken,
	})
}

// ListVersionEvalRuns pages through one version's evaluation runs, newest
// first: one Query on GSI2.
func (r *Repository) ListVersionEvalRuns(ctx context.Context, name string, version, limit int, pageToken string) ([]EvalRun, string, error) {
	return queryPage[EvalRun](ctx, r.t, table.Query{
		Index: table.IndexGSI2, PK: PipelineIndexPK(name), SKPrefix: EvalVersionIndexSKPrefix(version),
		Reverse: true, Limit: limit, PageToken: pageToken,
	})
}
