package pdftext

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline/steperr"
)

// A page of pdftotext's output past the character limit fails as too
// large, whatever its bytes; pages under it come back whole, form feed
// included.
func TestReadPageBoundsCharacters(t *testing.T) {
	out := strings.Repeat("é", 10) + "\f" + strings.Repeat("x", 11) + "\f" + "tail"
	r := bufio.NewReaderSize(strings.NewReader(out), 16)
	page, err := readPage(r, 10)
	if err != nil || page != strings.Repeat("é", 10)+"\f" {
		t.Fatalf("first page = %q, %v", page, err)
	}
	_, err = readPage(r, 10)
	var tooLarge *steperr.TooLargeError
	if !errors.As(err, &tooLarge) {
		t.Fatalf("a page of 11 characters over a limit of 10: %v", err)
	}
	r = bufio.NewReaderSize(strings.NewReader("last page"), 16)
	if page, err := readPage(r, 10); page != "last page" || !errors.Is(err, io.EOF) {
		t.Fatalf("an unterminated last page = %q, %v", page, err)
	}
}
