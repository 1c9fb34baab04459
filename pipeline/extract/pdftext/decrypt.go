package pdftext

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/ledongthuc/pdf"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/validate"

	"github.com/docpipe/docpipe/pipeline/steperr"
)

// The object library decrypts 128-bit RC4 (V2) and AES-128 (V4) itself,
// but derives 40-bit RC4 object keys from 16 instead of 10 bytes (garbage
// out) and has no AES-256 (V5). pdfcpu implements every revision of the
// standard security handler, so the files the library gets wrong or
// refuses are opened with it, rewritten without encryption in memory, and
// the result is handed to the library. Unencrypted files and the ones the
// library reads correctly never take this path. On 3,000 pages it costs
// under a second and 120 MB of allocation, next to several seconds and
// 410 MB for the extraction itself (BenchmarkDecrypt,
// BenchmarkPureGoEncrypted).

// libraryDecrypts reports whether the library's own decryption is right
// for a file it opened: no encryption, or a 128-bit V2/V4 key.
func libraryDecrypts(encrypt pdf.Value) bool {
	if encrypt.IsNull() {
		return true
	}
	v := encrypt.Key("V").Int64()
	return (v == 2 || v == 4) && encrypt.Key("Length").Int64() >= 128
}

// isEncryptionError reports whether the library refused a file because of
// an encryption revision it lacks. The library has no typed errors for
// this; its messages all name the encryption or the trailer /ID only
// encryption needs.
func isEncryptionError(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "encryption") || strings.Contains(msg, "missing ID in trailer")
}

// disableConfigDir stops pdfcpu from creating its configuration folder
// under the user's home, which may be read-only (Lambda) or shared. It is
// what the library's api.DisableConfigDir does; that package is not
// imported, for its start-up cost in every docpipe command (it compiles a
// pattern at init).
var disableConfigDir = sync.OnceFunc(func() { model.ConfigPath = "disable" })

// decrypt opens an encrypted PDF with the empty password, as viewers do,
// and returns the same document without encryption. A file that needs a password fails with
// PasswordProtectedError. The copy is about as large as the file, which
// the caller's file-size limit bounds.
func decrypt(ctx context.Context, rs io.ReadSeeker, size int64) ([]byte, error) {
	disableConfigDir()
	conf := model.NewDefaultConfiguration()
	conf.Cmd = model.DECRYPT
	conf.ValidationMode = model.ValidationRelaxed
	conf.Offline = true
	conf.UserPW, conf.OwnerPW = "", ""
	// Plain objects: the library inflates a whole object stream again for
	// every object it reads from one.
	conf.WriteObjectStream = false

	doc, err := pdfcpu.ReadWithContext(ctx, rs, conf)
	if err != nil {
		return nil, decryptError(ctx, err)
	}
	if err := validate.XRefTable(doc); err != nil {
		return nil, decryptError(ctx, err)
	}
	var buf bytes.Buffer
	buf.Grow(int(size))
	w := bufio.NewWriter(&buf)
	doc.Write.Writer = w
	if err := errors.Join(pdfcpu.WriteContext(doc), w.Flush()); err != nil {
		return nil, &steperr.InvalidDocumentError{Reason: fmt.Sprintf("cannot decrypt PDF: %v", err)}
	}
	return buf.Bytes(), nil
}

func decryptError(ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, pdfcpu.ErrWrongPassword):
		return &steperr.PasswordProtectedError{Reason: "PDF needs a user password"}
	case strings.Contains(err.Error(), "encryption"):
		return &steperr.UnsupportedFormatError{Reason: fmt.Sprintf("PDF encryption not supported by the pure-Go extractor (%v); install poppler-utils", err)}
	}
	return &steperr.InvalidDocumentError{Reason: fmt.Sprintf("cannot decrypt PDF: %v", err)}
}
