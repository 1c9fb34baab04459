package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline/export"
)

func TestExportJSONLinesHasEveryDocumentsSegments(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	if _, err := cli(t, "run", "--home", home, "--progress", "none", filepath.Join(docs, "notes.md"), filepath.Join(docs, "shipment-log.pdf")); err != nil {
		t.Fatal(err)
	}
	out, err := cli(t, "export", "--home", home)
	if err != nil {
		t.Fatal(err)
	}
	rows := decodeLines[export.Row](t, out)
	byFile := map[string][]export.Row{}
	for _, r := range rows {
		byFile[r.FileName] = append(byFile[r.FileName], r)
		if r.DocumentID == "" || r.WorkflowID == "" || r.Pipeline != "docpipe@1" || !strings.HasPrefix(r.FileURI, "file://") || r.CompletedAt.IsZero() || r.HeadingPath == nil {
			t.Errorf("row %+v", r)
		}
		if r.Text != "" && len(r.Outputs["analysis"]) == 0 {
			t.Errorf("%s segment %d has no analysis output", r.FileName, r.Segment)
		}
	}
	notes, pdf := byFile["notes.md"], byFile["shipment-log.pdf"]
	if len(notes) != 4 || notes[1].Kind != "section" || notes[1].Segment != 2 || strings.Join(notes[1].HeadingPath, "/") != "Decisions" ||
		!strings.Contains(notes[1].Text, "4 November 2024") {
		t.Errorf("notes.md: %+v", notes)
	}
	if len(pdf) < 2 || pdf[0].Kind != "page" || pdf[0].Segment != 1 || pdf[1].Segment != 2 {
		t.Errorf("shipment-log.pdf: %d rows, first %+v", len(pdf), pdf[0])
	}

	// Chunks: none crosses a document, each names its segments.
	out, err = cli(t, "export", "--home", home, "--chunk-tokens", "120", "--overlap", "20")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range decodeLines[export.Row](t, out) {
		if c.Chunk == 0 || len(c.Segments) == 0 || c.Tokens > 120 || c.Tokens != export.Tokens(c.Text) || c.Segment != 0 {
			t.Errorf("chunk %+v", c)
		}
		if c.FileName == "notes.md" && len(c.Segments) != 1 {
			t.Errorf("a notes.md chunk spans sections %v", c.Segments)
		}
	}

	// Without --project every project is exported; with it, one.
	if _, err := cli(t, "run", "--home", home, "--progress", "none", "--project", "other", filepath.Join(docs, "letter.txt")); err != nil {
		t.Fatal(err)
	}
	out, err = cli(t, "export", "--home", home)
	if err != nil {
		t.Fatal(err)
	}
	if all := decodeLines[export.Row](t, out); len(all) != len(rows)+1 || all[len(all)-1].ProjectID != "other" {
		t.Errorf("every project: %d rows, want %d", len(all), len(rows)+1)
	}
	out, err = cli(t, "export", "--home", home, "--project", "other")
	if only := decodeLines[export.Row](t, out); err != nil || len(only) != 1 || only[0].FileName != "letter.txt" {
		t.Errorf("--project other: %+v, %v", only, err)
	}

	// Filters: another pipeline, and later than now, export nothing.
	for _, args := range [][]string{{"--pipeline", "redact"}, {"--since", "2999-01-01"}, {"--project", "elsewhere"}} {
		out, err := cli(t, append([]string{"export", "--home", home}, args...)...)
		if err != nil || out != "" {
			t.Errorf("export %v: %q, %v", args, out, err)
		}
	}
	if out, err := cli(t, "export", "--home", home, "--pipeline", "docpipe@1", "--since", "24h"); err != nil || len(decodeLines[export.Row](t, out)) != len(rows)+1 {
		t.Errorf("docpipe@1 of the last day: %v", err)
	}
}

func TestExportMarkdownAndPartitionedFiles(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	if _, err := cli(t, "run", "--home", home, "--progress", "none", filepath.Join(docs, "notes.md")); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "out") + "/"
	if _, err := cli(t, "export", "--home", home, "--format", "markdown", "--out", dir); err != nil {
		t.Fatal(err)
	}
	mds, _ := filepath.Glob(filepath.Join(dir, "project=default", "date=*", "*.md"))
	if len(mds) != 1 {
		t.Fatalf("markdown files: %v", mds)
	}
	md, _ := os.ReadFile(mds[0])
	for _, want := range []string{"# notes.md\n", "pipeline=docpipe@1", "<!-- section 2 -->\n\nDecisions\n", "<!-- section 4 -->"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}

	jdir := t.TempDir()
	if _, err := cli(t, "export", "--home", home, "--out", jdir); err != nil {
		t.Fatal(err)
	}
	parts, _ := filepath.Glob(filepath.Join(jdir, "project=default", "date=*", "part-*-00001.jsonl"))
	if len(parts) != 1 {
		t.Fatalf("parts: %v", parts)
	}
	raw, _ := os.ReadFile(parts[0])
	if n := len(decodeLines[export.Row](t, string(raw))); n != 4 {
		t.Errorf("%d rows in %s, want 4", n, parts[0])
	}

	file := filepath.Join(t.TempDir(), "rows.jsonl")
	if _, err := cli(t, "export", "--home", home, "--out", file); err != nil {
		t.Fatal(err)
	}
	if raw, _ := os.ReadFile(file); len(decodeLines[export.Row](t, string(raw))) != 4 {
		t.Errorf("%s: %q", file, raw)
	}
}

func TestExportUsageAndHelp(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"export", "--home", home, "--format", "csv"}, "choose jsonl or markdown"},
		{[]string{"export", "--home", home, "--overlap", "5"}, "give --chunk-tokens too"},
		{[]string{"export", "--home", home, "--chunk-tokens", "10", "--overlap", "10"}, "must be less than"},
		{[]string{"export", "--home", home, "--since", "yesterday"}, "--since"},
		{[]string{"export", "--home", home, "--pipeline", "x@0"}, "a number from 1"},
		{[]string{"export", "--home", home, "--format", "markdown", "--out", filepath.Join(home, "f.md")}, "names a directory"},
		{[]string{"help", "nosuch"}, `no help topic "nosuch"`},
	} {
		_, stderr, code := cliAll(tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	stdout, _, code := cliAll("help", "export")
	if code != 0 || !strings.Contains(stdout, "docpipe export [flags]") || !strings.Contains(stdout, "--chunk-tokens") {
		t.Errorf("help export: exit %d\n%s", code, stdout)
	}
}
