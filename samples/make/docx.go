package main

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"time"
)

// modTime stamps every zip entry so that the samples are byte-for-byte
// reproducible.
var modTime = time.Date(2024, 10, 7, 9, 30, 0, 0, time.UTC)

const wNS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"

// docxBody builds the XML of a document body.
type docxBody struct{ b strings.Builder }

func esc(s string) string {
	var sb strings.Builder
	_ = xml.EscapeText(&sb, []byte(s))
	return sb.String()
}

func (d *docxBody) para(style, text string) {
	d.b.WriteString("<w:p>")
	if style != "" {
		d.b.WriteString(`<w:pPr><w:pStyle w:val="` + style + `"/></w:pPr>`)
	}
	d.runs(text)
	d.b.WriteString("</w:p>")
}

// runs writes text as runs; "\t" becomes w:tab, "\n" w:br.
func (d *docxBody) runs(text string) {
	for i, line := range strings.Split(text, "\n") {
		if i > 0 {
			d.b.WriteString("<w:r><w:br/></w:r>")
		}
		for j, part := range strings.Split(line, "\t") {
			if j > 0 {
				d.b.WriteString("<w:r><w:tab/></w:r>")
			}
			if part != "" {
				d.b.WriteString(`<w:r><w:t xml:space="preserve">` + esc(part) + `</w:t></w:r>`)
			}
		}
	}
}

func (d *docxBody) pageBreak() {
	d.b.WriteString(`<w:p><w:r><w:br w:type="page"/></w:r></w:p>`)
}

func (d *docxBody) table(rows [][]string) {
	d.b.WriteString(`<w:tbl><w:tblPr><w:tblStyle w:val="TableGrid"/><w:tblW w:w="0" w:type="auto"/></w:tblPr>`)
	for _, row := range rows {
		d.b.WriteString("<w:tr>")
		for _, cell := range row {
			d.b.WriteString(`<w:tc><w:tcPr><w:tcW w:w="2400" w:type="dxa"/></w:tcPr>`)
			d.para("", cell)
			d.b.WriteString("</w:tc>")
		}
		d.b.WriteString("</w:tr>")
	}
	d.b.WriteString("</w:tbl>")
}

func (d *docxBody) document() string {
	return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n" +
		`<w:document xmlns:w="` + wNS + `" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><w:body>` +
		d.b.String() +
		`<w:sectPr><w:pgSz w:w="12240" w:h="15840"/><w:pgMar w:top="1440" w:right="1440" w:bottom="1440" w:left="1440" w:header="720" w:footer="720" w:gutter="0"/></w:sectPr>` +
		`</w:body></w:document>`
}

const contentTypes = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/><Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"/></Types>`

const packageRels = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"/></Relationships>`

const documentRels = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/></Relationships>`

// styles defines the paragraph styles the samples use, so that Word and
// LibreOffice show real headings.
const styles = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:styles xmlns:w="` + wNS + `"><w:docDefaults><w:rPrDefault><w:rPr><w:rFonts w:ascii="Calibri" w:hAnsi="Calibri"/><w:sz w:val="22"/></w:rPr></w:rPrDefault></w:docDefaults>` +
	`<w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/><w:pPr><w:spacing w:after="160"/></w:pPr></w:style>` +
	`<w:style w:type="paragraph" w:styleId="Title"><w:name w:val="Title"/><w:basedOn w:val="Normal"/><w:pPr><w:outlineLvl w:val="0"/></w:pPr><w:rPr><w:sz w:val="48"/></w:rPr></w:style>` +
	`<w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/><w:basedOn w:val="Normal"/><w:pPr><w:outlineLvl w:val="0"/></w:pPr><w:rPr><w:b/><w:sz w:val="32"/></w:rPr></w:style>` +
	`<w:style w:type="paragraph" w:styleId="Heading2"><w:name w:val="heading 2"/><w:basedOn w:val="Normal"/><w:pPr><w:outlineLvl w:val="1"/></w:pPr><w:rPr><w:b/><w:sz w:val="26"/></w:rPr></w:style>` +
	`<w:style w:type="table" w:styleId="TableGrid"><w:name w:val="Table Grid"/><w:tblPr><w:tblBorders><w:top w:val="single" w:sz="4"/><w:left w:val="single" w:sz="4"/><w:bottom w:val="single" w:sz="4"/><w:right w:val="single" w:sz="4"/><w:insideH w:val="single" w:sz="4"/><w:insideV w:val="single" w:sz="4"/></w:tblBorders></w:tblPr></w:style></w:styles>`

func coreProps(title, author string) string {
	return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><dc:title>` + esc(title) + `</dc:title><dc:creator>` + esc(author) + `</dc:creator><dcterms:created xsi:type="dcterms:W3CDTF">2024-10-07T09:30:00Z</dcterms:created></cp:coreProperties>`
}

// zipEntry is one file of a zip archive; body streams its content, or
// raw supplies an already deflated entry.
type zipEntry struct {
	name string
	body func(io.Writer) error
	raw  func() (*zip.FileHeader, []byte, error)
}

func text(s string) func(io.Writer) error {
	return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
}

func writeZip(entries []zipEntry) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		if e.raw != nil {
			fh, data, err := e.raw()
			if err != nil {
				return nil, err
			}
			fh.Name, fh.Modified = e.name, modTime
			w, err := zw.CreateRaw(fh)
			if err != nil {
				return nil, err
			}
			if _, err := w.Write(data); err != nil {
				return nil, err
			}
			continue
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: modTime})
		if err != nil {
			return nil, err
		}
		if err := e.body(w); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// docxPackage wraps a document body into a complete DOCX package.
func docxPackage(document zipEntry, title, author string) ([]byte, error) {
	document.name = "word/document.xml"
	return writeZip([]zipEntry{
		{name: "[Content_Types].xml", body: text(contentTypes)},
		{name: "_rels/.rels", body: text(packageRels)},
		document,
		{name: "word/_rels/document.xml.rels", body: text(documentRels)},
		{name: "word/styles.xml", body: text(styles)},
		{name: "docProps/core.xml", body: text(coreProps(title, author))},
	})
}
