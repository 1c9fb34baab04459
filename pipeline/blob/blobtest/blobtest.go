// Package blobtest is the conformance suite every blob.Store driver runs:
// directory and S3 alike pass the same tests, speaking only through the
// interface.
package blobtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline/blob"
)

// Exercise runs the suite. newStore is called once per subtest; the store
// may be shared with other subtests (one bucket), so every subtest works
// under its own unique prefix.
func Exercise(t *testing.T, newStore func(t *testing.T) blob.Store) {
	t.Helper()
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, s blob.Store, p string)
	}{
		{"PutGet", testPutGet},
		{"EmptyObject", testEmptyObject},
		{"Overwrite", testOverwrite},
		{"Head", testHead},
		{"Missing", testMissing},
		{"Delete", testDelete},
		{"List", testList},
		{"InvalidKeys", testInvalidKeys},
		{"LargeStream", testLargeStream},
		{"AtomicReplace", testAtomicReplace},
		{"FailedPutKeepsOld", testFailedPutKeepsOld},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, newStore(t), uniquePrefix())
		})
	}
}

// uniquePrefix keeps concurrent subtests (and runs on a shared bucket) apart.
func uniquePrefix() string {
	var b [6]byte
	rand.Read(b[:])
	return fmt.Sprintf("blobtest-%d-%x/", time.Now().UnixNano(), b)
}

func ctx(t *testing.T) context.Context { return t.Context() }

func mustPut(t *testing.T, s blob.Store, key string, b []byte) {
	t.Helper()
	if err := blob.PutBytes(ctx(t), s, key, b); err != nil {
		t.Fatalf("Put %s: %v", key, err)
	}
}

func mustGet(t *testing.T, s blob.Store, key string) []byte {
	t.Helper()
	b, err := blob.GetBytes(ctx(t), s, key, 0)
	if err != nil {
		t.Fatalf("Get %s: %v", key, err)
	}
	return b
}

func listKeys(t *testing.T, s blob.Store, prefix string) []string {
	t.Helper()
	infos, err := s.List(ctx(t), prefix)
	if err != nil {
		t.Fatalf("List %q: %v", prefix, err)
	}
	keys := make([]string, len(infos))
	for i, in := range infos {
		keys[i] = in.Key
	}
	return keys
}

func testPutGet(t *testing.T, s blob.Store, p string) {
	key := p + "doc/segments/000001/text.txt"
	want := []byte("héllo, wörld\n\x00binary\xff")
	mustPut(t, s, key, want)
	if got := mustGet(t, s, key); !bytes.Equal(got, want) {
		t.Fatalf("Get = %q, want %q", got, want)
	}
}

func testEmptyObject(t *testing.T, s blob.Store, p string) {
	key := p + "empty"
	mustPut(t, s, key, nil)
	if got := mustGet(t, s, key); len(got) != 0 {
		t.Fatalf("Get = %q, want empty", got)
	}
	info, err := s.Head(ctx(t), key)
	if err != nil || info.Size != 0 {
		t.Fatalf("Head = %+v, %v; want size 0", info, err)
	}
}

func testOverwrite(t *testing.T, s blob.Store, p string) {
	key := p + "x.json"
	mustPut(t, s, key, []byte(`{"v":1, "long": "first version is longer"}`))
	mustPut(t, s, key, []byte(`{"v":2}`))
	if got := string(mustGet(t, s, key)); got != `{"v":2}` {
		t.Fatalf("Get after overwrite = %q", got)
	}
	if keys := listKeys(t, s, p); len(keys) != 1 {
		t.Fatalf("List after overwrite = %v, want one key", keys)
	}
}

func testHead(t *testing.T, s blob.Store, p string) {
	key := p + "h/obj.bin"
	before := time.Now().Add(-time.Minute)
	mustPut(t, s, key, bytes.Repeat([]byte("ab"), 1000))
	info, err := s.Head(ctx(t), key)
	if err != nil {
		t.Fatalf("Head: %v", err)
	}
	if info.Key != key || info.Size != 2000 {
		t.Fatalf("Head = %+v, want key %s size 2000", info, key)
	}
	// A minute of slack covers clock skew against a remote store.
	if info.Modified.Before(before) || info.Modified.After(time.Now().Add(time.Minute)) {
		t.Fatalf("Head modified %v is not about now", info.Modified)
	}
}

