package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/docpipe/docpipe/cmd/internal/backend"
	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/ai"
	"github.com/docpipe/docpipe/pipeline/eval"
	"github.com/docpipe/docpipe/pipeline/stageoutput"
)

func init() { addCommand(newEvalCmd) }

// exitBadTruth is eval's exit status for a truth folder it cannot use.
const exitBadTruth = 2

// evalDiffersShown is how many documents eval lists as differing most.
const evalDiffersShown = 5

type evalOptions struct {
	truth, docs       string
	pipeline, against string
	minScore          float64
}

func newEvalCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "eval --truth DIR --pipeline NAME@VERSION [--against NAME@VERSION] [flags]",
		Short: "Score pipeline versions against expected results",
		Long: `Run a pipeline version (and, with --against, a second one) on the documents
of a truth folder and score what each produced against what the truth files
expect: per field, per document and overall, with each version's cost and
latency per document side by side, and the documents where they differ most.

Each version runs in a project of its own, eval-NAME-VERSION (--project
names one instead), created if missing, with the same local runtime as
docpipe run: a document analysed before by the same version is not
analysed again. The truth format is in README.md ("Evaluation").

Exit status 0; 1 when --min-score is given and the --pipeline version
scores below it; 2 for a truth file that cannot be used (the message names
the file and the field) or a command line docpipe cannot parse.`,
		Example: `  docpipe eval --truth samples/truth --pipeline facts@1
  docpipe eval --truth samples/truth --pipeline facts@2 --against facts@1 --min-score 0.7 --json`,
		Args: exactArgs(0, "no arguments (the documents come from --truth)"),
	}
	var o evalOptions
	cmd.Flags().StringVar(&o.truth, "truth", "", "folder of truth files, one JSON file per document (required)")
	cmd.Flags().StringVar(&o.docs, "docs", "", "folder the truth files' document paths are relative to (default: the truth folder)")
	cmd.Flags().StringVar(&o.pipeline, "pipeline", "", "pipeline version to score: NAME@VERSION, or NAME for its current version (required)")
	cmd.Flags().StringVar(&o.against, "against", "", "a second version to score side by side: NAME@VERSION or NAME")
	cmd.Flags().Float64Var(&o.minScore, "min-score", 0, "exit 1 when the --pipeline version's overall score (0 to 1) is below this")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := a.localOnly(cmd); err != nil {
			return err
		}
		switch {
		case o.truth == "":
			return usageErrorf("%s needs --truth DIR", cmd.CommandPath())
		case o.pipeline == "":
			return usageErrorf("%s needs --pipeline NAME@VERSION", cmd.CommandPath())
		case o.minScore < 0 || o.minScore > 1:
			return usageErrorf("--min-score %v: want a score from 0 to 1", o.minScore)
		}
		project := ""
		if f := cmd.Flag("project"); f != nil && f.Changed {
			project = a.project
		}
		return evaluate(cmd.Context(), a, o, project, cmd.Flags().Changed("min-score"))
	}
	return cmd
}

// evalVersion is one version's run over the truth set.
type evalVersion struct {
	// RunID is the evaluation run kept for this version (pipeline.EvalRun).
	RunID     string         `json:"run_id"`
	Pipeline  string         `json:"pipeline"`
	Project   string         `json:"project"`
	Summary   eval.Summary   `json:"summary"`
	Cost      evalCost       `json:"cost"`
	Documents []evalDocument `json:"documents"`

	name    string
	version int
}

// evalCost is what a document's analysis cost, as recorded: the audited
// step transitions and the tokens of AI stages, priced where the model
// has a list price.
type evalCost struct {
	Transitions  int      `json:"transitions"`
	InputTokens  int64    `json:"input_tokens"`
	OutputTokens int64    `json:"output_tokens"`
	PriceUSD     float64  `json:"price_usd"`
	Unpriced     []string `json:"unpriced_models,omitempty"`
}

