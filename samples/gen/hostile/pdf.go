package hostile

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"math"
	"strings"
)

// pdfFile writes a PDF of numbered objects (1 is the catalog) with an
// xref table.
type pdfFile struct {
	buf     bytes.Buffer
	offsets []int
}

func newPDF() *pdfFile {
	p := &pdfFile{}
	p.buf.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	return p
}

// object writes object num (numbers are given in order from 1).
func (p *pdfFile) object(num int, body string) {
	p.mark(num)
	fmt.Fprintf(&p.buf, "%d 0 obj\n%s\nendobj\n", num, body)
}

func (p *pdfFile) mark(num int) {
	for len(p.offsets) < num {
		p.offsets = append(p.offsets, 0)
	}
	p.offsets[num-1] = p.buf.Len()
}

// stream writes object num as a FlateDecode stream of data, which it
// compresses as it is produced.
func (p *pdfFile) stream(num int, dict string, data func(w io.Writer) error) error {
	var z bytes.Buffer
	// The fastest level: the bombs are uniform, any level shrinks them
	// about a thousandfold.
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestSpeed)
	if err := data(zw); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	p.mark(num)
	fmt.Fprintf(&p.buf, "%d 0 obj\n<< %s /Filter /FlateDecode /Length %d >>\nstream\n", num, dict, z.Len())
	p.buf.Write(z.Bytes())
	p.buf.WriteString("\nendstream\nendobj\n")
	return nil
}

