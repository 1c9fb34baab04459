// Package pdfgen writes large, realistic, multi-page text PDFs from scratch,
// deterministically from a seed, for tests and benchmarks of PDF text
// extraction.
//
// Pages carry business prose (names, dates, e-mail addresses, amounts,
// reference numbers) in the base-14 Helvetica and Times fonts with WinAnsi
// encoding. Words are separated the ways real producers separate them:
// literal spaces, TJ kerning offsets and per-word Td moves, so an extractor
// that ignores glyph positions glues words together. Output is streamed: a
// 30,000-page file needs memory for one page plus one xref offset per object.
//
// Options also produce the broken and protected files an extractor must
// survive: encrypted with an empty or a real user password, truncated, with a
// /Count that lies and with a cyclic page tree.
package pdfgen

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/md5"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
)

// Options configure a generated PDF.
type Options struct {
	Pages int    // number of pages; at least 1
	Seed  uint64 // same seed, same bytes

	// ImagePages is how many pages carry only an image and no text layer
	// (for OCR tests), spread evenly; see IsImagePage.
	ImagePages int

	// Uncompressed leaves content streams unfiltered (default FlateDecode).
	Uncompressed bool

	// Encrypt, when set, encrypts strings and streams with the standard
	// security handler.
	Encrypt *Encryption

	// ClaimedCount, when non-zero, is written as the root /Count instead of
	// the real number of pages.
	ClaimedCount int
	// CyclicPageTree adds the root page-tree node to its own /Kids.
	CyclicPageTree bool
	// TruncateAt, when positive, stops the output after that many bytes.
	TruncateAt int64

	// PageText, when set, receives the text of every page as drawn: lines
	// separated by "\n", words by one space ("" for an image page).
	PageText func(page int, text string)
}

// IsImagePage reports whether 1-based page p is an image-only page.
func (o Options) IsImagePage(p int) bool {
	if o.ImagePages <= 0 || o.Pages <= 0 {
		return false
	}
	n := min(o.ImagePages, o.Pages)
	// Page p is an image page when the running share of image pages steps
	// up at p: n pages spread evenly over Pages.
	return p*n/o.Pages != (p-1)*n/o.Pages
}

// WriteFile writes a generated PDF to path.
func WriteFile(path string, opts Options) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := Write(f, opts); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Fixed object numbers; pages and page-tree nodes follow.
const (
	objCatalog = 1 + iota
	objPages
	objInfo
	objFontHelv
	objFontHelvBold
	objFontTimes
	objFontTimesBold
	objResources
	objImage
	objImageResources
	objEncrypt
	objFirstPage
)

// fanout is the number of kids per page-tree node.
const fanout = 32

// Write writes a generated PDF to w.
func Write(w io.Writer, opts Options) error {
	if opts.Pages < 1 {
		return errors.New("pdfgen: Pages must be at least 1")
	}
	out := &pdfWriter{w: bufio.NewWriterSize(w, 64<<10), limit: opts.TruncateAt}
	rng := rand.New(rand.NewPCG(opts.Seed, 0x9e3779b97f4a7c15))
	idSum := md5.Sum(binary.LittleEndian.AppendUint64([]byte("docpipe-pdfgen"), opts.Seed))
	id := idSum[:]

	var enc *encrypter
	if opts.Encrypt != nil {
		var err error
		if enc, err = newEncrypter(*opts.Encrypt, id, rand.New(rand.NewPCG(opts.Seed, 1))); err != nil {
			return err
		}
	}
	tree := newPageTree(opts.Pages)
	out.offsets = make([]int64, tree.nextObj)

	out.printf("%%PDF-1.6\n%%\xe2\xe3\xcf\xd3\n")
	out.object(objCatalog, "<< /Type /Catalog /Pages %d 0 R >>", objPages)
	title := []byte(fmt.Sprintf("Generated document seed %d", opts.Seed))
	if enc != nil {
		title = enc.encrypt(objInfo, title)
	}
	out.object(objInfo, "<< /Title <%x> /Producer (docpipe pdfgen) >>", title)
	for _, f := range []struct {
		num    int
		name   string
		widths *[224]uint16
	}{
		{objFontHelv, "Helvetica", &helveticaWidths},
		{objFontHelvBold, "Helvetica-Bold", &helveticaBoldWidths},
		{objFontTimes, "Times-Roman", &timesRomanWidths},
		{objFontTimesBold, "Times-Bold", &timesBoldWidths},
	} {
		var ws strings.Builder
		for i, v := range f.widths {
			if i > 0 {
				ws.WriteByte(' ')
			}
			fmt.Fprint(&ws, v)
		}
		out.object(f.num, "<< /Type /Font /Subtype /Type1 /BaseFont /%s /Encoding /WinAnsiEncoding "+
			"/FirstChar 32 /LastChar 255 /Widths [%s] >>", f.name, ws.String())
	}
	out.object(objResources, "<< /Font << /F1 %d 0 R /F2 %d 0 R /F3 %d 0 R /F4 %d 0 R >> /ProcSet [/PDF /Text] >>",
		objFontHelv, objFontHelvBold, objFontTimes, objFontTimesBold)
	out.stream(objImage, enc, "/Type /XObject /Subtype /Image /Width 120 /Height 80 /ColorSpace /DeviceGray /BitsPerComponent 8",
		scanImage(120, 80), !opts.Uncompressed)
	out.object(objImageResources, "<< /XObject << /Im1 %d 0 R >> /ProcSet [/PDF /ImageB] >>", objImage)
	if enc != nil {
		out.object(objEncrypt, "%s", enc.dict())
	} else {
		out.object(objEncrypt, "null")
	}

	tg := &textGen{r: rng}
	lay := &layout{tg: tg}
	for p := 1; p <= opts.Pages; p++ {
		pageObj := objFirstPage + 2*(p-1)
		var content []byte
		res := objResources
		if opts.IsImagePage(p) {
			content = []byte("q 432 0 0 288 90 400 cm /Im1 Do Q\n")
			res = objImageResources
			if opts.PageText != nil {
				opts.PageText(p, "")
			}
		} else {
			var text string
			content, text = lay.page(p, opts.Pages)
			if opts.PageText != nil {
				opts.PageText(p, text)
			}
		}
		out.object(pageObj, "<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Resources %d 0 R /Contents %d 0 R >>",
			tree.parentOfPage(p-1), res, pageObj+1)
		out.stream(pageObj+1, enc, "", content, !opts.Uncompressed)
		if out.err != nil {
			return out.err
		}
	}
	tree.write(out, opts)

	xref := out.n
	out.printf("xref\n0 %d\n0000000000 65535 f \n", len(out.offsets))
	for _, off := range out.offsets[1:] {
		out.printf("%010d 00000 n \n", off)
	}
	out.printf("trailer\n<< /Size %d /Root %d 0 R /Info %d 0 R /ID [<%x> <%x>]", len(out.offsets), objCatalog, objInfo, id, id)
	if enc != nil {
		out.printf(" /Encrypt %d 0 R", objEncrypt)
	}
	out.printf(" >>\nstartxref\n%d\n%%%%EOF\n", xref)
	if out.err != nil {
		return out.err
	}
	return out.w.Flush()
}