func (c evalCost) add(o evalCost) evalCost {
	c.Transitions += o.Transitions
	c.InputTokens += o.InputTokens
	c.OutputTokens += o.OutputTokens
	c.PriceUSD += o.PriceUSD
	for _, m := range o.Unpriced {
		if !slices.Contains(c.Unpriced, m) {
			c.Unpriced = append(c.Unpriced, m)
		}
	}
	return c
}

type evalDocument struct {
	File       string        `json:"file"`
	WorkflowID string        `json:"workflow_id"`
	Status     string        `json:"status"`
	Reused     bool          `json:"reused"`  // analysed by an earlier run
	Seconds    float64       `json:"seconds"` // first step's start to last step's end
	Cost       evalCost      `json:"cost"`
	Score      eval.DocScore `json:"score"`
}

// evalDifference is a document two versions scored apart.
type evalDifference struct {
	Document string    `json:"document"`
	Scores   []float64 `json:"scores"` // in the order of the versions
	Delta    float64   `json:"delta"`  // second minus first
	Fields   []string  `json:"fields"` // the fields that scored differently
}

type evalReport struct {
	Truth       string           `json:"truth"`
	Versions    []evalVersion    `json:"versions"`
	Differences []evalDifference `json:"differences,omitempty"`
	MinScore    *float64         `json:"min_score,omitempty"`
	Passed      bool             `json:"passed"`
}

func evaluate(ctx context.Context, a *app, o evalOptions, project string, minScoreSet bool) error {
	truths, err := eval.LoadDir(o.truth)
	if err == nil {
		err = eval.Resolve(truths, o.docs)
	}
	var truth pipeline.TruthSet
	if err == nil {
		truth, err = truthSet(o.truth, truths)
	}
	if err != nil {
		fmt.Fprintln(a.stderr, "docpipe:", err)
		return exitError{exitBadTruth}
	}
	var files []string
	for _, t := range truths {
		if !slices.Contains(files, t.Document) {
			files = append(files, t.Document)
		}
	}
	refs := []string{o.pipeline}
	if o.against != "" {
		refs = append(refs, o.against)
	}
	rep := evalReport{Truth: o.truth, Passed: true}
	for _, ref := range refs {
		v, err := evalOneVersion(ctx, a, ref, project, truths, files)
		if err != nil {
			return err
		}
		rep.Versions = append(rep.Versions, v)
	}
	if err := recordEvalRuns(ctx, a, truth, rep.Versions); err != nil {
		return err
	}
	if len(rep.Versions) == 2 {
		rep.Differences = evalDifferences(rep.Versions[0], rep.Versions[1])
	}
	if minScoreSet {
		rep.MinScore = &o.minScore
		rep.Passed = rep.Versions[0].Summary.Score >= o.minScore
	}
	if a.jsonOut {
		err = writeJSON(a.stdout, rep)
	} else {
		err = printEvalReport(a.stdout, rep)
	}
	if err != nil {
		return err
	}
	if !rep.Passed {
		fmt.Fprintf(a.stderr, "%s scored %.3f, below --min-score %.3f\n", rep.Versions[0].Pipeline, rep.Versions[0].Summary.Score, o.minScore)
		return exitError{1}
	}
	return nil
}

// evalOneVersion runs one version on the truth documents and scores it.
func evalOneVersion(ctx context.Context, a *app, ref, project string, truths []eval.Truth, files []string) (evalVersion, error) {
	chosen, err := resolveEvalPipeline(ctx, a, ref)
	if err != nil {
		return evalVersion{}, err
	}
	if project == "" {
		project = fmt.Sprintf("eval-%s-%d", chosen.name, chosen.version)
	}
	v := evalVersion{Pipeline: chosen.String(), Project: project, name: chosen.name, version: chosen.version}
	results, err := runForEval(ctx, a, project, v.Pipeline, files)
	if err != nil {
		return v, err
	}
	byFile := map[string]docResult{}
	for _, r := range results {
		byFile[filepath.Clean(r.File)] = r
	}
	b, err := backend.OpenLocal(a.home)
	if err != nil {
		return v, err
	}
	defer b.Close()
	prices := ai.ListPrices()
	var scores []eval.DocScore
	for _, t := range truths {
		r, ok := byFile[filepath.Clean(t.Document)]
		if !ok {
			return v, fmt.Errorf("%s: docpipe run reported no result for it", t.Document)
		}
		d := evalDocument{File: t.Document, WorkflowID: r.WorkflowID, Status: statusText(r), Reused: r.Reused}
		var out eval.Outputs
		if r.WorkflowID != "" {
			prog, err := b.Repo.GetProgress(ctx, r.WorkflowID)
			if err != nil {
				return v, err
			}
			if out, err = eval.Collect(ctx, b.Repo, b.Blobs, prog); err != nil {
				return v, fmt.Errorf("results of %s (%s): %w", t.Document, r.WorkflowID, err)
			}
			d.Seconds = stepsSeconds(prog)
			if d.Cost, err = workflowCost(ctx, b, prog, prices); err != nil {
				return v, err
			}
		}
		d.Score = eval.Score(t, out)
		scores = append(scores, d.Score)
		v.Cost = v.Cost.add(d.Cost)
		v.Documents = append(v.Documents, d)
	}
	v.Summary = eval.Summarise(scores)
	return v, nil
}

