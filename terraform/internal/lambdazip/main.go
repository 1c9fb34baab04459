// Command lambdazip writes a Lambda deployment zip holding one executable,
// stored as "bootstrap" (what the provided.al2023 runtime runs), with a fixed
// timestamp and mode so that the same binary always gives the same zip and
// Terraform's source_code_hash changes only when the code does.
//
//	lambdazip OUT.zip BINARY
package main

import (
	"archive/zip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// modTime is zip's epoch: any fixed time keeps the archive reproducible.
var modTime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: lambdazip OUT.zip BINARY")
		os.Exit(2)
	}
	if err := write(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "lambdazip:", err)
		os.Exit(1)
	}
}

// write creates out atomically: a failed run never leaves a partial zip for
// terraform to upload.
func write(out, binary string) error {
	src, err := os.Open(binary)
	if err != nil {
		return err
	}
	defer src.Close()
	tmp, err := os.CreateTemp(filepath.Dir(out), ".lambdazip-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	// CreateTemp makes the file private; a zip is an ordinary artifact.
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := archive(tmp, src); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), out)
}

// archive writes a zip with src as the executable entry "bootstrap".
func archive(w io.Writer, src io.Reader) error {
	zw := zip.NewWriter(w)
	hdr := &zip.FileHeader{Name: "bootstrap", Method: zip.Deflate, Modified: modTime}
	hdr.SetMode(0o755)
	f, err := zw.CreateHeader(hdr)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, src); err != nil {
		return err
	}
	return zw.Close()
}
