package main

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteIsReproducibleAndExecutable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "binary")
	content := []byte("\x7fELF not really, but bytes all the same")
	if err := os.WriteFile(bin, content, 0o600); err != nil {
		t.Fatal(err)
	}
	first, second := filepath.Join(dir, "a.zip"), filepath.Join(dir, "b.zip")
	for _, out := range []string{first, second} {
		if err := write(out, bin); err != nil {
			t.Fatal(err)
		}
	}
	a, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(second)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatal("two zips of the same binary differ")
	}
	fi, err := os.Stat(first)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("zip file mode = %v, want 0644", fi.Mode())
	}

	zr, err := zip.NewReader(bytes.NewReader(a), int64(len(a)))
	if err != nil {
		t.Fatal(err)
	}
	if len(zr.File) != 1 || zr.File[0].Name != "bootstrap" {
		t.Fatalf("entries = %v, want just bootstrap", zr.File)
	}
	f := zr.File[0]
	if f.Mode().Perm() != 0o755 || !f.Mode().IsRegular() {
		t.Errorf("mode = %v, want -rwxr-xr-x", f.Mode())
	}
	if !f.Modified.Equal(modTime) {
		t.Errorf("modified = %v, want %v", f.Modified, modTime)
	}
	rc, err := f.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	got, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, content) {
		t.Errorf("content = %q, want %q", got, content)
	}
}

func TestWriteMissingBinaryLeavesNoZip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "steps.zip")
	if err := write(out, filepath.Join(dir, "missing")); err == nil {
		t.Fatal("write of a missing binary succeeded")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("left behind %v", entries)
	}
}