// recordEvalRuns keeps each version's summary as an evaluation run, once
// every version is scored, so an eval that fails part way keeps nothing.
func recordEvalRuns(ctx context.Context, a *app, truth pipeline.TruthSet, versions []evalVersion) error {
	b, err := backend.OpenLocal(a.home)
	if err != nil {
		return err
	}
	defer b.Close()
	for i := range versions {
		run, err := b.Repo.RecordEvalRun(ctx, evalRunOf(versions[i], truth))
		if err != nil {
			return err
		}
		versions[i].RunID = run.ID
	}
	return nil
}

// evalRunOf is the summary of a version's scores that is kept.
func evalRunOf(v evalVersion, truth pipeline.TruthSet) pipeline.EvalRun {
	run := pipeline.EvalRun{
		Pipeline: v.name, Version: v.version, Truth: truth, Project: v.Project,
		Score: v.Summary.Score, Pages: v.Summary.Pages, Documents: len(v.Documents),
		Fields: make([]pipeline.EvalFieldScore, 0, len(v.Summary.Fields)),
		Cost: pipeline.EvalCost{
			Transitions: v.Cost.Transitions, InputTokens: v.Cost.InputTokens, OutputTokens: v.Cost.OutputTokens,
			PriceUSD: v.Cost.PriceUSD, Unpriced: v.Cost.Unpriced,
		},
	}
	for _, path := range slices.Sorted(maps.Keys(v.Summary.Fields)) {
		run.Fields = append(run.Fields, pipeline.EvalFieldScore{Path: path, Score: v.Summary.Fields[path]})
	}
	for _, d := range v.Documents {
		run.MeanSeconds += d.Seconds
	}
	if len(v.Documents) > 0 {
		run.MeanSeconds /= float64(len(v.Documents))
	}
	return run
}

// truthSet names the truth folder and hashes its files: each file's name
// and bytes, length-prefixed, in the order they were loaded.
func truthSet(dir string, truths []eval.Truth) (pipeline.TruthSet, error) {
	name := filepath.Base(dir)
	if abs, err := filepath.Abs(dir); err == nil {
		name = filepath.Base(abs)
	}
	h := sha256.New()
	for _, t := range truths {
		raw, err := os.ReadFile(t.File)
		if err != nil {
			return pipeline.TruthSet{}, fmt.Errorf("truth file %s: %w", t.File, err)
		}
		for _, part := range [][]byte{[]byte(filepath.Base(t.File)), raw} {
			binary.Write(h, binary.BigEndian, uint64(len(part)))
			h.Write(part)
		}
	}
	return pipeline.TruthSet{Name: name, Hash: hex.EncodeToString(h.Sum(nil))}, nil
}

// resolveEvalPipeline settles NAME or NAME@VERSION to a stored version.
func resolveEvalPipeline(ctx context.Context, a *app, ref string) (chosenPipeline, error) {
	if isPipelineFile(ref) {
		return chosenPipeline{}, usageErrorf("--pipeline %s: eval takes a stored NAME@VERSION; apply the file first (docpipe pipeline apply %s)", ref, ref)
	}
	b, err := backend.OpenLocal(a.home)
	if err != nil {
		return chosenPipeline{}, err
	}
	defer b.Close()
	return choosePipeline(ctx, b.Repo, a.project, ref)
}

