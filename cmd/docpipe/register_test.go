package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Files are staged and committed several at a time; files with the same
// bytes must still map onto one document, owned by the first of them in
// the folder's order, and the copies of the others must not be left
// behind in the blob store.
func TestRunSameBytesShareOneDocument(t *testing.T) {
	t.Parallel()
	dir, home := t.TempDir(), t.TempDir()
	const files, contents = 48, 4
	for i := range files {
		body := fmt.Sprintf("Letter of group %d.\n\nThe same words for every letter of the group.\n", i%contents)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f-%02d.txt", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := cli(t, "run", "--home", home, "--json", "--progress", "none", dir)
	if err != nil {
		t.Fatal(err)
	}
	results := decodeLines[docResult](t, out)
	if len(results) != files {
		t.Fatalf("%d results, want %d", len(results), files)
	}
	owner := map[int]string{} // group → workflow of its first file
	for i, r := range results {
		if want := fmt.Sprintf("f-%02d.txt", i); filepath.Base(r.File) != want {
			t.Fatalf("result %d is %s, want %s: results keep the folder's order", i, r.File, want)
		}
		if r.Status != "completed" {
			t.Errorf("%s: %s %s", r.File, r.Status, r.Error)
		}
		g := i % contents
		if i < contents {
			owner[g] = r.WorkflowID
			if r.Reused {
				t.Errorf("%s is the first of its bytes but reports reused", r.File)
			}
			continue
		}
		if r.WorkflowID != owner[g] || !r.Reused {
			t.Errorf("%s: workflow %s reused=%v, want %s reused", r.File, r.WorkflowID, r.Reused, owner[g])
		}
	}
	sources, err := filepath.Glob(filepath.Join(home, "blobs", "default", "*", "source"))
	if err != nil {
		t.Fatal(err)
	}
	if len(sources) != contents {
		t.Errorf("%d source copies in the blob store, want %d: %v", len(sources), contents, sources)
	}
}