func (p *pdfFile) finish(w io.Writer) error {
	xref := p.buf.Len()
	fmt.Fprintf(&p.buf, "xref\n0 %d\n0000000000 65535 f \n", len(p.offsets)+1)
	for _, off := range p.offsets {
		fmt.Fprintf(&p.buf, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&p.buf, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(p.offsets)+1, xref)
	_, err := w.Write(p.buf.Bytes())
	return err
}

// helvetica is a font object body every viewer has.
const helvetica = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"

// onePage writes objects 1-4: catalog, page tree, one page whose content
// is object 4 and whose resources are res (font F1 is object 5 unless res
// says otherwise). The caller writes object 4 onwards.
func onePage(p *pdfFile, res string) {
	if res == "" {
		res = "<< /Font << /F1 5 0 R >> >>"
	}
	p.object(1, "<< /Type /Catalog /Pages 2 0 R >>")
	p.object(2, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>")
	p.object(3, "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources "+res+" /Contents 4 0 R >>")
}

// repeat writes unit to w until size bytes are written.
func repeat(w io.Writer, unit string, size int64) error {
	block := strings.Repeat(unit, max(1, (64<<10)/len(unit)))
	for written := int64(0); written < size; written += int64(len(block)) {
		if _, err := io.WriteString(w, block); err != nil {
			return err
		}
	}
	return nil
}

// ContentBomb is one page whose content stream decompresses to size bytes
// of show-text operators: one glyph every seven bytes.
func ContentBomb(w io.Writer, size int64) error {
	p := newPDF()
	onePage(p, "")
	err := p.stream(4, "", func(w io.Writer) error {
		io.WriteString(w, "BT /F1 1 Tf 0 0 Td\n")
		if err := repeat(w, "(x) Tj\n", size); err != nil {
			return err
		}
		_, err := io.WriteString(w, "ET\n")
		return err
	})
	if err != nil {
		return err
	}
	p.object(5, helvetica)
	return p.finish(w)
}

// OperatorBomb is one page whose content stream is size bytes of path
// operators: no text at all, only instructions to read.
func OperatorBomb(w io.Writer, size int64) error {
	return contentPage(w, "0 0 m 1 1 l S\n", size)
}

// OperandBomb is one page whose content stream is size bytes of numbers
// and no operator to take them.
func OperandBomb(w io.Writer, size int64) error {
	return contentPage(w, "1 ", size)
}

// NestingBomb is one page whose content stream opens size arrays.
func NestingBomb(w io.Writer, size int64) error {
	return contentPage(w, "[", size)
}

// StringBomb is one page whose content stream is one string of size bytes.
func StringBomb(w io.Writer, size int64) error {
	p := newPDF()
	onePage(p, "")
	err := p.stream(4, "", func(w io.Writer) error {
		io.WriteString(w, "BT /F1 1 Tf (")
		if err := repeat(w, "x", size); err != nil {
			return err
		}
		_, err := io.WriteString(w, ") Tj ET\n")
		return err
	})
	if err != nil {
		return err
	}
	p.object(5, helvetica)
	return p.finish(w)
}

func contentPage(w io.Writer, unit string, size int64) error {
	p := newPDF()
	onePage(p, "")
	if err := p.stream(4, "", func(w io.Writer) error { return repeat(w, unit, size) }); err != nil {
		return err
	}
	p.object(5, helvetica)
	return p.finish(w)
}

// FormFanOut is one page that draws a form that draws the next form ten
// times, depth forms deep: 10^depth small text runs from a few hundred
// bytes.
func FormFanOut(w io.Writer, depth int) error {
	p := newPDF()
	const first = 6 // forms are objects 6 .. 6+depth-1
	onePage(p, fmt.Sprintf("<< /Font << /F1 5 0 R >> /XObject << /X %d 0 R >> >>", first))
	if err := p.stream(4, "", func(w io.Writer) error { _, err := io.WriteString(w, "/X Do\n"); return err }); err != nil {
		return err
	}
	p.object(5, helvetica)
	for i := range depth {
		num := first + i
		body := "BT /F1 1 Tf (x) Tj ET\n"
		res := "<< /Font << /F1 5 0 R >> >>"
		if i < depth-1 {
			body = strings.Repeat("/X Do\n", 10)
			res = fmt.Sprintf("<< /Font << /F1 5 0 R >> /XObject << /X %d 0 R >> >>", num+1)
		}
		if err := p.stream(num, "/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources "+res,
			func(w io.Writer) error { _, err := io.WriteString(w, body); return err }); err != nil {
			return err
		}
	}
	return p.finish(w)
}

// ImageBomb is one page that draws an image of size bytes of samples
// (all zero, so they compress about a thousandfold).
func ImageBomb(w io.Writer, size int64) error {
	p := newPDF()
	onePage(p, "<< /Font << /F1 5 0 R >> /XObject << /Im 6 0 R >> >>")
	if err := p.stream(4, "", func(w io.Writer) error {
		_, err := io.WriteString(w, "q 612 0 0 792 0 0 cm /Im Do Q BT /F1 12 Tf 72 700 Td (An image bomb.) Tj ET\n")
		return err
	}); err != nil {
		return err
	}
	p.object(5, helvetica)
	side := int64(math.Ceil(math.Sqrt(float64(size) / 3))) // RGB, one byte a sample
	dict := fmt.Sprintf("/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceRGB /BitsPerComponent 8", side, side)
	if err := p.stream(6, dict, func(w io.Writer) error { return repeat(w, "\x00", side*side*3) }); err != nil {
		return err
	}
	return p.finish(w)
}

// ObjectStreamBomb is pages pages whose shared resources live at the end
// of an object stream padded to size bytes, so every object it holds
// costs reading size bytes.
func ObjectStreamBomb(w io.Writer, size int64, pages int) error {
	p := newPDF()
	kids := make([]string, pages)
	for i := range kids {
		kids[i] = fmt.Sprintf("%d 0 R", 8+2*i)
	}
	p.object(1, "<< /Type /Catalog /Pages 2 0 R >>")
	p.object(2, fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), pages))
	p.object(3, helvetica)
	// Object 4 is the object stream; objects 5 and 6 live in it.
	res := "<< /Font << /F1 3 0 R >> >>"
	// Both objects sit at the end, past the padding: offsets in the
	// header count from First.
	header := fmt.Sprintf("5 %d 6 %d ", size, size)
	err := p.stream(4, fmt.Sprintf("/Type /ObjStm /N 2 /First %d", len(header)), func(w io.Writer) error {
		io.WriteString(w, header)
		if err := repeat(w, " ", size); err != nil {
			return err
		}
		_, err := io.WriteString(w, res)
		return err
	})
	if err != nil {
		return err
	}
	p.object(7, "<< >>")
	for i := range pages {
		p.object(8+2*i, fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources 5 0 R /Contents %d 0 R >>", 9+2*i))
		if err := p.stream(9+2*i, "", func(w io.Writer) error {
			_, err := fmt.Fprintf(w, "BT /F1 12 Tf 72 700 Td (Page %d.) Tj ET\n", i+1)
			return err
		}); err != nil {
			return err
		}
	}
	return p.finishWithObjStm(w, 4, []int{5, 6})
}

// finishWithObjStm ends the file with a cross-reference stream, which
// can say that the objects inStream live in object stream objStm.
func (p *pdfFile) finishWithObjStm(w io.Writer, objStm int, inStream []int) error {
	compressed := map[int]int{}
	for i, num := range inStream {
		compressed[num] = i
	}
	xrefNum := len(p.offsets) + 1
	p.mark(xrefNum)
	var rows bytes.Buffer
	row := func(typ byte, a uint32, b uint16) {
		rows.Write([]byte{typ, byte(a >> 24), byte(a >> 16), byte(a >> 8), byte(a), byte(b >> 8), byte(b)})
	}
	row(0, 0, 65535)
	for i, off := range p.offsets {
		if idx, ok := compressed[i+1]; ok {
			row(2, uint32(objStm), uint16(idx))
			continue
		}
		row(1, uint32(off), 0)
	}
	xref := p.offsets[xrefNum-1]
	fmt.Fprintf(&p.buf, "%d 0 obj\n<< /Type /XRef /Size %d /W [1 4 2] /Root 1 0 R /Length %d >>\nstream\n", xrefNum, xrefNum+1, rows.Len())
	p.buf.Write(rows.Bytes())
	fmt.Fprintf(&p.buf, "\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", xref)
	_, err := w.Write(p.buf.Bytes())
	return err
}