func testMissing(t *testing.T, s blob.Store, p string) {
	mustPut(t, s, p+"file", []byte("x"))
	for _, key := range []string{p + "nope", p + "file/below", p + "dir/nope"} {
		if _, err := s.Get(ctx(t), key); !errors.Is(err, blob.ErrNotFound) {
			t.Errorf("Get %s: err = %v, want ErrNotFound", key, err)
		}
		if _, err := s.Head(ctx(t), key); !errors.Is(err, blob.ErrNotFound) {
			t.Errorf("Head %s: err = %v, want ErrNotFound", key, err)
		}
	}
	// A "folder" is not an object.
	mustPut(t, s, p+"dir/inner", []byte("x"))
	if _, err := s.Get(ctx(t), p+"dir"); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("Get of a folder: err = %v, want ErrNotFound", err)
	}
}

func testDelete(t *testing.T, s blob.Store, p string) {
	key := p + "a/b/c"
	mustPut(t, s, key, []byte("x"))
	mustPut(t, s, p+"a/keep", []byte("y"))
	for range 2 { // the second delete is of a missing key
		if err := s.Delete(ctx(t), key); err != nil {
			t.Fatalf("Delete: %v", err)
		}
	}
	if _, err := s.Get(ctx(t), key); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("Get after Delete: err = %v, want ErrNotFound", err)
	}
	if keys := listKeys(t, s, p); strings.Join(keys, ",") != p+"a/keep" {
		t.Fatalf("List after Delete = %v, want only %s", keys, p+"a/keep")
	}
	// The key can be written again after its folder was emptied.
	mustPut(t, s, key, []byte("z"))
	if got := string(mustGet(t, s, key)); got != "z" {
		t.Fatalf("Get after re-put = %q", got)
	}
	if err := s.Delete(ctx(t), p+"never/was"); err != nil {
		t.Fatalf("Delete of a missing key: %v", err)
	}
}

func testList(t *testing.T, s blob.Store, p string) {
	// No key is both an object and a folder: a directory store cannot hold
	// that, and docpipe's layout never needs it.
	keys := []string{
		"a/bb", "a.txt", "a/b2/c", "a/b/c/d", "b", "a-z", "seg/000010", "seg/000002", "seg/000100",
	}
	for _, k := range keys {
		mustPut(t, s, p+k, []byte(k))
	}
	// Byte order: "-" (0x2d) < "." (0x2e) < "/" (0x2f) < "2" < "b".
	check := func(prefix string, want ...string) {
		t.Helper()
		got := listKeys(t, s, p+prefix)
		for i := range want {
			want[i] = p + want[i]
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("List(%q) = %v, want %v", prefix, got, want)
		}
	}
	check("", "a-z", "a.txt", "a/b/c/d", "a/b2/c", "a/bb", "b", "seg/000002", "seg/000010", "seg/000100")
	check("a", "a-z", "a.txt", "a/b/c/d", "a/b2/c", "a/bb")
	check("a/", "a/b/c/d", "a/b2/c", "a/bb")
	check("a/b", "a/b/c/d", "a/b2/c", "a/bb")
	check("a/b/", "a/b/c/d")
	check("seg/", "seg/000002", "seg/000010", "seg/000100")
	check("seg/0000", "seg/000002", "seg/000010")
	check("zzz")
	check("none/")

	infos, err := s.List(ctx(t), p+"a.txt")
	if err != nil || len(infos) != 1 || infos[0].Size != int64(len("a.txt")) {
		t.Errorf("List sizes = %+v, %v", infos, err)
	}
}

