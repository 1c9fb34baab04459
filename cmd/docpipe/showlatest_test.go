package main

import (
	"strings"
	"testing"
)

// Given a document, show shows its latest workflow, the backfill's, and
// says which workflow it supersedes; the superseded one says by which.
func TestShowDocumentIsItsLatestWorkflow(t *testing.T) {
	t.Parallel()
	home, dir, docs := t.TempDir(), t.TempDir(), threeDocs(t)
	want(t, 0, []string{"cachex@1"}, "pipeline", "apply", cachePipeline(t, dir, "1", "one"), "--home", home)
	out, _ := cli(t, "run", "--pipeline", "cachex", "--json", "--progress", "none", "--home", home, docs)
	old := decodeLines[docResult](t, out)[0]
	want(t, 0, []string{"cachex@2"}, "pipeline", "apply", cachePipeline(t, dir, "1", "two"), "--home", home)
	out = want(t, 0, nil, "backfill", "--pipeline", "cachex@2", "--json", "--progress", "none", "--home", home)
	newID := ""
	for _, r := range decodeLines[docResult](t, out) {
		if strings.HasSuffix(old.File, r.File) {
			newID = r.WorkflowID
		}
	}
	if newID == "" {
		t.Fatalf("backfill --json has no line for %s:\n%s", old.File, out)
	}
	var shown struct {
		Workflow struct {
			DocumentID string `json:"document_id"`
		} `json:"workflow"`
	}
	decodeJSON(t, want(t, 0, nil, "show", "--json", "--home", home, old.WorkflowID), &shown)
	doc := shown.Workflow.DocumentID
	if doc == "" {
		t.Fatal("show --json names no document")
	}

	text := want(t, 0, nil, "show", "--home", home, doc)
	if !regexpLine(text, `^workflow\s+`+newID+`$`) || !regexpLine(text, `^supersedes\s+`+old.WorkflowID+`$`) {
		t.Errorf("show %s (a document) should show its latest workflow %s, which supersedes %s:\n%s", doc, newID, old.WorkflowID, text)
	}
	var latest struct {
		Workflow struct {
			ID         string `json:"id"`
			Supersedes string `json:"supersedes"`
		} `json:"workflow"`
	}
	decodeJSON(t, want(t, 0, nil, "show", "--json", "--home", home, doc), &latest)
	if latest.Workflow.ID != newID || latest.Workflow.Supersedes != old.WorkflowID {
		t.Errorf("show --json %s = workflow %+v, want %s superseding %s", doc, latest.Workflow, newID, old.WorkflowID)
	}
	if text := want(t, 0, nil, "show", "--home", home, old.WorkflowID); !regexpLine(text, `^superseded by\s+`+newID+`$`) {
		t.Errorf("show %s (the old workflow) should say it is superseded by %s:\n%s", old.WorkflowID, newID, text)
	}
	want(t, 1, []string{"no workflow or document"}, "show", "--home", home, "nosuchthing")
}
