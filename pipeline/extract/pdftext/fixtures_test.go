package pdftext

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/steperr"
	"github.com/docpipe/docpipe/samples/gen/pdfgen"
)

var update = flag.Bool("update", false, "rewrite testdata fixtures from the generator")

// fixtures are the small PDFs under testdata, all made by pdfgen.
var fixtures = []struct {
	file  string
	opts  pdfgen.Options
	pages int    // expected units (0: an error is expected)
	err   string // expected ASL error name, per backend where they differ
	goErr string
}{
	{file: "text-4p.pdf", opts: pdfgen.Options{Pages: 4, Seed: 1, ImagePages: 1}, pages: 4},
	{file: "rc4-128-empty-password.pdf", opts: pdfgen.Options{Pages: 2, Seed: 2, Encrypt: &pdfgen.Encryption{Method: pdfgen.RC4_128}}, pages: 2},
	{file: "aes-128-empty-password.pdf", opts: pdfgen.Options{Pages: 2, Seed: 3, Encrypt: &pdfgen.Encryption{Method: pdfgen.AES_128}}, pages: 2},
	{file: "rc4-40-empty-password.pdf", opts: pdfgen.Options{Pages: 2, Seed: 4, Encrypt: &pdfgen.Encryption{Method: pdfgen.RC4_40}}, pages: 2},
	{file: "user-password.pdf", opts: pdfgen.Options{Pages: 2, Seed: 5, Encrypt: &pdfgen.Encryption{Method: pdfgen.AES_128, UserPassword: "secret"}},
		err: steperr.NamePasswordProtected, goErr: steperr.NamePasswordProtected},
	{file: "truncated.pdf", opts: pdfgen.Options{Pages: 4, Seed: 6, TruncateAt: 6000},
		err: steperr.NameInvalidDocument, goErr: steperr.NameInvalidDocument},
	{file: "cyclic-page-tree.pdf", opts: pdfgen.Options{Pages: 3, Seed: 7, CyclicPageTree: true}, pages: 3},
}

func TestFixturesUpToDate(t *testing.T) {
	t.Parallel()
	for _, f := range fixtures {
		var b bytes.Buffer
		if err := pdfgen.Write(&b, f.opts); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", f.file)
		if *update {
			if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, b.Bytes()) {
			t.Errorf("%s is missing or stale (%v): run go test ./pipeline/extract/pdftext -run Fixtures -update", path, err)
		}
	}
}

func TestFixtures(t *testing.T) {
	t.Parallel()
	if *update {
		t.Skip("testdata is being rewritten by TestFixturesUpToDate")
	}
	for name, x := range backends(t) {
		for _, f := range fixtures {
			t.Run(name+"/"+f.file, func(t *testing.T) {
				t.Parallel()
				us, err := x.Extract(context.Background(), filepath.Join("testdata", f.file), extract.Limits{})
				want := f.err
				if name == "go" {
					want = f.goErr
				}
				if got := steperr.Name(err); got != want || (err != nil && want == "") {
					t.Fatalf("error %v (%s), want %q", err, got, want)
				}
				if want == "" && len(us) != f.pages {
					t.Fatalf("got %d units, want %d", len(us), f.pages)
				}
			})
		}
	}
}
