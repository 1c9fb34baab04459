package pdfbounds

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/samples/gen/hostile"
	"github.com/docpipe/docpipe/samples/gen/pdfgen"
)

func check(t *testing.T, write func(io.Writer) error) (int, error) {
	t.Helper()
	var b bytes.Buffer
	if err := write(&b); err != nil {
		t.Fatal(err)
	}
	return b.Len(), Check(bytes.NewReader(b.Bytes()), int64(b.Len()))
}

// Each bomb is refused, and the reason names the number that gave it away.
func TestCheckRefusesBombs(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(io.Writer) error
		want  string // %d is the file's size
	}{
		{"table offset", hostile.XrefOffsetBomb, "cross-reference table declares 900000005 objects in a %d-byte file"},
		{"trailer size", hostile.TrailerSizeBomb, "cross-reference table declares 2000000000 objects in a %d-byte file"},
		{"stream size", hostile.XrefStreamSizeBomb, "cross-reference stream declares 2000000000 objects in a %d-byte file"},
		{"stream index", hostile.XrefStreamIndexBomb, "cross-reference stream declares 900000007 objects in a %d-byte file"},
		{"empty rows", hostile.XrefStreamEmptyRowBomb, "has rows of no bytes (/W [0 0 0])"},
		{"row width", hostile.XrefStreamWidthBomb, "field width 1099511627776 (/W)"},
		{"loop", hostile.XrefLoop, "cross-reference sections form a loop"},
		{"predictor", hostile.PredictorBomb, "predictor declares /Columns 1099511627776 (at most 262144)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			size, err := check(t, tc.write)
			want := strings.Replace(tc.want, "%d", strconv.Itoa(size), 1)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("got %v, want an error saying %q", err, want)
			}
		})
	}
}

// Sound files pass: classic tables, cross-reference streams with object
// streams, incremental updates, encrypted files.
func TestCheckPassesSoundFiles(t *testing.T) {
	sound := map[string]func(io.Writer) error{
		"objstm":  func(w io.Writer) error { return hostile.ObjectStreamBomb(w, 1<<10, 3) },
		"content": func(w io.Writer) error { return hostile.ContentBomb(w, 1<<10) },
		"forms":   func(w io.Writer) error { return hostile.FormFanOut(w, 3) },
	}
	for name, write := range sound {
		if _, err := check(t, write); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	fixtures, _ := filepath.Glob("../testdata/*.pdf")
	if len(fixtures) == 0 {
		t.Fatal("no fixtures under ../testdata")
	}
	for _, path := range fixtures {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := Check(bytes.NewReader(data), int64(len(data))); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
}

// BenchmarkCheck measures the guard on a 1,000-page document: it reads
// the cross-reference chain and every byte of the file once.
func BenchmarkCheck(b *testing.B) {
	var buf bytes.Buffer
	if err := pdfgen.Write(&buf, pdfgen.Options{Pages: 1000, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if err := Check(bytes.NewReader(data), int64(len(data))); err != nil {
			b.Fatal(err)
		}
	}
}
