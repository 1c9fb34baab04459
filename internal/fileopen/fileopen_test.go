package fileopen_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/docpipe/docpipe/internal/fileopen"
)

// The files it opens behave as os's: reads, writes, O_EXCL, errors that
// errors.Is recognises, directories.
func TestOpenFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	name := filepath.Join(dir, "a")
	f, err := fileopen.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o640)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("hello"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(name); err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("stat = %v, %v; want mode 0640", st, err)
	}
	if _, err := fileopen.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o640); !errors.Is(err, fs.ErrExist) {
		t.Errorf("O_EXCL on an existing file: %v, want fs.ErrExist", err)
	}
	if _, err := fileopen.Open(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
	r, err := fileopen.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil || string(b) != "hello" {
		t.Errorf("read %q, %v", b, err)
	}
	d, err := fileopen.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if names, err := d.Readdirnames(-1); err != nil || len(names) != 1 {
		t.Errorf("directory: %v, %v", names, err)
	}
}
