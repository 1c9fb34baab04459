package steps

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/analyze"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/driver/dirblob"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// analysisFixture is a workflow whose analyzer has run on segments
// segments of generated prose, as the analyzer stores them.
type analysisFixture struct {
	h       *handlers
	in      pipeline.StepInput
	results []analyze.SegmentInput
}

func newAnalysisFixture(tb testing.TB, segments int) analysisFixture {
	tb.Helper()
	ctx := context.Background()
	blobs, err := dirblob.New(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	f := analysisFixture{
		h:  &handlers{Deps: Deps{Blobs: blobs}},
		in: pipeline.StepInput{Workflow: pipeline.WorkflowRef{ProjectID: "p", DocumentID: "d", WorkflowID: "w"}},
	}
	manifest := BuildManifest(segments, 100)
	if err := f.h.putJSON(ctx, pipeline.ManifestBlobKey(f.in.Workflow), manifest); err != nil {
		tb.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, b := range manifest {
		var lines []stageLine
		for i := b.From; i <= b.To; i++ {
			a, err := analyzeOne(ctx, segmentCall{Index: i, Text: prose(rng)})
			if err != nil {
				tb.Fatal(err)
			}
			lines = append(lines, a.line)
			var res analyze.SegmentResult
			if err := json.Unmarshal(a.line.Output, &res); err != nil {
				tb.Fatal(err)
			}
			f.results = append(f.results, analyze.SegmentInput{Index: i, Result: res})
		}
		if err := (analysisStore{}).save(ctx, f.h, pipeline.BatchAnalysisBlobKey(f.in.Workflow, b.Batch), lines); err != nil {
			tb.Fatal(err)
		}
	}
	return f
}

// prose is a page of about 4,500 characters: sentences of common and
// rarer words, with dates, amounts, e-mail addresses and names among them
// for the entities.
func prose(rng *rand.Rand) string {
	common := strings.Fields("the office staff files report lease tenant landlord payment contract clause notice period term rent deposit repair building floor meeting council budget review audit")
	rare := strings.Fields("afflictions affluent baffling characteristically confidential differ efficient effluent fjords offline shuffle workflow")
	extra := []string{"on 5 March 2024", "for EUR 1,250.00", "to anna.berg@example.com", "with Anna Berg", "in Hamburg", "by 2025-01-31"}
	var b strings.Builder
	for b.Len() < 4500 {
		n := 8 + rng.IntN(14)
		for w := range n {
			word := common[rng.IntN(len(common))]
			if rng.IntN(4) == 0 {
				word = rare[rng.IntN(len(rare))]
			}
			if w == 0 {
				word = strings.ToUpper(word[:1]) + word[1:]
			}
			b.WriteString(word)
			b.WriteByte(' ')
		}
		if rng.IntN(3) == 0 {
			b.WriteString(extra[rng.IntN(len(extra))])
		}
		b.WriteString(".\n")
	}
	return b.String()
}

// getGraph reads the graph the graph step stored.
func (f analysisFixture) getGraph(t *testing.T) analyze.Graph {
	t.Helper()
	var g analyze.Graph
	if err := f.h.getJSON(context.Background(), pipeline.GraphBlobKey(f.in.Workflow), &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// The graph step reads only the keywords and entities of the analysis,
// and builds from them the graph the whole results give.
func TestGraphReadsKeywordsAndEntitiesOnly(t *testing.T) {
	t.Parallel()
	f := newAnalysisFixture(t, 250)
	if _, err := f.h.graphBuilder(t.Context(), f.in, nil); err != nil {
		t.Fatal(err)
	}
	if got, want := f.getGraph(t), analyze.BuildGraph(f.results); !reflect.DeepEqual(got, want) {
		t.Errorf("graph from keywords and entities differs from the graph of the whole results:\n got %+v\nwant %+v", got, want)
	}

	// A summary the graph does not read cannot fail it; the summary step,
	// which reads it, fails on it.
	key := pipeline.BatchAnalysisBlobKey(f.in.Workflow, 1)
	raw, err := blob.GetBytes(t.Context(), f.h.Blobs, key, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	var entries []map[string]any
	if err := json.Unmarshal(raw, &entries); err != nil {
		t.Fatal(err)
	}
	entries[0]["result"].(map[string]any)["summary"] = "not a list of sentences"
	if err := f.h.putJSON(t.Context(), key, entries); err != nil {
		t.Fatal(err)
	}
	if _, err := f.h.graphBuilder(t.Context(), f.in, nil); err != nil {
		t.Errorf("graph step on a summary it does not read: %v", err)
	}
	if got, want := f.getGraph(t), analyze.BuildGraph(f.results); !reflect.DeepEqual(got, want) {
		t.Errorf("graph changed with a summary it does not read")
	}
	_, err = f.h.documentSummarizer(t.Context(), f.in, nil)
	if steperr.Name(err) != steperr.NameInvalidInput || !strings.Contains(err.Error(), key) {
		t.Errorf("summary step on a corrupt summary: %v, want invalid input naming %s", err, key)
	}
}

// The summary step's summary is the one the whole results give.
func TestSummaryOfTheWholeResults(t *testing.T) {
	t.Parallel()
	f := newAnalysisFixture(t, 250)
	if _, err := f.h.documentSummarizer(t.Context(), f.in, nil); err != nil {
		t.Fatal(err)
	}
	var got analyze.DocumentSummary
	if err := f.h.getJSON(t.Context(), pipeline.SummaryBlobKey(f.in.Workflow), &got); err != nil {
		t.Fatal(err)
	}
	sb := analyze.NewSummaryBuilder(analyze.SummaryOptions{})
	for _, r := range f.results {
		sb.Add(r.Index, r.Result)
	}
	if want := sb.Summary(); !reflect.DeepEqual(got, want) {
		t.Errorf("summary:\n got %+v\nwant %+v", got, want)
	}
}

// BenchmarkAnalysisDocumentSteps runs the graph and the summary steps on
// a 3,000-segment document's stored analysis: each reads all of it.
func BenchmarkAnalysisDocumentSteps(b *testing.B) {
	f := newAnalysisFixture(b, 3000)
	for _, step := range []struct {
		name string
		body func(*handlers, context.Context, pipeline.StepInput, *workflowPipeline) (outcome, error)
	}{
		{pipeline.StepGraphBuilder, (*handlers).graphBuilder},
		{pipeline.StepDocumentSummarizer, (*handlers).documentSummarizer},
	} {
		b.Run(step.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := step.body(f.h, b.Context(), f.in, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
