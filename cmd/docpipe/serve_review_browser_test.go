package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestServeReviewInBrowser drives a review through the dashboard in
// headless Chromium: a document uploaded to a pipeline with a review stage
// parks; on the reviews page the reviewer types a name, approves with an
// edited summary, and the analysis completes with it.
func TestServeReviewInBrowser(t *testing.T) {
	browser := findChromium()
	if browser == "" {
		t.Skip("no Chromium binary found (apt-get install chromium, or set DOCPIPE_CHROMIUM)")
	}
	home := t.TempDir()
	file := filepath.Join(t.TempDir(), "pipeline.yaml")
	if err := os.WriteFile(file, []byte(reviewedPipeline), 0o644); err != nil {
		t.Fatal(err)
	}
	want(t, 0, []string{"reviewed@1 (new)"}, "pipeline", "apply", file, "--home", home)
	doc, _ := filepath.Abs("../../samples/docs/notes.md")
	shots := artifactDir(t)

	ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
	defer cancel()
	f := &runFlags{app: &app{stdout: io.Discard, stderr: io.Discard, home: home, project: "default"}, concurrency: 2, pdf: "go", pipeline: "reviewed@1"}
	base := startServe(ctx, t, f)
	tab := newTab(ctx, t, browser)
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(tab, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
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
	if _, err := chromedp.Run(tab, chromedp.Poll[bool](`!!document.querySelector('#uploads .s-waiting_review')`, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		got, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.querySelector('#uploads').innerText`))
		_, out, _ := cliAll("status", "--home", home)
		t.Fatalf("see it park on its review: %v; the page shows %q; status:\n%s", err, got, out)
	}
	do("count it on the overview", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#live.on")))
	if _, err := chromedp.Run(tab, chromedp.Poll[bool](`document.querySelector('[data-count="waiting_review"]').textContent === '1'`)); err != nil {
		t.Fatalf("overview count of waiting reviews: %v", err)
	}

	do("open the review queue", chromedp.Navigate(base+"/reviews"), chromedp.WaitVisible(chromedp.CSS("#reviews tr[data-id]")))
	attr, err := chromedp.Run(tab, chromedp.AttributeValue(chromedp.CSS("#reviews tr[data-id]"), "data-id"))
	if err != nil {
		t.Fatal(err)
	}
	id := attr.Value
	do("type the reviewer's name and claim it", chromedp.SendKeys(chromedp.CSS("#reviewer"), "alice"),
		chromedp.Click(chromedp.CSS(`#reviews button[data-action="claim"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#reviews button[data-action="release"]`)))
	if name, err := chromedp.Run(tab, chromedp.Value(chromedp.CSS("#reviewer"))); err != nil || name != "alice" {
		t.Fatalf("the page forgot the reviewer's name over its reload: %q, %v", name, err)
	}
	do("approve it with an edited summary",
		chromedp.SendKeys(chromedp.CSS("#reviews [name=summary]"), "Checked in the browser."),
		chromedp.Click(chromedp.CSS(`#reviews button[data-action="approve"]`)))
	if _, err := chromedp.Run(tab, chromedp.Poll[bool](`document.querySelector('#reviews .review-result').textContent === 'approved by alice'`)); err != nil {
		t.Fatalf("approval: %v", err)
	}
	shot("review-approved.png")

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
	shot("review-completed.png")
	want(t, 0, []string{"no reviews waiting"}, "review", "list", "--home", home)
}