func testInvalidKeys(t *testing.T, s blob.Store, p string) {
	bad := []string{"", "/abs", p + "a//b", p + "a/", p + "a/../b", p + "./a", p + "a/.", p + `a\b`, p + "a\x00b", ".."}
	for _, key := range bad {
		if err := blob.PutBytes(ctx(t), s, key, []byte("x")); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("Put %q: err = %v, want ErrInvalidKey", key, err)
		}
		if _, err := s.Get(ctx(t), key); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("Get %q: err = %v, want ErrInvalidKey", key, err)
		}
		if _, err := s.Head(ctx(t), key); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("Head %q: err = %v, want ErrInvalidKey", key, err)
		}
		if err := s.Delete(ctx(t), key); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("Delete %q: err = %v, want ErrInvalidKey", key, err)
		}
	}
	for _, prefix := range []string{"/abs", "a//", "../", `a\`} {
		if _, err := s.List(ctx(t), prefix); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("List %q: err = %v, want ErrInvalidKey", prefix, err)
		}
	}
}

// patternReader yields n deterministic bytes without holding them in memory.
type patternReader struct{ off, n int64 }

func (r *patternReader) Read(p []byte) (int, error) {
	if r.off >= r.n {
		return 0, io.EOF
	}
	k := int64(len(p))
	if k > r.n-r.off {
		k = r.n - r.off
	}
	for i := int64(0); i < k; i++ {
		p[i] = byte((r.off + i) % 251)
	}
	r.off += k
	return int(k), nil
}

func testLargeStream(t *testing.T, s blob.Store, p string) {
	const size = 6<<20 + 123 // above S3's multipart threshold
	key := p + "large.bin"
	if err := s.Put(ctx(t), key, &patternReader{n: size}); err != nil {
		t.Fatalf("Put: %v", err)
	}
	rc, err := s.Get(ctx(t), key)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	defer rc.Close()
	want := &patternReader{n: size}
	buf, wbuf := make([]byte, 64<<10), make([]byte, 64<<10)
	var total int64
	for {
		n, err := io.ReadFull(rc, buf)
		if n > 0 {
			if _, werr := io.ReadFull(want, wbuf[:n]); werr != nil || !bytes.Equal(buf[:n], wbuf[:n]) {
				t.Fatalf("content differs at offset %d", total)
			}
			total += int64(n)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			t.Fatalf("read: %v", err)
		}
	}
	if total != size {
		t.Fatalf("read %d bytes, want %d", total, size)
	}
}

// testAtomicReplace races writers of distinct full contents against readers:
// every read sees one whole version, never a mix or a partial file.
func testAtomicReplace(t *testing.T, s blob.Store, p string) {
	key := p + "contended"
	version := func(i int) []byte { return bytes.Repeat([]byte{byte('a' + i)}, 64<<10) }
	mustPut(t, s, key, version(0))
	var wg sync.WaitGroup
	for w := 1; w <= 4; w++ {
		wg.Go(func() {
			for range 5 {
				if err := blob.PutBytes(ctx(t), s, key, version(w)); err != nil {
					t.Errorf("Put: %v", err)
					return
				}
			}
		})
	}
	for range 2 {
		wg.Go(func() {
			for range 20 {
				b, err := blob.GetBytes(ctx(t), s, key, 0)
				if err != nil {
					t.Errorf("Get: %v", err)
					return
				}
				if len(b) != 64<<10 || !bytes.Equal(b, bytes.Repeat(b[:1], len(b))) {
					t.Errorf("read a torn object of %d bytes", len(b))
					return
				}
			}
		})
	}
	wg.Wait()
	if keys := listKeys(t, s, p); len(keys) != 1 || keys[0] != key {
		t.Fatalf("List after concurrent puts = %v, want only %s", keys, key)
	}
}

type failingReader struct{ n int }

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, errors.New("source broke")
	}
	k := min(len(p), r.n)
	for i := range k {
		p[i] = 'x'
	}
	r.n -= k
	return k, nil
}

// testFailedPutKeepsOld: a put whose source fails leaves the old object and
// no stray entries.
func testFailedPutKeepsOld(t *testing.T, s blob.Store, p string) {
	key := p + "keep"
	mustPut(t, s, key, []byte("old"))
	if err := s.Put(ctx(t), key, &failingReader{n: 1000}); err == nil {
		t.Fatal("Put from a failing reader succeeded")
	}
	if got := string(mustGet(t, s, key)); got != "old" {
		t.Fatalf("Get after failed Put = %q, want old", got)
	}
	if err := s.Put(ctx(t), p+"new", &failingReader{n: 10}); err == nil {
		t.Fatal("Put from a failing reader succeeded")
	}
	if keys := listKeys(t, s, p); len(keys) != 1 || keys[0] != key {
		t.Fatalf("List after failed Puts = %v, want only %s", keys, key)
	}
}
