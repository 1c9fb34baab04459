package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline/search"
)

func searchHits(t *testing.T, args ...string) []search.Hit {
	t.Helper()
	out, err := cli(t, append([]string{"search", "--json"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	var hits []search.Hit
	if err := json.Unmarshal([]byte(out), &hits); err != nil {
		t.Fatalf("search output %q: %v", out, err)
	}
	return hits
}

func TestSearchFindsCompletedAnalyses(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	if _, err := cli(t, "run", "--home", home, "--progress", "none", filepath.Join(docs, "notes.md"), filepath.Join(docs, "letter.txt")); err != nil {
		t.Fatal(err)
	}

	hits := searchHits(t, "--home", home, "body: Oyelaran")
	if len(hits) != 1 || hits[0].FileName != "letter.txt" || hits[0].Segment != 1 || hits[0].Kind != "section" || hits[0].Field != "body" ||
		!strings.Contains(hits[0].Snippet, "**Oyelaran**") || hits[0].Pipeline != "docpipe" || hits[0].WorkflowID == "" {
		t.Fatalf("body: Oyelaran: %+v", hits)
	}
	// The letter's section, and the letter's own row for its summary
	// and entities.
	if all := searchHits(t, "--home", home, "Oyelaran"); len(all) != 2 || all[0].FileName != "letter.txt" || all[1].FileName != "letter.txt" {
		t.Errorf("Oyelaran: %+v", all)
	}
	// A phrase, a prefix and a boolean query, as FTS5 reads them.
	if hits := searchHits(t, "--home", home, `"kickoff notes"`); len(hits) == 0 || hits[0].FileName != "notes.md" {
		t.Errorf("phrase: %+v", hits)
	}
	if hits := searchHits(t, "--home", home, "Oyel*"); len(hits) == 0 || hits[0].FileName != "letter.txt" {
		t.Errorf("prefix: %+v", hits)
	}
	if hits := searchHits(t, "--home", home, "Oyelaran NOT Zürich"); len(hits) != 0 {
		t.Errorf("NOT: %+v", hits)
	}
	// What the analyzer found is searchable on its own.
	if hits := searchHits(t, "--home", home, "entities: 2024*"); len(hits) == 0 || hits[0].Field != "entities" {
		t.Errorf("entities: %+v", hits)
	}
	if hits := searchHits(t, "--home", home, "--project", "elsewhere", "Oyelaran"); len(hits) != 0 {
		t.Errorf("--project elsewhere: %+v", hits)
	}
	if hits := searchHits(t, "--home", home, "--pipeline", "docpipe", "--limit", "1", "2024"); len(hits) != 1 {
		t.Errorf("--limit 1: %d hits", len(hits))
	}

	// Through a pipeline that redacts it, the text is indexed as the
	// pipeline left it, and the redact stage's output is searchable.
	if hits := searchHits(t, "--home", home, "body: braendli"); len(hits) != 1 {
		t.Fatalf("the e-mail address in letter.txt: %+v", hits)
	}
	redact := filepath.Join("..", "..", "samples", "pipelines", "redact", "pipeline.yaml")
	if _, err := cli(t, "run", "--home", home, "--progress", "none", "--pipeline", redact, filepath.Join(docs, "letter.txt")); err != nil {
		t.Fatal(err)
	}
	if hits := searchHits(t, "--home", home, "--pipeline", "redact", "Oyelaran"); len(hits) == 0 || hits[0].Pipeline != "redact" {
		t.Errorf("--pipeline redact: %+v", hits)
	}
	if hits := searchHits(t, "--home", home, "--pipeline", "redact", "braendli"); len(hits) != 0 {
		t.Errorf("a redacted address is found: %+v", hits)
	}
	if hits := searchHits(t, "--home", home, "outputs: EMAIL"); len(hits) == 0 || hits[0].Pipeline != "redact" {
		t.Errorf("the redact stage's output is not searchable: %+v", hits)
	}
}

func TestSearchReindexRebuildsTheIndex(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	if _, err := cli(t, "run", "--home", home, "--progress", "none", filepath.Join(docs, "letter.txt")); err != nil {
		t.Fatal(err)
	}
	before := searchHits(t, "--home", home, "Oyelaran")
	out, err := cli(t, "search", "--home", home, "--reindex")
	if err != nil || out != "indexed 1 analyses\n" {
		t.Fatalf("reindex: %q, %v", out, err)
	}
	after := searchHits(t, "--home", home, "Oyelaran")
	if len(after) == 0 || len(after) != len(before) || after[0] != before[0] {
		t.Errorf("after reindex %+v, before %+v", after, before)
	}
}

func TestSearchUsageErrors(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	if _, err := cli(t, "run", "--home", home, "--progress", "none", filepath.Join(docs, "letter.txt")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"search", "--home", home, "a AND"}, `cannot search for "a AND": it ends where a word was expected`},
		{[]string{"search", "--home", home, `"open`}, "a quote is not closed"},
		{[]string{"search", "--home", home, "colour: red"}, `"colour" is not a field`},
		{[]string{"search", "--home", home}, "one QUERY"},
		{[]string{"search", "--home", home, "--table", "T", "x"}, "no search index on AWS"},
	} {
		_, stderr, code := cliAll(tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "SQL") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}
