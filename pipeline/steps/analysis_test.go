package steps

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/analyze"
	"github.com/docpipe/docpipe/pipeline/driver/dirblob"
)

// TestAReusedAnswerIsSummarisedAsWhenItWasGiven checks that what a
// segment item keeps of a reused analysis (its language and first
// keywords, read from the answer as stored) is what the fresh answer
// recorded, on texts in several scripts and with characters the
// encoder escapes.
func TestAReusedAnswerIsSummarisedAsWhenItWasGiven(t *testing.T) {
	words := []string{"invoice", "Zürich", "naïve", "<tag>", "R&D", "Ελλάδα", "東京", "café", "\u2028sep", "2024-01-31", "x@y.org", "\"quoted\"", "tab\there"}
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 200 {
		var sb strings.Builder
		for range 1 + r.IntN(60) {
			sb.WriteString(words[r.IntN(len(words))])
			sb.WriteString([]string{" ", ". ", ", ", "\n"}[r.IntN(4)])
		}
		fresh, err := analyzeOne(context.Background(), segmentCall{Index: n + 1, Text: sb.String()})
		if err != nil || fresh.line.Error != "" {
			t.Fatalf("analyse %q: %v %s", sb.String(), err, fresh.line.Error)
		}
		language, keywords := analyzerKind{}.summary(fresh.line)
		if language != fresh.language || !slices.Equal(keywords, fresh.keywords) {
			t.Fatalf("text %q: reused summary %q %q, fresh %q %q", sb.String(), language, keywords, fresh.language, fresh.keywords)
		}
	}
}

// TestTheAnalysisStoreReadsBackWhatItWrote checks the batch blob's round
// trip: every answer's output byte for byte, and the failures' reasons.
func TestTheAnalysisStoreReadsBackWhatItWrote(t *testing.T) {
	blobs, err := dirblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h := &handlers{Deps: Deps{Blobs: blobs}}
	var lines []stageLine
	for i := 1; i <= 20; i++ {
		if i%7 == 0 {
			lines = append(lines, stageLine{Index: i, Error: fmt.Sprintf("segment %d <failed> & why", i)})
			continue
		}
		out, _ := json.Marshal(map[string]any{"language": "en", "keywords": []map[string]any{{"term": fmt.Sprintf("k<%d>", i), "count": i}}})
		lines = append(lines, stageLine{Index: i, Output: out})
	}
	ctx := context.Background()
	if err := (analysisStore{}).save(ctx, h, "b.json", lines); err != nil {
		t.Fatal(err)
	}
	got, err := analysisStore{}.load(ctx, h, "b.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(lines) {
		t.Fatalf("read %d lines back, wrote %d", len(got), len(lines))
	}
	for _, l := range lines {
		g := got[l.Index]
		var want, have any
		if l.Output != nil {
			json.Unmarshal(l.Output, &want)
			json.Unmarshal(g.Output, &have)
		}
		if g.Error != l.Error || fmt.Sprint(want) != fmt.Sprint(have) {
			t.Errorf("segment %d: read %q %s, wrote %q %s", l.Index, g.Error, g.Output, l.Error, l.Output)
		}
	}
}

// The analysis batch blob is written by hand for speed; it must be what
// json.Marshal writes, byte for byte, for any analysis and any reason.
func TestEncodeEntriesIsJSONMarshal(t *testing.T) {
	texts := []string{
		"", "plain words", "<script>&amp;</script>", "quote \" and \\ slash",
		"tab\tnew\nline\r\x00\x1f", "ünïcødé ✓ 🍑", "line\u2028sep\u2029", "bad \xff utf-8",
	}
	var entries []rawEntry
	for i, text := range texts {
		res, err := json.Marshal(analyze.AnalyzeSegment(text+" plums and apples, apples", analyze.Options{}))
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries,
			rawEntry{Index: i*2 + 1, Status: pipeline.SegmentDone, Result: res},
			rawEntry{Index: i*2 + 2, Status: pipeline.SegmentFailed, Error: "exit status 3: " + text},
		)
		if extra, err := json.Marshal(map[string]any{"text": text, "n": -i, "f": 1.5e300}); err == nil {
			entries = append(entries, rawEntry{Index: -i, Status: pipeline.SegmentDone, Result: extra})
		}
	}
	for _, set := range [][]rawEntry{{}, entries[:1], entries} {
		want, err := json.Marshal(set)
		if err != nil {
			t.Fatal(err)
		}
		if got := encodeEntries(set); string(got) != string(want) {
			t.Errorf("encodeEntries:\n got %s\nwant %s", got, want)
		}
	}
}

// BenchmarkSummaryOfAReusedAnswer is what a backfill pays per reused
// segment to record its language and keywords, on a page of text.
func BenchmarkSummaryOfAReusedAnswer(b *testing.B) {
	var sb strings.Builder
	for i := range 400 {
		fmt.Fprintf(&sb, "Word%d appears on 2024-01-%02d near café number %d. ", i%37, 1+i%28, i)
	}
	a, err := analyzeOne(context.Background(), segmentCall{Index: 1, Text: sb.String()})
	if err != nil || a.line.Error != "" {
		b.Fatal(err, a.line.Error)
	}
	b.SetBytes(int64(len(a.line.Output)))
	for b.Loop() {
		if language, _ := (analyzerKind{}).summary(a.line); language != a.language {
			b.Fatalf("language %q, want %q", language, a.language)
		}
	}
}