// pdfWriter tracks byte offsets of objects while streaming.
type pdfWriter struct {
	w       *bufio.Writer
	n       int64
	limit   int64
	offsets []int64
	err     error
	zbuf    bytes.Buffer
}

func (o *pdfWriter) write(b []byte) {
	if o.err != nil {
		return
	}
	if o.limit > 0 {
		if o.n >= o.limit {
			o.n += int64(len(b))
			return
		}
		if room := o.limit - o.n; int64(len(b)) > room {
			_, o.err = o.w.Write(b[:room])
			o.n += int64(len(b))
			return
		}
	}
	_, o.err = o.w.Write(b)
	o.n += int64(len(b))
}

func (o *pdfWriter) printf(format string, args ...any) {
	o.write(fmt.Appendf(nil, format, args...))
}

func (o *pdfWriter) object(num int, format string, args ...any) {
	o.offsets[num] = o.n
	o.printf("%d 0 obj\n", num)
	o.printf(format, args...)
	o.printf("\nendobj\n")
}

func (o *pdfWriter) stream(num int, enc *encrypter, dict string, data []byte, compress bool) {
	filter := ""
	if compress {
		o.zbuf.Reset()
		zw := zlib.NewWriter(&o.zbuf)
		zw.Write(data) // writes to a bytes.Buffer cannot fail
		zw.Close()
		data = o.zbuf.Bytes()
		filter = " /Filter /FlateDecode"
	}
	if enc != nil {
		data = enc.encrypt(num, data)
	}
	o.offsets[num] = o.n
	o.printf("%d 0 obj\n<< %s%s /Length %d >>\nstream\n", num, dict, filter, len(data))
	o.write(data)
	o.printf("\nendstream\nendobj\n")
}

// scanImage draws a grey page-like pattern: dark bars as lines of "text".
func scanImage(w, h int) []byte {
	img := make([]byte, w*h)
	for y := range h {
		for x := range w {
			v := byte(235)
			if y%8 < 3 && x > 8 && x < w-8 && (x/5+y/8)%7 != 0 {
				v = 40
			}
			img[y*w+x] = v
		}
	}
	return img
}

// pageTree numbers the intermediate /Pages nodes so that every page can
// name its parent before the nodes themselves are written at the end.
type pageTree struct {
	pages   int
	levels  []int // node count per level above the pages, root level last
	base    []int // first object number per level (root level uses objPages)
	nextObj int
}

func newPageTree(pages int) *pageTree {
	t := &pageTree{pages: pages, nextObj: objFirstPage + 2*pages}
	n := pages
	for {
		n = (n + fanout - 1) / fanout
		t.levels = append(t.levels, n)
		if n == 1 {
			break
		}
	}
	for i, c := range t.levels {
		if i == len(t.levels)-1 {
			t.base = append(t.base, objPages)
			break
		}
		t.base = append(t.base, t.nextObj)
		t.nextObj += c
	}
	return t
}

func (t *pageTree) parentOfPage(i int) int { return t.base[0] + i/fanout }

func (t *pageTree) write(out *pdfWriter, opts Options) {
	span := 1 // pages covered by one node at the level below
	for lvl, count := range t.levels {
		childSpan := span
		span *= fanout
		for j := range count {
			num := t.base[lvl] + j
			var kids strings.Builder
			first := j * fanout
			last := min((j+1)*fanout, (t.pages+childSpan-1)/childSpan)
			for k := first; k < last; k++ {
				if lvl == 0 {
					fmt.Fprintf(&kids, "%d 0 R ", objFirstPage+2*k)
				} else {
					fmt.Fprintf(&kids, "%d 0 R ", t.base[lvl-1]+k)
				}
			}
			covered := min(span, t.pages-j*span)
			parent := ""
			if lvl < len(t.levels)-1 {
				parent = fmt.Sprintf("/Parent %d 0 R ", t.base[lvl+1]+j/fanout)
			}
			if num == objPages {
				if opts.ClaimedCount != 0 {
					covered = opts.ClaimedCount
				}
				if opts.CyclicPageTree {
					fmt.Fprintf(&kids, "%d 0 R ", objPages)
				}
			}
			out.object(num, "<< /Type /Pages %s/Kids [%s] /Count %d >>", parent, strings.TrimSpace(kids.String()), covered)
		}
	}
}