// runForEval processes files in project on the pipeline version ref with
// the local runtime `docpipe run` uses (documents already analysed in the
// project by that version are reused), and returns one result per file.
// It is the one place eval starts work.
func runForEval(ctx context.Context, a *app, project, ref string, files []string) ([]docResult, error) {
	var out bytes.Buffer
	ra := *a
	ra.stdout, ra.project, ra.jsonOut = &out, project, true
	f := newRunFlags(&ra, pflag.NewFlagSet("eval", pflag.ContinueOnError))
	f.pipeline, f.progress = ref, "none"
	err := runDocuments(ctx, f, files)
	var ee exitError
	if err != nil && !errors.As(err, &ee) {
		return nil, err // a failed document is a result to score, not an error
	}
	var results []docResult
	dec := json.NewDecoder(&out)
	for {
		var r docResult
		if err := dec.Decode(&r); errors.Is(err, io.EOF) {
			return results, nil
		} else if err != nil {
			return nil, fmt.Errorf("reading run's results: %w", err)
		}
		results = append(results, r)
	}
}

// aiUsageOf reads the tokens a workflow's AI stages recorded.
func aiUsageOf(ctx context.Context, b *backend.Backend, ref pipeline.WorkflowRef, def pipeline.Definition) (map[string]ai.Usage, error) {
	return stageoutput.AIUsage(ctx, b.Blobs, ref, def)
}

func workflowCost(ctx context.Context, b *backend.Backend, prog pipeline.StepProgress, prices ai.Prices) (evalCost, error) {
	var c evalCost
	trs, err := b.Repo.ListTransitions(ctx, prog.WorkflowID)
	if err != nil {
		return c, err
	}
	c.Transitions = len(trs)
	def, err := b.Repo.Definition(ctx, prog.Pipeline, prog.PipelineVersion)
	if err != nil {
		return c, err
	}
	ref := pipeline.WorkflowRef{ProjectID: prog.ProjectID, DocumentID: prog.DocumentID, WorkflowID: prog.WorkflowID}
	usage, err := aiUsageOf(ctx, b, ref, def)
	if err != nil {
		return c, fmt.Errorf("AI usage of %s: %w", prog.WorkflowID, err)
	}
	for _, u := range usage {
		c.InputTokens += u.InputTokens
		c.OutputTokens += u.OutputTokens
	}
	c.PriceUSD, c.Unpriced = prices.Cost(usage)
	return c, nil
}

// stepsSeconds is a workflow's latency as recorded: from its first step's
// start to its last step's end, whichever run did the work.
func stepsSeconds(prog pipeline.StepProgress) float64 {
	var first, last time.Time
	for _, s := range prog.Steps {
		if t, err := time.Parse(time.RFC3339Nano, s.StartedAt); err == nil && (first.IsZero() || t.Before(first)) {
			first = t
		}
		if t, err := time.Parse(time.RFC3339Nano, s.EndedAt); err == nil && t.After(last) {
			last = t
		}
	}
	if first.IsZero() || last.Before(first) {
		return 0
	}
	return last.Sub(first).Seconds()
}

// evalDifferences lists the documents whose scores differ between two
// versions, most first.
func evalDifferences(a, b evalVersion) []evalDifference {
	var out []evalDifference
	for i, da := range a.Documents {
		db := b.Documents[i] // the same truths, in the same order
		delta := db.Score.Score - da.Score.Score
		if math.Abs(delta) < 1e-9 {
			continue
		}
		d := evalDifference{Document: da.File, Scores: []float64{da.Score.Score, db.Score.Score}, Delta: delta, Fields: []string{}}
		for j, fa := range da.Score.Fields {
			if math.Abs(fa.Score-db.Score.Fields[j].Score) > 1e-9 {
				d.Fields = append(d.Fields, fa.Path)
			}
		}
		if pa, pb := da.Score.PagesScore, db.Score.PagesScore; pa != nil && pb != nil && math.Abs(*pa-*pb) > 1e-9 {
			d.Fields = append(d.Fields, "pages")
		}
		out = append(out, d)
	}
	slices.SortStableFunc(out, func(x, y evalDifference) int { return cmp.Compare(math.Abs(y.Delta), math.Abs(x.Delta)) })
	return out
}

