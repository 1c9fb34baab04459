// Package pdfbounds refuses, before any PDF reader sees them, files whose
// structure declares sizes out of all proportion to the file: a
// cross-reference table of billions of objects in a few hundred bytes,
// rows a terabyte wide. Readers size tables and buffers from these
// numbers up front (github.com/ledongthuc/pdf allocates its whole
// cross-reference table, and a PNG predictor's row, from them), and an
// allocation that large ends the process with "out of memory", which no
// recover catches.
//
// A file whose numbers are plausible passes, whether or not it is a
// sound PDF: telling what is wrong with it is the readers' job.
package pdfbounds

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
)

// ObjectLimit is the most objects a file of size bytes can plausibly
// hold. A classic cross-reference entry alone takes 20 bytes; objects
// packed in object streams take less, but no producer packs an object
// with its cross-reference entry into under a few bytes. The slack covers
// small files with sparse numbering or a sloppy /Size.
func ObjectLimit(size int64) int64 { return size/2 + 1<<16 }

// Predictor rows: Columns samples of up to 16 bits in Colors components.
// The widest real images are tens of thousands of pixels.
const (
	MaxColumns = 1 << 18
	MaxColors  = 32
)

// maxSections bounds the chain of cross-reference sections (one per
// incremental update).
const maxSections = 4096

// Check reads the cross-reference sections of the PDF in r (size bytes)
// and the predictor parameters of its streams, and returns an error
// saying which number is implausible, or nil.
func Check(r io.ReaderAt, size int64) error {
	if err := checkXref(r, size); err != nil {
		return err
	}
	return checkPredictors(r, size)
}

// section is what one cross-reference section declares.
type section struct {
	extent int64 // highest object number it lists, plus one
	size   int64 // its /Size, or -1
	next   []int64
}

func checkXref(r io.ReaderAt, size int64) error {
	start, ok := startxref(r, size)
	if !ok {
		return nil // no cross-reference: the readers say so themselves
	}
	limit := ObjectLimit(size)
	tooMany := func(what string, n int64) error {
		return fmt.Errorf("pdf: %s declares %d objects in a %d-byte file", what, n, size)
	}
	seen := map[int64]bool{}
	queue := []int64{start}
	for len(queue) > 0 {
		off := queue[0]
		queue = queue[1:]
		if seen[off] {
			return fmt.Errorf("pdf: cross-reference sections form a loop at byte %d", off)
		}
		if len(seen) >= maxSections {
			return fmt.Errorf("pdf: more than %d cross-reference sections", maxSections)
		}
		seen[off] = true
		if off < 0 || off >= size {
			return fmt.Errorf("pdf: cross-reference section at byte %d is outside the %d-byte file", off, size)
		}
		sec, what, err := readSection(r, off, size, limit)
		if err != nil {
			return err
		}
		if sec.extent > limit {
			return tooMany(what, sec.extent)
		}
		if sec.size > limit {
			return tooMany(what, sec.size)
		}
		queue = append(queue, sec.next...)
	}
	return nil
}

// startxref finds the offset the file's last startxref gives.
func startxref(r io.ReaderAt, size int64) (int64, bool) {
	const tail = 1024
	from := max(0, size-tail)
	buf := make([]byte, size-from)
	if n, _ := r.ReadAt(buf, from); n < len(buf) {
		return 0, false
	}
	i := bytes.LastIndex(buf, []byte("startxref"))
	if i < 0 {
		return 0, false
	}
	l := &lexer{r: bufio.NewReader(bytes.NewReader(buf[i+len("startxref"):]))}
	tok, err := l.token()
	off, ok := tok.(int64)
	return off, err == nil && ok
}

