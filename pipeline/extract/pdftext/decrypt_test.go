package pdftext

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/steperr"
	"github.com/docpipe/docpipe/samples/gen/pdfgen"
)

// generateAES256 writes a pdfgen document encrypted with AES-256, which
// pdfgen does not write, and returns its path and page texts. rev is 5
// (the Acrobat 9 extension) or 6 (ISO 32000-2). pdfcpu writes R6 only into
// PDF 2.0 documents, so for R6 the source is marked 2.0 and the result
// marked 1.7 again, the way qpdf and Acrobat write R6 files; both header
// edits keep every byte offset.
func generateAES256(t testing.TB, opts pdfgen.Options, userPassword string, rev int) (string, []string) {
	t.Helper()
	plain, texts := generate(t, opts)
	src, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	if rev == 6 {
		src = setHeader(t, src, "%PDF-2.0")
	}
	disableConfigDir()
	var out bytes.Buffer
	if err := api.Encrypt(bytes.NewReader(src), &out, model.NewAESConfiguration(userPassword, "owner", 256)); err != nil {
		t.Fatal(err)
	}
	enc := out.Bytes()
	if rev == 6 {
		enc = setHeader(t, enc, "%PDF-1.7")
	}
	if !bytes.Contains(enc, []byte("/V 5")) || !bytes.Contains(enc, []byte(fmt.Sprintf("/R %d", rev))) {
		t.Fatalf("encrypted copy is not V5/R%d", rev)
	}
	path := filepath.Join(t.TempDir(), "aes256.pdf")
	if err := os.WriteFile(path, enc, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, texts
}

func setHeader(t testing.TB, data []byte, header string) []byte {
	t.Helper()
	if !bytes.HasPrefix(data, []byte("%PDF-")) || len(data) < len(header) {
		t.Fatalf("not a PDF header: %.10q", data)
	}
	return append([]byte(header), data[len(header):]...)
}

func TestAES256UserPassword(t *testing.T) {
	t.Parallel()
	for _, rev := range []int{5, 6} {
		path, _ := generateAES256(t, pdfgen.Options{Pages: 2, Seed: 12}, "secret", rev)
		for name, x := range backends(t) {
			t.Run(fmt.Sprintf("R%d/%s", rev, name), func(t *testing.T) {
				t.Parallel()
				_, err := x.Extract(context.Background(), path, extract.Limits{})
				wantErr[*steperr.PasswordProtectedError](t, err)
			})
		}
	}
}

func TestPureGoUnsupportedSecurityHandler(t *testing.T) {
	t.Parallel()
	path, _ := generate(t, pdfgen.Options{Pages: 1, Seed: 13, Encrypt: &pdfgen.Encryption{Method: pdfgen.RC4_128}})
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Same length, so the xref offsets stay right.
	data = bytes.Replace(data, []byte("/Filter /Standard"), []byte("/Filter /Unknown_"), 1)
	if !bytes.Contains(data, []byte("/Unknown_")) {
		t.Fatal("generator's encryption dictionary has no /Filter /Standard")
	}
	p := filepath.Join(t.TempDir(), "unknown-handler.pdf")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = NewPureGo().Extract(context.Background(), p, extract.Limits{})
	wantErr[*steperr.UnsupportedFormatError](t, err)
	if !strings.Contains(err.Error(), "encryption") {
		t.Errorf("reason %q does not name the encryption", err)
	}
}