func printEvalReport(w io.Writer, rep evalReport) error {
	vs := rep.Versions
	header := []string{""}
	for _, v := range vs {
		header = append(header, v.Pipeline)
	}
	t := newTextTable(w, header...)
	row := func(label string, cell func(evalVersion) string) {
		cells := []any{label}
		for _, v := range vs {
			cells = append(cells, cell(v))
		}
		t.row(cells...)
	}
	row("project", func(v evalVersion) string { return v.Project })
	row("score", func(v evalVersion) string { return fmt.Sprintf("%.3f", v.Summary.Score) })
	var paths []string
	for _, v := range vs {
		for p := range v.Summary.Fields {
			if !slices.Contains(paths, p) {
				paths = append(paths, p)
			}
		}
	}
	slices.Sort(paths)
	for _, p := range paths {
		row("  "+p, func(v evalVersion) string { return fmt.Sprintf("%.3f", v.Summary.Fields[p]) })
	}
	row("  pages", func(v evalVersion) string {
		if v.Summary.Pages == nil {
			return "-"
		}
		return fmt.Sprintf("%.3f", *v.Summary.Pages)
	})
	row("transitions", func(v evalVersion) string { return fmt.Sprint(v.Cost.Transitions) })
	row("AI tokens in/out", func(v evalVersion) string { return fmt.Sprintf("%d/%d", v.Cost.InputTokens, v.Cost.OutputTokens) })
	row("AI price", func(v evalVersion) string { return evalPrice(v.Cost) })
	row("seconds", func(v evalVersion) string {
		s := 0.0
		for _, d := range v.Documents {
			s += d.Seconds
		}
		return fmt.Sprintf("%.2f", s)
	})
	if err := t.flush(); err != nil {
		return err
	}

	fmt.Fprintln(w)
	header = []string{"DOCUMENT"}
	for _, v := range vs {
		header = append(header, v.Pipeline+" SCORE", "STATUS", "SECONDS", "TRANSITIONS", "TOKENS")
	}
	t = newTextTable(w, header...)
	for i := range vs[0].Documents {
		cells := []any{vs[0].Documents[i].File}
		for _, v := range vs {
			d := v.Documents[i]
			secs := fmt.Sprintf("%.2f", d.Seconds)
			if d.Reused {
				secs += " (earlier)"
			}
			cells = append(cells, fmt.Sprintf("%.3f", d.Score.Score), d.Status, secs, d.Cost.Transitions, d.Cost.InputTokens+d.Cost.OutputTokens)
		}
		t.row(cells...)
	}
	if err := t.flush(); err != nil {
		return err
	}
	for _, v := range vs {
		for _, d := range v.Documents {
			for _, f := range d.Score.Fields {
				if f.Missing != "" {
					fmt.Fprintf(w, "%s: %s %s: %s\n", v.Pipeline, printable(d.File), f.Path, printable(f.Missing))
				}
			}
		}
	}
	if len(rep.Differences) > 0 {
		fmt.Fprintf(w, "\ndiffer most (%s minus %s):\n", vs[1].Pipeline, vs[0].Pipeline)
		t = newTextTable(w, "DOCUMENT", "DELTA", "FIELDS")
		for _, d := range rep.Differences[:min(len(rep.Differences), evalDiffersShown)] {
			t.row(d.Document, fmt.Sprintf("%+.3f", d.Delta), strings.Join(d.Fields, ", "))
		}
		return t.flush()
	}
	return nil
}

func evalPrice(c evalCost) string {
	s := fmt.Sprintf("$%.4f", c.PriceUSD)
	if len(c.Unpriced) > 0 {
		s += " (no price: " + strings.Join(c.Unpriced, ", ") + ")"
	}
	return s
}
