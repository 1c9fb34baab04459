package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// findChromium returns a Chromium or Chrome binary, or "".
func findChromium() string {
	if p := os.Getenv("DOCPIPE_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// artifactDir is where the browser test leaves its screenshots.
func artifactDir(t *testing.T) string {
	if d := os.Getenv("DOCPIPE_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// TestServeInBrowser drives the dashboard in headless Chromium: upload a
// good and a broken document through the page's file input, watch the
// good one complete without reloading, read one of its segments, find the
// broken one under Failed with its reason and re-run it.
func TestServeInBrowser(t *testing.T) {
	browser := findChromium()
	if browser == "" {
		t.Skip("no Chromium binary found (apt-get install chromium, or set DOCPIPE_CHROMIUM)")
	}
	good, _ := filepath.Abs("../../samples/docs/notes.md")
	bad, _ := filepath.Abs("../../samples/bad/empty.txt")
	shots := artifactDir(t)

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	f := &runFlags{app: &app{stdout: io.Discard, stderr: io.Discard, home: t.TempDir(), project: "default"}, concurrency: 2, pdf: "go"}
	base := startServe(ctx, t, f)
	tab := newTab(ctx, t, browser)
	console := watchConsole(t, tab)

	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(tab, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
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

	do("open the upload page", chromedp.Navigate(base+"/upload"), chromedp.WaitVisible(chromedp.CSS("#upload")))
	if limit := text("#upload .note"); !strings.Contains(limit, "512 MiB") {
		t.Errorf("upload page does not show the size limit: %q", limit)
	}
	if runs := text("#project-pipeline"); !strings.Contains(runs, "docpipe") {
		t.Errorf("upload page does not say which pipeline the project runs: %q", runs)
	}
	do("upload two files", chromedp.SetUploadFiles(chromedp.CSS("#files"), []string{good, bad}))
	do("see the good one complete without reloading", chromedp.WaitVisible(chromedp.CSS("#uploads .s-completed")))
	do("see the broken one fail", chromedp.WaitVisible(chromedp.CSS("#uploads .s-failed")))
	shot("upload.png")

	do("open the good analysis", chromedp.Click(chromedp.Search(`//table[@id="uploads"]//a[text()="notes.md"]`)),
		chromedp.WaitVisible(chromedp.CSS("#grid .cell.s-done")))
	if st := text("#a-status"); st != "completed" {
		t.Fatalf("analysis status %q", st)
	}
	do("read a segment", chromedp.Click(chromedp.CSS("#grid .cell")), chromedp.WaitVisible(chromedp.CSS("#segment")))
	if seg := text("#seg-text"); strings.TrimSpace(seg) == "" {
		t.Fatal("segment text is empty")
	}
	do("see the summary", chromedp.WaitVisible(chromedp.CSS("#summary blockquote, #summary strong")))
	shot("analysis.png")

	do("open Failed", chromedp.Navigate(base+"/failed"), chromedp.WaitVisible(chromedp.CSS("#failed .reason")))
	if reason := text("#failed .reason"); !strings.Contains(reason, "empty") {
		t.Fatalf("failed reason %q does not say why", reason)
	}
	do("re-run it", chromedp.Click(chromedp.CSS("#failed button.rerun")), chromedp.WaitVisible(chromedp.CSS("#failed button.rerun[disabled]")))
	if _, err := chromedp.Run(tab, chromedp.Poll[bool](`document.querySelector('#failed .rerun-result').textContent.startsWith('re-running')`)); err != nil {
		t.Fatalf("re-run result: %v (%q)", err, text("#failed .rerun-result"))
	}
	shot("failed.png")

	do("open the overview", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#live.on")))
	do("find the finished analysis under Recent", chromedp.WaitVisible(chromedp.CSS("#recent .s-completed")))
	if row := text("#recent tbody"); !strings.Contains(row, "notes.md") {
		t.Errorf("recent analyses lack notes.md: %q", row)
	}
	shot("overview.png")

	fitsWidth(t, tab, "overview")
	do("filter Recent", chromedp.Navigate(base+"/?status=completed#recent-title"), chromedp.WaitVisible(chromedp.CSS("#recent .s-completed")))
	fitsWidth(t, tab, "recent")
	shot("recent.png")

	do("open Projects", chromedp.Navigate(base+"/projects"), chromedp.WaitVisible(chromedp.CSS(`#projects tr[data-project="default"]`)))
	fitsWidth(t, tab, "projects")
	shot("projects.png")
	do("open a project", chromedp.Click(chromedp.CSS(`#projects tr[data-project="default"] a`)), chromedp.WaitVisible(chromedp.CSS("#documents")))
	if errs := console(); len(errs) > 0 {
		t.Errorf("the pages wrote errors to the console:\n%s", strings.Join(errs, "\n"))
	}
	t.Logf("screenshots in %s", shots)
}

// watchConsole collects what the tab's pages write to the console as
// errors (a resource that failed to load, an uncaught exception) from now
// on; the returned func reads them so far.
func watchConsole(t *testing.T, tab context.Context) func() []string {
	t.Helper()
	if err := chromedp.Do(tab); err != nil { // the target must exist to be heard
		t.Fatal(err)
	}
	messages := chromedp.Console(tab)
	var mu sync.Mutex
	var errs []string
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				mu.Lock()
				errs = append(errs, m.String()+" ("+m.URL+")")
				mu.Unlock()
			}
		}
	}()
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(errs)
	}
}

// fitsWidth fails the test when the page scrolls sideways in the window.
func fitsWidth(t *testing.T, tab context.Context, page string) {
	t.Helper()
	widths, err := chromedp.Run(tab, chromedp.Evaluate[[]int](`[document.documentElement.scrollWidth, window.innerWidth]`))
	if err != nil {
		t.Fatalf("%s: %v", page, err)
	}
	if widths[0] > widths[1] {
		t.Errorf("%s scrolls sideways: %d px wide in a %d px window", page, widths[0], widths[1])
	}
}

// startServe runs serve on a free loopback port until ctx ends or the test
// does, and returns its base URL. Cleanup waits (boundedly) for it to stop.
func startServe(ctx context.Context, t *testing.T, f *runFlags) string {
	t.Helper()
	srvCtx, stop := context.WithCancel(ctx)
	addrc := make(chan string, 1)
	served := make(chan error, 1)
	go func() {
		served <- serve(srvCtx, f, "127.0.0.1:0", serveAuth{}, tlsFiles{}, func(a string) { addrc <- a })
	}()
	select {
	case a := <-addrc:
		t.Cleanup(func() {
			stop()
			select {
			case err := <-served:
				if err != nil {
					t.Errorf("serve: %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Error("serve did not stop within 30s of its context ending")
			}
		})
		return "http://" + a
	case err := <-served:
		stop()
		t.Fatalf("serve: %v", err)
		return ""
	}
}

// The window the browser tests (and the README's screenshots) use: a
// common laptop screen.
const browserWidth, browserHeight = 1280, 800

// newTab starts a headless Chromium with flags that keep it off the
// network and returns a tab; both end with ctx or the test.
func newTab(ctx context.Context, t *testing.T, browser string) context.Context {
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(browser), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(browserWidth, browserHeight),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("disable-extensions", true))
	t.Cleanup(cancelAlloc)
	tab, cancelTab := chromedp.NewContext(alloc)
	t.Cleanup(cancelTab)
	// The window's own frame takes from its height: the page gets exactly
	// the screen's size.
	if err := chromedp.Do(tab, chromedp.EmulateViewport(browserWidth, browserHeight)); err != nil {
		t.Fatal(err)
	}
	return tab
}
