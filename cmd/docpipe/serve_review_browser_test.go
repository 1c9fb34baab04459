package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// triagedPipeline classifies a document, waits for alice to review the
// classification, and publishes the category the review left.
const triagedPipeline = `name: triaged
description: Classify each document, have a person check the class, publish it.
stages:
  - name: segment_analyzer
    run: {builtin: segment_analyzer}
  - name: document_summarizer
    needs: [segment_analyzer]
    run: {builtin: document_summarizer}
  - name: classify
    label: Classification
    needs: [document_summarizer]
    run: {command: [python3, -c, "import json,sys; json.load(sys.stdin); print(json.dumps({'category': 'notes', 'confidence': 0.6, 'reason': 'headings and bullet lists, no parties or dates'}))"]}
  - name: check
    label: Check the classification
    needs: [classify]
    run: {review: {assign: [alice]}, due: 72h}
  - name: publish
    needs: [check, classify]
    run: {command: [python3, -c, "import json,sys; r=json.load(sys.stdin); c=json.load(open(r['inputs']['needs']['classify'])); print(json.dumps({'published_as': c['category']}))"]}
`

// TestServeReviewInBrowser drives a review through the dashboard in
// headless Chromium at 1280×800: a document parks on its review; the
// reviewer opens it from the queue, reads the summary and the
// classification as labelled fields (nothing scrolls sideways), sees an
// edit the pipeline cannot make refused beside its field, approves with
// an edited summary and category, and the stage after the review
// publishes the edited category.
func TestServeReviewInBrowser(t *testing.T) {
	browser := findChromium()
	if browser == "" {
		t.Skip("no Chromium binary found (apt-get install chromium, or set DOCPIPE_CHROMIUM)")
	}
	home := t.TempDir()
	file := filepath.Join(t.TempDir(), "pipeline.yaml")
	if err := os.WriteFile(file, []byte(triagedPipeline), 0o644); err != nil {
		t.Fatal(err)
	}
	want(t, 0, []string{"triaged@1 (new)"}, "pipeline", "apply", file, "--home", home)
	doc, _ := filepath.Abs("../../samples/docs/notes.md")
	shots := artifactDir(t)

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	f := &runFlags{app: &app{stdout: io.Discard, stderr: io.Discard, home: home, project: "default"}, concurrency: 2, pdf: "go", pipeline: "triaged@1"}
	base := startServe(ctx, t, f)
	tab := newTab(ctx, t, browser)
	console := watchConsole(t, tab)
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(tab, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	poll := func(what, expr string) {
		t.Helper()
		if _, err := chromedp.Run(tab, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
			got, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.querySelector('main').innerText`))
			t.Fatalf("%s: %v; the page shows:\n%s", what, err, got)
		}
	}
	shot := func(name string) {
		t.Helper()
		png, err := chromedp.Run(tab, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(shots, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	do("upload a document", chromedp.Navigate(base+"/upload"), chromedp.WaitVisible(chromedp.CSS("#upload")),
		chromedp.SetUploadFiles(chromedp.CSS("#files"), []string{doc}))
	poll("see it park on its review", `!!document.querySelector('#uploads .s-waiting_review')`)
	do("count it on the overview", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#live.on")))
	poll("overview count of waiting reviews", `document.querySelector('[data-count="waiting_review"]').textContent === '1'`)

	do("open the pipelines", chromedp.Navigate(base+"/pipelines"), chromedp.WaitVisible(chromedp.CSS("#pipelines")))
	fitsWidth(t, tab, "pipelines")
	shot("pipelines.png")
	do("open one pipeline", chromedp.Click(chromedp.CSS(`#pipelines a[href="/pipelines/triaged"]`)), chromedp.WaitVisible(chromedp.CSS("#versions")))
	fitsWidth(t, tab, "a pipeline")
	shot("pipeline.png")

	do("open the review queue", chromedp.Navigate(base+"/reviews"), chromedp.WaitVisible(chromedp.CSS("#reviews tr[data-id]")))
	if w, err := chromedp.Run(tab, chromedp.Evaluate[int](`window.innerWidth`)); err != nil || w != browserWidth {
		t.Fatalf("window %d px wide, want %d: %v", w, browserWidth, err)
	}
	fitsWidth(t, tab, "the review queue")
	do("type the reviewer's name", chromedp.SendKeys(chromedp.CSS("#reviewer"), "alice"))
	shot("reviews.png")
	attr, err := chromedp.Run(tab, chromedp.AttributeValue(chromedp.CSS("#reviews tr[data-id]"), "data-id"))
	if err != nil {
		t.Fatal(err)
	}
	id := attr.Value
	do("open the review from its row", chromedp.Click(chromedp.CSS(`#reviews tr[data-id] a.button`)), chromedp.WaitVisible(chromedp.CSS("#review #decision")))
	if name, err := chromedp.Run(tab, chromedp.Value(chromedp.CSS("#reviewer"))); err != nil || name != "alice" {
		t.Fatalf("the review page forgot the reviewer's name: %q, %v", name, err)
	}

	// Everything an approval may edit is on the page, labelled, filled in
	// with what the outputs hold, inside the window's width.
	fitsWidth(t, tab, "the review")
	fields, err := chromedp.Run(tab, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#review [data-edit]')).map((el) => {
		const r = el.getBoundingClientRect(), label = el.labels.length ? el.labels[0] : null;
		const lr = label ? label.getBoundingClientRect() : null;
		const shown = (b) => b.width > 0 && b.height > 0 && b.left >= 0 && b.right <= window.innerWidth;
		return el.name + '|' + (label ? label.textContent.trim() : '(no label)') + '|' + (shown(r) && shown(lr)) + '|' + el.value;
	})`))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, f := range fields {
		parts := strings.SplitN(f, "|", 4)
		got[parts[0]] = parts[1:]
		if parts[2] != "true" {
			t.Errorf("field %s or its label %q is not shown within the window", parts[0], parts[1])
		}
	}
	for name, want := range map[string][2]string{
		"summary":             {"Summary", ""},
		"classify.category":   {"category classify.category", "notes"},
		"classify.confidence": {"confidence classify.confidence", "0.6"},
		"classify.reason":     {"reason classify.reason", "headings and bullet lists, no parties or dates"},
	} {
		g, ok := got[name]
		switch {
		case !ok:
			t.Errorf("the review shows no field %s; it shows %q", name, fields)
		case g[0] != want[0]:
			t.Errorf("field %s is labelled %q, want %q", name, g[0], want[0])
		case want[1] != "" && g[2] != want[1]:
			t.Errorf("field %s holds %q, want the stage's %q", name, g[2], want[1])
		case name == "summary" && strings.TrimSpace(g[2]) == "":
			t.Error("the summary field is empty: the document's summary is not shown")
		}
	}
	if len(got) != 4 {
		t.Errorf("editable fields %q, want the summary and classify's three", fields)
	}
	shot("review.png")

	do("claim it", chromedp.Click(chromedp.CSS(`#decision button[data-action="claim"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#decision button[data-action="release"]`)))
	do("try an edit the pipeline cannot make", chromedp.SendKeys(chromedp.CSS("#other-edits"), "nosuch.field=1"),
		chromedp.Click(chromedp.CSS(`#decision button[data-action="approve"]`)))
	poll("see the server's error beside the field", `document.querySelector('[data-error-for="other-edits"]').textContent.includes('has no stage "nosuch"')`)
	if st, _ := chromedp.Run(tab, chromedp.Text(chromedp.CSS("#r-state"))); st != "claimed" {
		t.Fatalf("a refused edit changed the review: %q", st)
	}
	// Empty the fields as a reviewer selecting their text and typing over it.
	if _, err := chromedp.Run(tab, chromedp.Evaluate[bool](`['#other-edits', '[name="summary"]', '[name="classify.category"]'].every((sel) => (document.querySelector(sel).value = '') === '')`)); err != nil {
		t.Fatal(err)
	}
	do("edit the summary and the category, and approve",
		chromedp.SendKeys(chromedp.CSS(`[name="summary"]`), "Checked in the browser."),
		chromedp.SendKeys(chromedp.CSS(`[name="classify.category"]`), "contract"),
		chromedp.Click(chromedp.CSS(`#decision button[data-action="approve"]`)))
	poll("approval", `document.querySelector('#r-result').textContent === 'approved by alice'`)
	if msg, _ := chromedp.Run(tab, chromedp.Text(chromedp.CSS(`[data-error-for="other-edits"]`))); msg != "" {
		t.Errorf("the refused edit's error stayed after a good approval: %q", msg)
	}

	wf, _, _ := strings.Cut(id, ".")
	do("watch the analysis complete", chromedp.Navigate(base+"/analyses/"+wf), chromedp.WaitVisible(chromedp.CSS("#a-status.s-completed")))
	do("read the edited summary", chromedp.WaitVisible(chromedp.CSS("#summary blockquote, #summary strong")))
	summary, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS("#summary")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(summary, "Checked in the browser.") {
		t.Errorf("summary %q lacks the reviewer's edit", summary)
	}
	// The stage after the review read the category the reviewer set.
	want(t, 0, []string{`"published_as": "contract"`}, "show", wf, "--stage", "publish", "--home", home)
	want(t, 0, []string{"no reviews waiting"}, "review", "list", "--home", home)
	// The browser logs the refused approval's 400; nothing else may fail.
	errs := slices.DeleteFunc(console(), func(m string) bool {
		return strings.Contains(m, "status of 400") && strings.Contains(m, "/api/reviews/"+id+"/approve")
	})
	if len(errs) > 0 {
		t.Errorf("the pages wrote errors to the console:\n%s", strings.Join(errs, "\n"))
	}
}
