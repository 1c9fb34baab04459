package steps

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/driver/dirblob"
	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

func TestBuildManifest(t *testing.T) {
	got := BuildManifest(250, 100)
	want := []pipeline.Batch{{Batch: 1, From: 1, To: 100}, {Batch: 2, From: 101, To: 200}, {Batch: 3, From: 201, To: 250}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("BuildManifest = %v", got)
	}
	if len(BuildManifest(0, 100)) != 0 || len(BuildManifest(1, 0)) != 1 {
		t.Error("edge cases")
	}
}

func TestFailureReason(t *testing.T) {
	for _, tc := range []struct {
		in   *pipeline.CaughtError
		want string
	}{
		{nil, "failed (no error recorded)"},
		{&pipeline.CaughtError{Error: "InvalidDocumentError", Cause: "invalid document: file is empty"}, "invalid document: file is empty"},
		{&pipeline.CaughtError{Error: "States.Timeout", Cause: "Task timed out"}, "States.Timeout: Task timed out"},
		{&pipeline.CaughtError{Error: "TooLargeError", Cause: `{"errorMessage":"too large: 9 pages","errorType":"TooLargeError"}`}, "too large: 9 pages"},
		{&pipeline.CaughtError{Error: "InvalidDocumentError"}, "InvalidDocumentError"},
	} {
		if got := FailureReason(tc.in); got != tc.want {
			t.Errorf("FailureReason(%+v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// A source over the size limit is refused while downloading, before it can
// fill the disk.
func TestDownloadStopsAtTheSizeLimit(t *testing.T) {
	blobs, err := dirblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := blob.PutBytes(ctx, blobs, "p/d/source", make([]byte, 100)); err != nil {
		t.Fatal(err)
	}
	h := &handlers{Deps: Deps{Blobs: blobs, TempDir: t.TempDir(), Limits: extract.Limits{MaxFileBytes: 99}}}
	if _, _, err := h.tempFile(ctx, "p/d/source"); steperr.Name(err) != steperr.NameTooLarge {
		t.Fatalf("err = %v, want TooLargeError", err)
	}
	h.Limits.MaxFileBytes = 100
	path, cleanup, err := h.tempFile(ctx, "p/d/source")
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	if fi, err := os.Stat(path); err != nil || fi.Size() != 100 {
		t.Fatalf("downloaded %v, %v", fi, err)
	}
	if _, _, err := h.tempFile(ctx, "p/d/missing"); steperr.Name(err) != steperr.NameInvalidInput {
		t.Fatalf("missing source: err = %v", err)
	}
}

// A store of local files serves the source in place, with the same limit
// and the same error for a missing one as a download; any other store
// gets a private copy.
func TestSourceFileInPlaceOrCopied(t *testing.T) {
	blobs, err := dirblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := blob.PutBytes(ctx, blobs, "p/d/source", make([]byte, 100)); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	h := &handlers{Deps: Deps{Blobs: blobs, TempDir: tmp, Limits: extract.Limits{MaxFileBytes: 100}}}
	path, cleanup, err := h.sourceFile(ctx, "p/d/source")
	if err != nil {
		t.Fatal(err)
	}
	cleanup()
	if want := filepath.Join(blobs.Root(), "p", "d", "source"); path != want {
		t.Fatalf("source at %s, want the store's own file %s", path, want)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("cleanup removed the store's file: %v", err)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Fatalf("a copy was made: %v", entries)
	}
	h.Limits.MaxFileBytes = 99
	if _, _, err := h.sourceFile(ctx, "p/d/source"); steperr.Name(err) != steperr.NameTooLarge {
		t.Fatalf("over the limit: err = %v, want TooLargeError", err)
	}
	if _, _, err := h.sourceFile(ctx, "p/d/missing"); steperr.Name(err) != steperr.NameInvalidInput {
		t.Fatalf("missing source: err = %v", err)
	}

	h = &handlers{Deps: Deps{Blobs: struct{ blob.Store }{blobs}, TempDir: tmp, Limits: extract.Limits{MaxFileBytes: 100}}}
	path, cleanup, err = h.sourceFile(ctx, "p/d/source")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(path) != tmp {
		t.Fatalf("a remote store's source at %s, want a copy in %s", path, tmp)
	}
	cleanup()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the copy outlived cleanup: %v", err)
	}
}
