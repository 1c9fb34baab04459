package dirblob_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/blob/blobtest"
	"github.com/docpipe/docpipe/pipeline/driver/dirblob"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	blobtest.Exercise(t, func(t *testing.T) blob.Store {
		s, err := dirblob.New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// A temporary file left by a crashed writer never shows in List.
func TestListSkipsTempFiles(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	s, err := dirblob.New(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := blob.PutBytes(ctx, s, "p/a", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "p", `\tmp-crashed`), []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	infos, err := s.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 1 || infos[0].Key != "p/a" {
		t.Fatalf("List = %+v, want only p/a", infos)
	}
}

// Delete prunes the folders it empties, so the directory does not fill with
// empty folders of deleted workflows.
func TestDeletePrunesEmptyDirs(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	s, err := dirblob.New(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, k := range []string{"p/d/w/segments/000001/text", "p/other"} {
		if err := blob.PutBytes(ctx, s, k, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Delete(ctx, "p/d/w/segments/000001/text"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "p", "d")); !os.IsNotExist(err) {
		t.Fatalf("p/d still exists: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "p", "other")); err != nil {
		t.Fatalf("p/other gone: %v", err)
	}
	entries, _ := os.ReadDir(root)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != "p" {
		t.Fatalf("root holds %v, want [p]", names)
	}
}

// A directory cannot hold a key that is both an object and a folder; such a
// Put fails cleanly and leaves the existing object alone.
func TestObjectFolderConflict(t *testing.T) {
	t.Parallel()
	s, err := dirblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := blob.PutBytes(ctx, s, "a/b", []byte("object")); err != nil {
		t.Fatal(err)
	}
	if err := blob.PutBytes(ctx, s, "a/b/c", []byte("below")); err == nil {
		t.Fatal("Put below an object succeeded")
	}
	if err := blob.PutBytes(ctx, s, "a", []byte("over a folder")); err == nil {
		t.Fatal("Put over a folder succeeded")
	}
	if err := s.Delete(ctx, "a"); err != nil {
		t.Fatalf("Delete of a folder name: %v", err)
	}
	got, err := blob.GetBytes(ctx, s, "a/b", 0)
	if err != nil || string(got) != "object" {
		t.Fatalf("a/b = %q, %v", got, err)
	}
	infos, err := s.List(ctx, "")
	if err != nil || len(infos) != 1 {
		t.Fatalf("List = %+v, %v; want only a/b", infos, err)
	}
}

func TestNewRejectsEmptyRoot(t *testing.T) {
	t.Parallel()
	if _, err := dirblob.New(""); err == nil {
		t.Fatal("New(\"\") succeeded")
	}
}

// Put does not sync; Flush syncs once for every Put before it, and not
// again while nothing new was written.
func TestFlushSyncsWrittenObjects(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	s, err := dirblob.New(root)
	if err != nil {
		t.Fatal(err)
	}
	var syncs atomic.Int64
	dirblob.SetSyncHook(s, func(r string) error {
		if r != s.Root() {
			t.Errorf("synced %s, want the store's root %s", r, s.Root())
		}
		syncs.Add(1)
		return nil
	})
	ctx := context.Background()
	if err := s.Flush(ctx); err != nil || syncs.Load() != 0 {
		t.Fatalf("Flush of an untouched store: err %v, %d syncs, want none", err, syncs.Load())
	}
	for i := range 5 {
		if err := blob.PutBytes(ctx, s, fmt.Sprintf("w/%d", i), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if n := syncs.Load(); n != 0 {
		t.Fatalf("Put synced %d times, want 0", n)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n := syncs.Load(); n != 1 {
		t.Fatalf("two Flushes after five Puts synced %d times, want 1", n)
	}
	if err := blob.PutBytes(ctx, s, "w/late", []byte("y")); err != nil {
		t.Fatal(err)
	}
	if err := blob.Flush(ctx, s); err != nil {
		t.Fatal(err)
	}
	if n := syncs.Load(); n != 2 {
		t.Fatalf("a Put after the last Flush: %d syncs in all, want 2", n)
	}
}

// A failed sync is reported, and the next Flush tries again.
func TestFlushRetriesFailedSync(t *testing.T) {
	t.Parallel()
	s, err := dirblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fail := errors.New("disk gone")
	calls := 0
	dirblob.SetSyncHook(s, func(string) error {
		calls++
		if calls == 1 {
			return fail
		}
		return nil
	})
	ctx := context.Background()
	if err := blob.PutBytes(ctx, s, "a", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); !errors.Is(err, fail) {
		t.Fatalf("Flush = %v, want the sync's error", err)
	}
	if err := s.Flush(ctx); err != nil || calls != 2 {
		t.Fatalf("second Flush: err %v after %d syncs, want a second sync that succeeds", err, calls)
	}
}

// countingStore returns a store in a new directory whose syncs are only
// counted.
func countingStore(t *testing.T) (*dirblob.Store, *atomic.Int64) {
	t.Helper()
	s, err := dirblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	syncs := new(atomic.Int64)
	dirblob.SetSyncHook(s, func(string) error { syncs.Add(1); return nil })
	return s, syncs
}

// Concurrent Flushes share syncs: never more syncs than Flush calls that
// found something new, and every Put is covered once all have returned.
func TestConcurrentFlushesShareSyncs(t *testing.T) {
	t.Parallel()
	s, syncs := countingStore(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			if err := blob.PutBytes(ctx, s, fmt.Sprintf("c/%d", i), []byte("x")); err != nil {
				t.Error(err)
			}
			if err := s.Flush(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := syncs.Load(); n < 1 || n > 16 {
		t.Fatalf("%d syncs for 16 flushing writers", n)
	}
	before := syncs.Load()
	if err := s.Flush(ctx); err != nil || syncs.Load() != before {
		t.Fatalf("Flush after every writer flushed synced again (err %v)", err)
	}
}

// Under a write mark, Flush covers what was Put under that mark: nothing
// to sync when nothing was written under it, or when a sync since covered
// it; a Put under another mark, or under none, does not make it sync.
func TestFlushUnderWriteMark(t *testing.T) {
	t.Parallel()
	s, syncs := countingStore(t)
	ctx := context.Background()
	idle, busy, other := blob.WithWriteMark(ctx), blob.WithWriteMark(ctx), blob.WithWriteMark(ctx)

	if err := blob.PutBytes(other, s, "other/1", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(idle); err != nil || syncs.Load() != 0 {
		t.Fatalf("Flush under a mark nothing was written under: err %v, %d syncs, want none", err, syncs.Load())
	}
	if err := blob.PutBytes(busy, s, "busy/1", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := blob.PutBytes(other, s, "other/2", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(busy); err != nil || syncs.Load() != 1 {
		t.Fatalf("Flush after a Put under its mark: err %v, %d syncs, want 1", err, syncs.Load())
	}
	// That sync covered other's writes too.
	if err := s.Flush(other); err != nil || syncs.Load() != 1 {
		t.Fatalf("Flush of writes a sync covered: err %v, %d syncs, want still 1", err, syncs.Load())
	}
	if err := blob.PutBytes(ctx, s, "unmarked", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(busy); err != nil || syncs.Load() != 1 {
		t.Fatalf("Flush under a mark after someone else's Put: err %v, %d syncs, want still 1", err, syncs.Load())
	}
	// Without a mark, Flush covers every Put.
	if err := s.Flush(ctx); err != nil || syncs.Load() != 2 {
		t.Fatalf("Flush without a mark after an unsynced Put: err %v, %d syncs, want 2", err, syncs.Load())
	}
}

// Keys in new directories, many at once and two to a directory, are all
// stored (a key under an object is TestObjectFolderConflict's).
func TestPutMakesDirectories(t *testing.T) {
	t.Parallel()
	s, err := dirblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 64 {
		wg.Go(func() {
			// Pairs of writers share each new page directory.
			errs <- blob.PutBytes(ctx, s, fmt.Sprintf("p/w/segments/%06d/text-%d.txt", i/2, i%2), []byte{byte(i)})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	list, err := s.List(ctx, "p/w/segments/")
	if err != nil || len(list) != 64 {
		t.Fatalf("listed %d objects, %v; want 64", len(list), err)
	}
}
