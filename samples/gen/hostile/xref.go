package hostile

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"strings"
)

// Cross-reference bombs: a few hundred bytes whose cross-reference
// section declares a table of billions of objects. A reader that sizes
// its table from these numbers allocates tens of GB.

// XrefOffsetBomb is one page whose classic cross-reference table lists
// its objects as numbers 900000000 onwards.
func XrefOffsetBomb(w io.Writer) error {
	p := textPage()
	xref := p.buf.Len()
	fmt.Fprintf(&p.buf, "xref\n0 1\n0000000000 65535 f \n900000000 %d\n", len(p.offsets))
	for _, off := range p.offsets {
		fmt.Fprintf(&p.buf, "%010d 00000 n \n", off)
	}
	return p.trailer(w, xref, fmt.Sprintf("/Size %d /Root 1 0 R", 900000000+len(p.offsets)))
}

// TrailerSizeBomb is one page with a sound classic table whose trailer
// claims 2000000000 objects.
func TrailerSizeBomb(w io.Writer) error {
	p := textPage()
	xref := p.buf.Len()
	p.classicTable()
	return p.trailer(w, xref, "/Size 2000000000 /Root 1 0 R")
}

// XrefStreamSizeBomb is one page whose cross-reference stream claims
// 2000000000 objects.
func XrefStreamSizeBomb(w io.Writer) error {
	return textPage().xrefStream(w, "/Size 2000000000 /W [1 4 2]", [3]int{1, 4, 2})
}

// XrefStreamIndexBomb is one page whose cross-reference stream numbers
// its entries from 900000000.
func XrefStreamIndexBomb(w io.Writer) error {
	p := textPage()
	return p.xrefStream(w, fmt.Sprintf("/Size %d /Index [900000000 %d] /W [1 4 2]", len(p.offsets)+2, len(p.offsets)+2), [3]int{1, 4, 2})
}

// XrefStreamEmptyRowBomb is one page whose cross-reference stream has
// rows of zero bytes, so that a table of 2000000000 entries needs no
// data at all.
func XrefStreamEmptyRowBomb(w io.Writer) error {
	return textPage().xrefStream(w, "/Size 6 /Index [0 2000000000] /W [0 0 0]", [3]int{1, 4, 2})
}

// XrefStreamWidthBomb is one page whose cross-reference stream has rows
// a TB wide.
func XrefStreamWidthBomb(w io.Writer) error {
	return textPage().xrefStream(w, "/Size 6 /W [1 1099511627776 2]", [3]int{1, 4, 2})
}

// XrefLoop is one page whose cross-reference table names itself as the
// previous one, so a reader following /Prev never stops.
func XrefLoop(w io.Writer) error {
	p := textPage()
	xref := p.buf.Len()
	p.classicTable()
	return p.trailer(w, xref, fmt.Sprintf("/Size %d /Root 1 0 R /Prev %d", len(p.offsets)+1, xref))
}

// PredictorBomb is one page whose content stream is PNG-predicted with
// rows a TB wide.
func PredictorBomb(w io.Writer) error {
	p := newPDF()
	onePage(p, "")
	err := p.stream(4, "/DecodeParms << /Predictor 12 /Columns 1099511627776 >>", func(w io.Writer) error {
		_, err := io.WriteString(w, "\x02BT /F1 12 Tf 72 700 Td (A predictor bomb.) Tj ET\n")
		return err
	})
	if err != nil {
		return err
	}
	p.object(5, helvetica)
	return p.finish(w)
}

// textPage is objects 1-5 of a one-page document that says one line.
func textPage() *pdfFile {
	p := newPDF()
	onePage(p, "")
	content := "BT /F1 12 Tf 72 700 Td (A cross-reference bomb.) Tj ET\n"
	p.object(4, fmt.Sprintf("<< /Length %d >>\nstream\n%sendstream", len(content), content))
	p.object(5, helvetica)
	return p
}

// classicTable writes a sound cross-reference table of the objects.
func (p *pdfFile) classicTable() {
	fmt.Fprintf(&p.buf, "xref\n0 %d\n0000000000 65535 f \n", len(p.offsets)+1)
	for _, off := range p.offsets {
		fmt.Fprintf(&p.buf, "%010d 00000 n \n", off)
	}
}

func (p *pdfFile) trailer(w io.Writer, xref int, dict string) error {
	fmt.Fprintf(&p.buf, "trailer\n<< %s >>\nstartxref\n%d\n%%%%EOF\n", dict, xref)
	_, err := w.Write(p.buf.Bytes())
	return err
}

// xrefStream ends the file with a cross-reference stream of the objects
// and itself, its rows widths wide, under the stream dictionary entries
// dict.
func (p *pdfFile) xrefStream(w io.Writer, dict string, widths [3]int) error {
	num := len(p.offsets) + 1
	p.mark(num)
	var rows bytes.Buffer
	row := func(fields ...int) {
		for i, v := range fields {
			for b := widths[i] - 1; b >= 0; b-- {
				rows.WriteByte(byte(v >> (8 * b)))
			}
		}
	}
	row(0, 0, 65535)
	for _, off := range p.offsets {
		row(1, off, 0)
	}
	if strings.Contains(dict, "/Predictor") {
		// The rows as predicted (none changes), then compressed.
		var z bytes.Buffer
		zw := zlib.NewWriter(&z)
		row := 1 + widths[0] + widths[1] + widths[2]
		for data := rows.Bytes(); len(data) > 0; data = data[row-1:] {
			zw.Write([]byte{2})
			zw.Write(data[:row-1])
		}
		zw.Close()
		rows = z
		dict += " /Filter /FlateDecode"
	}
	xref := p.offsets[num-1]
	fmt.Fprintf(&p.buf, "%d 0 obj\n<< /Type /XRef %s /Root 1 0 R /Length %d >>\nstream\n", num, dict, rows.Len())
	p.buf.Write(rows.Bytes())
	fmt.Fprintf(&p.buf, "\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", xref)
	_, err := w.Write(p.buf.Bytes())
	return err
}

// XrefStreamPredictorBomb is one page whose cross-reference stream is
// PNG-predicted with rows a TB wide.
func XrefStreamPredictorBomb(w io.Writer) error {
	p := textPage()
	return p.xrefStream(w, fmt.Sprintf("/Size %d /W [1 4 2] /DecodeParms << /Predictor 12 /Columns 1099511627776 >>", len(p.offsets)+2), [3]int{1, 4, 2})
}
