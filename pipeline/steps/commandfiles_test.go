package steps

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
)

// The files a command line names count by content when they are in the
// pipeline's folder, named relative to it or by absolute path; files
// elsewhere, and arguments that are no file, do not count.
func TestCommandFilesKey(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	write := func(path, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script, nested, outside := filepath.Join(dir, "tag.sh"), filepath.Join(dir, "lib", "x.py"), filepath.Join(elsewhere, "y.py")
	write(script, "echo one")
	write(nested, "print(1)")
	write(outside, "print(2)")
	st := pipeline.Stage{Name: "tag", Run: pipeline.RunSpec{Command: []string{"sh", "./tag.sh", nested, outside, "--flag", "../" + filepath.Base(elsewhere) + "/y.py"}}}
	key := func() string {
		k := pipeline.NewCacheKey(st, "test")
		commandFilesKey(k, st, dir)
		return k.Sum()
	}
	before := key()
	write(outside, "print(3)")
	if key() != before {
		t.Error("a file outside the pipeline's folder changed the key")
	}
	for _, edit := range []string{script, nested} {
		write(edit, "changed "+edit)
		if after := key(); after == before {
			t.Errorf("editing %s left the key as it was", edit)
		} else {
			before = after
		}
	}
	if key() != before {
		t.Error("the key changed with nothing edited")
	}
}
