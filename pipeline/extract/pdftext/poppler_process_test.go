package pdftext

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/steperr"
	"github.com/docpipe/docpipe/samples/gen/pdfgen"
)

// toolsOnly puts a PATH in place that holds the real pdftotext and, as
// pdfinfo and sh, scripts that log their call and fail, and returns the
// log's path.
func toolsOnly(t *testing.T) string {
	t.Helper()
	real, err := exec.LookPath("pdftotext")
	if err != nil {
		t.Skip("pdftotext not installed")
	}
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls.log")
	if err := os.Symlink(real, filepath.Join(dir, "pdftotext")); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"pdfinfo", "sh"} {
		script := fmt.Sprintf("#!/bin/sh\necho %s >> %s\nexit 1\n", tool, calls)
		if err := os.WriteFile(filepath.Join(dir, tool), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir)
	return calls
}

// A small PDF costs one process: its page count is read here, and
// pdftotext is started directly, with no pdfinfo and no shell.
func TestPopplerSmallDocumentIsOneProcess(t *testing.T) {
	path, texts := generate(t, pdfgen.Options{Pages: 3, Seed: 5})
	calls := toolsOnly(t)
	x := NewPoppler()
	n, err := x.Pages(context.Background(), path)
	if err != nil || n != 3 {
		t.Fatalf("Pages = %d, %v; want 3", n, err)
	}
	us, err := x.Extract(context.Background(), path, extract.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if log, _ := os.ReadFile(calls); len(log) > 0 {
		t.Fatalf("small document ran %q", log)
	}
	if len(us) != 3 {
		t.Fatalf("got %d units, want 3", len(us))
	}
	for i, u := range us {
		if a := agreement(texts[i], u.Text); a < 0.99 {
			t.Errorf("page %d: word agreement %.3f", i+1, a)
		}
	}
}

// A file the in-process count cannot read falls back to pdfinfo, which
// gives the reason: here a cross-reference table that names object
// 900,000,000 in a file of 200 bytes (a reader that sized its table by
// it would take the process down).
func TestPopplerHostileCrossReference(t *testing.T) {
	t.Parallel()
	if !PopplerAvailable() {
		t.Skip("pdftotext/pdfinfo not installed")
	}
	body := "%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [] /Count 1 >> endobj\n"
	body += fmt.Sprintf("xref\n900000000 1\n0000000009 00000 n \ntrailer << /Size 3 /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(body))
	path := filepath.Join(t.TempDir(), "xref.pdf")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := claimedPages(context.Background(), path); ok {
		t.Fatal("an unreadable page tree was counted in process")
	}
	_, err := NewPoppler().Extract(context.Background(), path, extract.Limits{})
	var invalid *steperr.InvalidDocumentError
	if !errors.As(err, &invalid) || !strings.Contains(invalid.Reason, "pdftotext") {
		t.Fatalf("error = %v, want an InvalidDocumentError that names what failed", err)
	}
}

// objectStreamTreePDF writes a one-page PDF whose page tree root lives in
// an object stream, behind pad bytes of padding that inflate from almost
// nothing.
func objectStreamTreePDF(t *testing.T, pad int) string {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("%PDF-1.5\n")
	offsets := map[int]int{}
	object := func(n int, body string) {
		offsets[n] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", n, body)
	}
	object(1, "<< /Type /Catalog /Pages 2 0 R >>")
	object(3, "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>")
	object(4, stream("BT /F1 12 Tf 72 700 Td (Hello from an object stream) Tj ET"))
	object(5, helvetica)
	var packed bytes.Buffer
	zw := zlib.NewWriter(&packed)
	header := fmt.Sprintf("2 %d ", pad)
	io.WriteString(zw, header)
	io.WriteString(zw, strings.Repeat(" ", pad))
	io.WriteString(zw, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>")
	zw.Close()
	offsets[6] = b.Len()
	fmt.Fprintf(&b, "6 0 obj\n<< /Type /ObjStm /N 1 /First %d /Filter /FlateDecode /Length %d >>\nstream\n", len(header), packed.Len())
	b.Write(packed.Bytes())
	b.WriteString("\nendstream\nendobj\n")
	xref := b.Len()
	var rows bytes.Buffer
	row := func(typ byte, field2 uint32, field3 uint16) {
		rows.WriteByte(typ)
		rows.Write(binary.BigEndian.AppendUint32(nil, field2))
		rows.Write(binary.BigEndian.AppendUint16(nil, field3))
	}
	row(0, 0, 65535)
	row(1, uint32(offsets[1]), 0)
	row(2, 6, 0) // object 2: the first object of stream 6
	for n := 3; n <= 6; n++ {
		row(1, uint32(offsets[n]), 0)
	}
	row(1, uint32(xref), 0)
	fmt.Fprintf(&b, "7 0 obj\n<< /Type /XRef /Size 8 /W [1 4 2] /Root 1 0 R /Length %d >>\nstream\n", rows.Len())
	b.Write(rows.Bytes())
	fmt.Fprintf(&b, "\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", xref)
	path := filepath.Join(t.TempDir(), "objstm.pdf")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A small file whose page tree sits in an object stream, behind padding
// that inflates to 64 MB, is counted by pdfinfo, under its memory limit,
// rather than in this process, and extracted as any other.
func TestPopplerCountsObjectStreamTreesOutOfProcess(t *testing.T) {
	if !PopplerAvailable() {
		t.Skip("pdftotext/pdfinfo not installed")
	}
	size := 64 << 20
	if testing.Short() {
		size = 36 << 20 // still more than counting it may allocate
	}
	path := objectStreamTreePDF(t, size)
	if fi, err := os.Stat(path); err != nil || fi.Size() > countInProcessMaxBytes {
		t.Fatalf("the file is not small: %v", err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, ok := claimedPages(context.Background(), path)
	runtime.ReadMemStats(&after)
	if ok {
		t.Error("a page tree in an object stream was counted in process")
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
		t.Errorf("trying to count it allocated %d MB", alloc>>20)
	}
	us, err := NewPoppler().Extract(context.Background(), path, extract.Limits{})
	if err != nil || len(us) != 1 || us[0].Text != "Hello from an object stream" {
		t.Fatalf("Extract = %+v, %v", us, err)
	}
}

// Poppler's tools get none of docpipe's environment beyond what a program
// needs to run: no credentials.
func TestPopplerToolsGetNoCredentials(t *testing.T) {
	dir := t.TempDir()
	seen := filepath.Join(dir, "env.txt")
	script := fmt.Sprintf("#!/bin/sh\nenv > %s\necho 'Pages: 1'\n", seen)
	if err := os.WriteFile(filepath.Join(dir, "pdfinfo"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("AWS_SECRET_ACCESS_KEY", "do-not-pass")
	if n, err := NewPoppler().pdfinfoPages(context.Background(), "doc.pdf"); err != nil || n != 1 {
		t.Fatalf("pdfinfo: %d pages, %v", n, err)
	}
	env, err := os.ReadFile(seen)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(env), "do-not-pass") {
		t.Errorf("pdfinfo was given the credentials:\n%s", env)
	}
	if !strings.Contains(string(env), "PATH="+dir) {
		t.Errorf("pdfinfo was not given PATH:\n%s", env)
	}
}
