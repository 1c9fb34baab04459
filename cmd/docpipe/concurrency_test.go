package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// --concurrency weighs documents by size for every command that offers
// it: `docpipe work --concurrency 1` runs three small documents at once,
// as `docpipe run` does (each holds its slot share in the held stage
// until HOLD goes).
func TestWorkWeighsSmallDocumentsLikeRun(t *testing.T) {
	t.Parallel()
	home, dir := t.TempDir(), t.TempDir()
	marks, hold := filepath.Join(dir, "marks"), filepath.Join(dir, "hold")
	if err := os.Mkdir(marks, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hold, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "held.yaml")
	src := strings.NewReplacer("MARKS", marks, "HOLD", hold).Replace(heldPipeline)
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	input := t.TempDir()
	for i := range 3 {
		if err := os.WriteFile(filepath.Join(input, fmt.Sprintf("doc%d.txt", i)), []byte(fmt.Sprintf("Small document %d.\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want(t, 0, []string{"held@1"}, "pipeline", "apply", file, "--home", home)
	want(t, 0, []string{"pending"}, "ingest", "--no-start", "--home", home, "--pipeline", "held@1", input)

	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := cli(t, "work", "--home", home, "--concurrency", "1", "--progress", "none")
		done <- result{out, err}
	}()
	deadline := time.Now().Add(time.Minute)
	for {
		entries, _ := os.ReadDir(marks)
		if len(entries) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("%d of 3 small documents ran at once under --concurrency 1", len(entries))
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := os.Remove(hold); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if n := strings.Count(r.out, " completed"); n != 3 {
		t.Errorf("work completed %d of 3:\n%s", n, r.out)
	}
}
