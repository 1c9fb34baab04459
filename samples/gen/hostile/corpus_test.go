package hostile

import (
	"os"
	"testing"
)

// Every file of the corpus is written, at a small scale, and is not empty.
func TestCorpusWrites(t *testing.T) {
	dir := t.TempDir()
	for _, f := range Corpus(1.0 / 64) {
		path, err := f.WriteFile(dir)
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
			t.Fatalf("%s: %v, %v", f.Name, fi, err)
		}
	}
}
