// Command make (re)creates the sample documents in samples/docs/ and the bad
// inputs in samples/bad/. Every file is written by this program, byte for
// byte the same on every run, except scan.png, which pdftoppm renders from a
// PDF written here (poppler-utils must be installed).
//
//	go run ./samples/make            # from the repository root
//	go run ./samples/make -out DIR
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

func main() {
	out := flag.String("out", "samples", "directory to write the samples into")
	flag.Parse()
	if err := write(context.Background(), *out); err != nil {
		fmt.Fprintln(os.Stderr, "samples:", err)
		os.Exit(1)
	}
}

// write generates every sample into dir.
func write(ctx context.Context, dir string) error {
	files, err := build()
	if err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, files[name], 0o644); err != nil {
			return err
		}
	}
	return renderScan(ctx, dir)
}
