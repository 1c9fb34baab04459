package hostile

import (
	"archive/zip"
	"bufio"
	"compress/flate"
	"io"
	"strings"
)

const wordNS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"

// docx writes a DOCX whose word/document.xml is body's output between the
// document's opening and closing tags.
func docx(w io.Writer, body func(w io.Writer) error) error {
	z := zip.NewWriter(w)
	// The fastest level: the bombs are uniform, any level shrinks them
	// about a thousandfold.
	z.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(w, flate.BestSpeed)
	})
	parts := map[string]string{
		"[Content_Types].xml": `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`,
		"_rels/.rels":         `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`,
	}
	for _, name := range []string{"[Content_Types].xml", "_rels/.rels"} {
		f, err := z.Create(name)
		if err != nil {
			return err
		}
		if _, err := io.WriteString(f, parts[name]); err != nil {
			return err
		}
	}
	f, err := z.Create("word/document.xml")
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	io.WriteString(bw, `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="`+wordNS+`"><w:body>`)
	if err := body(bw); err != nil {
		return err
	}
	io.WriteString(bw, `</w:body></w:document>`)
	if err := bw.Flush(); err != nil {
		return err
	}
	return z.Close()
}

// words is text that compresses well but is not one repeated byte.
var words = strings.Repeat("lorem ipsum dolor sit amet consectetur adipiscing elit ", 18)

// DOCXHugeParagraph is one paragraph of size bytes of text, in runs of
// about 1 KB.
func DOCXHugeParagraph(w io.Writer, size int64) error {
	return docx(w, func(w io.Writer) error {
		io.WriteString(w, "<w:p>")
		if err := repeat(w, `<w:r><w:t xml:space="preserve">`+words+`</w:t></w:r>`, size); err != nil {
			return err
		}
		_, err := io.WriteString(w, "</w:p>")
		return err
	})
}

// DOCXDeepNesting is a paragraph inside depth nested tables.
func DOCXDeepNesting(w io.Writer, depth int) error {
	return docx(w, func(w io.Writer) error {
		io.WriteString(w, strings.Repeat("<w:tbl><w:tr><w:tc>", depth))
		io.WriteString(w, "<w:p><w:r><w:t>deep</w:t></w:r></w:p>")
		_, err := io.WriteString(w, strings.Repeat("</w:tc></w:tr></w:tbl>", depth))
		return err
	})
}

// DOCXZipBomb is a document.xml of size bytes of white space between two
// paragraphs.
func DOCXZipBomb(w io.Writer, size int64) error {
	return docx(w, func(w io.Writer) error {
		io.WriteString(w, "<w:p><w:r><w:t>before</w:t></w:r></w:p>")
		if err := repeat(w, " ", size); err != nil {
			return err
		}
		_, err := io.WriteString(w, "<w:p><w:r><w:t>after</w:t></w:r></w:p>")
		return err
	})
}
