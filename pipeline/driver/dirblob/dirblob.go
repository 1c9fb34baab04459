// Package dirblob implements blob.Store on a directory: the key "a/b/c" is
// the file <root>/a/b/c. Puts are atomic: the bytes go to a temporary file
// in the same directory, which is renamed over the key.
//
// Durability is batched. A Put does not fsync: once it returns, its bytes
// are in the page cache and survive a crash of the process (even SIGKILL),
// and only a power cut or a kernel crash can lose them. Flush (blob.Syncer)
// makes every object Put before the call durable with one syncfs(2) of the
// store's filesystem, shared by the callers that flush at the same time;
// under a write mark (blob.WithWriteMark) it covers the objects Put under
// that mark, so a step that wrote nothing, or whose writes a sync begun
// for another step covered, does not sync again.
// The step runtime flushes once before it records a step completed, so "a
// step recorded completed ⇒ its blobs are durable" holds as it did when
// every Put synced its file and directory, at a fraction of the syncs: a
// document's steps write about a dozen objects. syncfs also writes back
// other processes' dirty data on the same filesystem; a store on a disk
// shared with heavy writers pays for theirs too, which is still fewer
// device flushes than two fsyncs per object.
package dirblob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/docpipe/docpipe/internal/fileopen"
	"github.com/docpipe/docpipe/pipeline/blob"
)

// tempMark starts every temporary file name. Valid keys never contain a
// backslash, so no key can name a temporary file and List can skip them.
const tempMark = `\tmp-`

// Store is a blob.Store on a directory. Safe for concurrent use, also by
// several processes sharing the directory.
type Store struct {
	root string

	// written counts completed Puts, in the order they completed; syncs
	// shares the filesystem syncs that make them durable among Flushes.
	written atomic.Uint64
	syncs   groupSync
	syncFS  func(root string) error
}

var (
	_ blob.Store      = (*Store)(nil)
	_ blob.Syncer     = (*Store)(nil)
	_ blob.LocalFiler = (*Store)(nil)
)

