package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestRun(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "x.pdf")
	if err := run([]string{"-pages", "3", "-seed", "2", "-images", "1", "-encrypt", "aes-128", "-o", out}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil || !bytes.HasPrefix(data, []byte("%PDF-1.6")) || !bytes.Contains(data, []byte("/Encrypt")) {
		t.Fatalf("unexpected output (%v): %.40q", err, data)
	}
	if err := run([]string{"-encrypt", "rot13"}); err == nil {
		t.Error("unknown -encrypt accepted")
	}
}