// readSection reads the cross-reference section at off: a classic table
// and its trailer, or a cross-reference stream's dictionary.
func readSection(r io.ReaderAt, off, size, limit int64) (section, string, error) {
	l := &lexer{r: bufio.NewReader(io.NewSectionReader(r, off, size-off))}
	malformed := func(what string) error {
		return fmt.Errorf("pdf: malformed %s at byte %d", what, off)
	}
	tok, err := l.token()
	if err != nil {
		return section{}, "", malformed("cross-reference section")
	}
	if tok == keyword("xref") {
		sec, err := readTable(l, limit)
		if err != nil {
			return section{}, "", malformed("cross-reference table")
		}
		return sec, "cross-reference table", nil
	}
	if _, ok := tok.(int64); !ok {
		return section{}, "", malformed("cross-reference section")
	}
	l.unread(tok)
	sec, err := readStream(l)
	if err == errSyntax {
		return section{}, "", malformed("cross-reference stream")
	}
	if err != nil {
		return section{}, "", fmt.Errorf("pdf: cross-reference stream at byte %d has %v", off, err)
	}
	return sec, "cross-reference stream", nil
}

// readTable reads subsection headers and entries up to the trailer. A
// subsection past limit stops the reading: its extent is the answer.
func readTable(l *lexer, limit int64) (section, error) {
	var sec section
	for {
		tok, err := l.token()
		if err != nil {
			return sec, err
		}
		if tok == keyword("trailer") {
			break
		}
		first, ok1 := tok.(int64)
		next, err := l.token()
		count, ok2 := next.(int64)
		if err != nil || !ok1 || !ok2 || first < 0 || count < 0 {
			return sec, errSyntax
		}
		sec.extent = max(sec.extent, first+count)
		if sec.extent > limit {
			return sec, nil
		}
		for range 3 * count {
			if tok, err := l.token(); err != nil || tok == nil || tok == keyword("trailer") {
				return sec, errSyntax
			}
		}
	}
	obj, err := l.object(0)
	trailer, ok := obj.(dict)
	if err != nil || !ok {
		return sec, errSyntax
	}
	sec.size = intEntry(trailer, "Size")
	for _, key := range []name{"Prev", "XRefStm"} {
		if off := intEntry(trailer, key); off >= 0 {
			sec.next = append(sec.next, off)
		}
	}
	return sec, nil
}

// readStream reads a cross-reference stream's dictionary: the table it
// declares is /Size entries long, or as long as its /Index ranges reach,
// in rows of sum(/W) bytes.
func readStream(l *lexer) (section, error) {
	var sec section
	num, _ := l.token()
	gen, _ := l.token()
	obj, err := l.token()
	if _, ok := num.(int64); !ok || err != nil || obj != keyword("obj") {
		return sec, errSyntax
	}
	if _, ok := gen.(int64); !ok {
		return sec, errSyntax
	}
	v, err := l.object(0)
	d, ok := v.(dict)
	if err != nil || !ok {
		return sec, errSyntax
	}
	sec.size = intEntry(d, "Size")
	sec.extent = sec.size
	if index, ok := d["Index"].(array); ok {
		if len(index)%2 != 0 {
			return sec, errSyntax
		}
		for i := 0; i < len(index); i += 2 {
			first, ok1 := index[i].(int64)
			count, ok2 := index[i+1].(int64)
			if !ok1 || !ok2 || first < 0 || count < 0 || first > 1<<62-count {
				return sec, errSyntax
			}
			sec.extent = max(sec.extent, first+count)
		}
	}
	// A row of no bytes costs a reader nothing to read, however many rows
	// the stream declares; a field over 8 bytes holds no number a PDF
	// needs, and readers allocate a row up front.
	w, _ := d["W"].(array)
	row := int64(0)
	for _, x := range w {
		width, ok := x.(int64)
		if !ok || width < 0 || width > 8 {
			return sec, fmt.Errorf("field width %v (/W)", x)
		}
		row += width
	}
	if row == 0 {
		return sec, fmt.Errorf("rows of no bytes (/W %v)", []any(w))
	}
	if off := intEntry(d, "Prev"); off >= 0 {
		sec.next = append(sec.next, off)
	}
	return sec, nil
}

// intEntry is d's integer entry key, or -1.
func intEntry(d dict, key name) int64 {
	if n, ok := d[key].(int64); ok {
		return n
	}
	return -1
}