// New returns a store rooted at root, creating the directory if needed.
func New(root string) (*Store, error) {
	if root == "" {
		return nil, errors.New("dirblob: empty root")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("dirblob: %w", err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("dirblob: %w", err)
	}
	syncFS, err := filesystemSyncer(abs)
	if err != nil {
		return nil, fmt.Errorf("dirblob: %w", err)
	}
	return &Store{root: abs, syncFS: syncFS}, nil
}

// Root returns the store's directory.
func (s *Store) Root() string { return s.root }

func (s *Store) path(key string) string {
	return filepath.Join(s.root, filepath.FromSlash(key))
}

// Put stores r's bytes under key, replacing any object atomically.
func (s *Store) Put(ctx context.Context, key string, r io.Reader) error {
	if err := blob.ValidateKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	dst := s.path(key)
	tmp, err := s.createTemp(filepath.Dir(dst))
	if err != nil {
		return fmt.Errorf("dirblob: put %s: %w", key, err)
	}
	committed := false
	defer func() {
		if !committed {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	buf := copyBuffers.Get().(*[]byte)
	_, err = io.CopyBuffer(writerOnly{tmp}, ctxReader{ctx, r}, *buf)
	copyBuffers.Put(buf)
	if err != nil {
		return fmt.Errorf("dirblob: put %s: %w", key, err)
	}
	// No fsync here: Flush makes the file and the rename durable together
	// with every other Put since the last one (see the package comment).
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("dirblob: put %s: %w", key, err)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return fmt.Errorf("dirblob: put %s: %w", key, err)
	}
	committed = true
	blob.NoteWrite(ctx, s.written.Add(1))
	return nil
}

// Flush makes every object Put before the call durable; under a write
// mark (blob.WithWriteMark), every object Put under that mark. Callers
// flushing at the same time share one sync (see groupSync); a Flush with
// nothing new to sync returns at once.
func (s *Store) Flush(ctx context.Context) error {
	target := s.written.Load()
	if seq, marked := blob.WrittenUnder(ctx); marked {
		target = seq
	}
	if s.syncs.isSynced(target) {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// A Put is counted in written once renamed, so a sync that began at a
	// count covers every Put the count includes.
	if err := s.syncs.await(ctx, target, s.written.Load, func() error { return s.syncFS(s.root) }); err != nil {
		return fmt.Errorf("dirblob: flush: %w", err)
	}
	return nil
}

// createTemp makes a temporary file in dir, creating dir when it is
// missing (also when a concurrent Delete pruned it a moment ago).
func (s *Store) createTemp(dir string) (*os.File, error) {
	var err error
	for range 5 {
		var f *os.File
		f, err = fileopen.OpenFile(filepath.Join(dir, tempMark+strconv.FormatUint(rand.Uint64(), 36)), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		switch {
		case err == nil:
			return f, nil
		case errors.Is(err, fs.ErrExist):
			continue // another writer drew the same name
		case !errors.Is(err, fs.ErrNotExist):
			return nil, err
		}
		if err = makeDir(dir); err != nil {
			return nil, err
		}
	}
	return nil, err
}

// makeDir creates dir, and its parents when they are missing too. A new
// key's directory usually has its parent already (a page's directory
// under segments/): one mkdir then does it, where os.MkdirAll would first
// stat the directory and its parent.
func makeDir(dir string) error {
	err := os.Mkdir(dir, 0o755)
	switch {
	case err == nil, errors.Is(err, fs.ErrExist):
		return nil // made, or made by a concurrent Put; a file there fails the open
	case errors.Is(err, fs.ErrNotExist):
		return os.MkdirAll(dir, 0o755)
	}
	return err
}

// copyBuffers lends Put its copy buffer. io.Copy into an *os.File would
// take a fresh 32 KiB for every object (File.ReadFrom falls back to a
// plain copy for a source that is not a file): with a dozen small
// objects per document that was a third of all the bytes docpipe
// allocated on many small documents.
var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// writerOnly hides the file's ReadFrom from io.CopyBuffer, so that the
// lent buffer is the one used.
type writerOnly struct{ io.Writer }

// ctxReader stops a long copy when the context is cancelled.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// Get opens the object under key; the caller closes it.
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	if err := blob.ValidateKey(key); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := fileopen.Open(s.path(key))
	if err != nil {
		return nil, interpretError(key, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, interpretError(key, err)
	}
	if st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("dirblob: %s: %w", key, blob.ErrNotFound)
	}
	return f, nil
}

// LocalFile returns the file holding key, for readers that need a file;
// Put replaces it by renaming, so a reader holding it open keeps reading
// the bytes it opened.
func (s *Store) LocalFile(ctx context.Context, key string) (string, blob.Info, error) {
	info, err := s.Head(ctx, key)
	if err != nil {
		return "", blob.Info{}, err
	}
	return s.path(key), info, nil
}

// Head describes the object under key.
func (s *Store) Head(ctx context.Context, key string) (blob.Info, error) {
	if err := blob.ValidateKey(key); err != nil {
		return blob.Info{}, err
	}
	if err := ctx.Err(); err != nil {
		return blob.Info{}, err
	}
	st, err := os.Stat(s.path(key))
	if err != nil {
		return blob.Info{}, interpretError(key, err)
	}
	if st.IsDir() {
		return blob.Info{}, fmt.Errorf("dirblob: %s: %w", key, blob.ErrNotFound)
	}
	return blob.Info{Key: key, Size: st.Size(), Modified: st.ModTime()}, nil
}

// interpretError maps filesystem errors onto the blob sentinels.
func interpretError(key string, err error) error {
	// ENOTDIR: a parent of the key is a file, so the key cannot exist.
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return fmt.Errorf("dirblob: %s: %w", key, blob.ErrNotFound)
	}
	return fmt.Errorf("dirblob: %s: %w", key, err)
}

// List returns every object whose key starts with prefix, in key order.
func (s *Store) List(ctx context.Context, prefix string) ([]blob.Info, error) {
	if err := blob.ValidatePrefix(prefix); err != nil {
		return nil, err
	}
	// Walk only the deepest directory the prefix pins down.
	start := s.root
	if i := strings.LastIndex(prefix, "/"); i >= 0 {
		start = s.path(prefix[:i])
	}
	var out []blob.Info
	err := filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				return nil // pruned by a concurrent Delete, or nothing there
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() || strings.HasPrefix(d.Name(), tempMark) {
			return nil
		}
		rel, err := filepath.Rel(s.root, p)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		if !strings.HasPrefix(key, prefix) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // deleted while listing
			}
			return err
		}
		out = append(out, blob.Info{Key: key, Size: info.Size(), Modified: info.ModTime()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("dirblob: list %q: %w", prefix, err)
	}
	// Directory walks order "a/b" before "a.txt"; key order is byte order.
	slices.SortFunc(out, func(a, b blob.Info) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// Delete removes the object under key and prunes directories it leaves
// empty. A missing key is not an error.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := blob.ValidateKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	p := s.path(key)
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		return nil // a "folder" of other keys, not an object
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
		return fmt.Errorf("dirblob: delete %s: %w", key, err)
	}
	// os.Remove fails on a non-empty directory, so pruning stops at the
	// first directory still in use.
	for dir := filepath.Dir(p); dir != s.root && strings.HasPrefix(dir, s.root); dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil {
			break
		}
	}
	return nil
}
