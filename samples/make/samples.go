package main

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/text/encoding/charmap"

	"github.com/docpipe/docpipe/pipeline/ocr/ocrtest"
)

// build returns every deterministic sample by its slash-separated path
// relative to the samples directory.
func build() (map[string][]byte, error) {
	report, err := reportDOCX()
	if err != nil {
		return nil, err
	}
	bomb, err := zipBombDOCX()
	if err != nil {
		return nil, err
	}
	xlsx, err := writeZip([]zipEntry{
		{name: "[Content_Types].xml", body: text(`<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/></Types>`)},
		{name: "_rels/.rels", body: text(`<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>`)},
		{name: "xl/workbook.xml", body: text(`<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheets><sheet name="Q3" sheetId="1"/></sheets></workbook>`)},
	})
	if err != nil {
		return nil, err
	}
	latin1, err := charmap.ISO8859_1.NewEncoder().String(latin1Letter)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{
		"docs/report.docx":       report,
		"docs/notes.md":          []byte(notesMD),
		"docs/page.html":         []byte(pageHTML),
		"docs/letter.txt":        []byte(letterUTF8),
		"docs/letter-latin1.txt": []byte(latin1),

		"bad/empty.txt":        {},
		"bad/random.bin":       randomBytes(4096),
		"bad/truncated.docx":   report[:len(report)/2],
		"bad/zipbomb.docx":     bomb,
		"bad/pdf-named.txt":    tinyPDF().PDF(),
		"bad/binary-ish.txt":   binaryish(),
		"bad/encrypted.docx":   encryptedDOCX(),
		"bad/legacy.doc":       legacyDOC(),
		"bad/spreadsheet.xlsx": xlsx,
		"bad/image.gif":        tinyGIF(),
		"bad/mixed-utf8.txt":   mixedUTF8(),
		"bad/utf16-nobom.txt":  utf16NoBOM("Invoice INV-2024-0193 was paid on 14 October 2024 by Helena Novak.\n"),
	}, nil
}

func reportDOCX() ([]byte, error) {
	var d docxBody
	d.para("Title", "Northwind Logistics — Quarterly Operations Report, Q3 2024")
	d.para("", "Prepared by Maria Gonzalez (maria.gonzalez@northwind-logistics.example) for the board meeting of 15 October 2024.")
	d.para("Heading1", "1. Executive summary")
	d.para("", "Revenue for the quarter ending 30 September 2024 reached $4,182,500, up 12.4% on Q2. Operating costs were $3,297,000, leaving an operating margin of 21.2%.")
	d.para("", "The Rotterdam warehouse opened on 2 August 2024 under site lead Jan de Vries and handled 18,340 pallets in its first eight weeks.")
	d.para("Heading2", "Key dates")
	d.para("", "Board review:\t15 October 2024\nBudget freeze:\t1 November 2024\nQ4 forecast due:\t29 November 2024")
	d.pageBreak()
	d.para("Heading1", "2. Regional results")
	d.para("", "All figures in US dollars. Contacts are the regional finance leads.")
	d.table([][]string{
		{"Region", "Manager", "Revenue", "Contact"},
		{"North America", "David Chen", "$1,640,000", "david.chen@northwind-logistics.example"},
		{"Europe", "Jan de Vries", "$1,215,300", "jan.devries@northwind-logistics.example"},
		{"Asia Pacific", "Priya Raman", "$982,700", "priya.raman@northwind-logistics.example"},
		{"Latin America", "Lucas Oliveira", "$344,500", "lucas.oliveira@northwind-logistics.example"},
	})
	d.para("", "Europe grew fastest (+19%), driven by the Rotterdam opening; Latin America fell 4% after the Santos port strike of 9–16 July 2024.")
	// Word records where its last layout wrapped a page; that is not a break.
	d.b.WriteString(`<w:p><w:r><w:t xml:space="preserve">Freight claims closed this quarter: 212, worth $86,450 in total. </w:t></w:r><w:r><w:lastRenderedPageBreak/><w:t>Average settlement time fell to 11 days.</w:t></w:r></w:p>`)
	d.pageBreak()
	d.para("Heading1", "3. Risks and next steps")
	d.para("", "Fuel contracts with Baltic Energy AB expire on 31 December 2024; procurement (contact: Sofia Lindqvist, +46 8 555 0142) will present options by 20 November 2024.")
	d.para("", "The ERP migration budget of €750,000 was approved on 3 September 2024. Go-live is planned for 3 March 2025.")
	d.para("Heading2", "Actions")
	d.para("", "Maria Gonzalez: circulate the Q4 forecast template by 25 October 2024.")
	d.para("", "David Chen: renegotiate the Chicago lease (current rent $48,000 per month).")
	d.para("", "Questions: finance-ops@northwind-logistics.example")
	doc := d.document()
	return docxPackage(zipEntry{body: text(doc)}, "Quarterly Operations Report Q3 2024", "Maria Gonzalez")
}

// zipBombDOCX is a valid DOCX whose body inflates about 1000 times:
// 160 MiB of one repeated character in a file well under 200 KB.
func zipBombDOCX() ([]byte, error) {
	return docxPackage(zipEntry{raw: bombBody}, "Zip bomb", "docpipe samples")
}

// bombBody deflates the body without compressing 160 MiB each time: one
// flush-terminated block of 1 MiB of 'A's, deflated against a dictionary of
// 'A's, decodes the same after any run of 'A's, so the stream is the
// head, that block repeated, and the tail.
func bombBody() (*zip.FileHeader, []byte, error) {
	const chunks = 160
	head := []byte(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="` + wNS + `"><w:body><w:p><w:r><w:t>`)
	tail := []byte(`</w:t></w:r></w:p></w:body></w:document>`)
	chunk := bytes.Repeat([]byte("A"), 1<<20)
	dict := chunk[:32<<10]
	deflate := func(dict, data []byte, final bool) ([]byte, error) {
		var b bytes.Buffer
		w, err := flate.NewWriterDict(&b, flate.BestCompression, dict)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(data); err != nil {
			return nil, err
		}
		if final {
			err = w.Close()
		} else {
			err = w.Flush()
		}
		return b.Bytes(), err
	}
	first, err := deflate(nil, append(append([]byte{}, head...), chunk...), false)
	if err != nil {
		return nil, nil, err
	}
	steady, err := deflate(dict, chunk, false)
	if err != nil {
		return nil, nil, err
	}
	last, err := deflate(dict, tail, true)
	if err != nil {
		return nil, nil, err
	}
	var data bytes.Buffer
	data.Write(first)
	crc := crc32.NewIEEE()
	crc.Write(head)
	crc.Write(chunk)
	for range chunks - 1 {
		data.Write(steady)
		crc.Write(chunk)
	}
	data.Write(last)
	crc.Write(tail)
	return &zip.FileHeader{
		Method:             zip.Deflate,
		CRC32:              crc.Sum32(),
		CompressedSize64:   uint64(data.Len()),
		UncompressedSize64: uint64(len(head) + chunks*len(chunk) + len(tail)),
	}, data.Bytes(), nil
}

func tinyPDF() ocrtest.Page {
	return ocrtest.Page{Width: 300, Height: 144, FontSize: 12, Lines: []string{"This is a PDF named .txt."}}
}

// scanPage is the text of samples/scan.png.
var scanPage = ocrtest.Page{Width: 612, Height: 380, FontSize: 16, Lines: []string{
	"ACME OFFICE SUPPLIES - INVOICE INV-2024-0193",
	"",
	"Date: 14 October 2024",
	"Bill to: Helena Novak, Brightside Dental Clinic",
	"Email: helena.novak@brightside-dental.example",
	"",
	"Printer paper, 40 boxes               $320.00",
	"Toner cartridges, 6 units             $474.00",
	"Total due by 13 November 2024         $794.00",
}}

// renderScan renders samples/scan.png with pdftoppm.
func renderScan(ctx context.Context, dir string) error {
	tmp, err := os.MkdirTemp("", "samples-scan-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	png, err := scanPage.RenderPNG(ctx, tmp, 150)
	if err != nil {
		return fmt.Errorf("scan.png: %w", err)
	}
	b, err := os.ReadFile(png)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "docs", "scan.png"), b, 0o644)
}

func randomBytes(n int) []byte {
	r := rand.New(rand.NewPCG(2024, 10))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return b
}

// binaryish is a ".txt" that is mostly control bytes and NULs with words
// between them: not text by any reasonable reading.
func binaryish() []byte {
	r := rand.New(rand.NewPCG(7, 7))
	var b bytes.Buffer
	for i := range 400 {
		if i%5 == 0 {
			b.WriteString("record ")
		}
		b.WriteByte(byte(r.UintN(32)))
		b.WriteByte(0)
		b.WriteByte(0x80 + byte(r.UintN(32)))
	}
	return b.Bytes()
}

// mixedUTF8 is a UTF-8 letter with a stray NUL and two invalid bytes, as a
// broken export leaves them: readable as UTF-8 with replacements.
func mixedUTF8() []byte {
	var b bytes.Buffer
	b.WriteString("Dear Ms. Søren-Ødegård,\n\nThe refund of €1,250.00 for order 88412 was issued on 3 October 2024.\x00\n")
	b.WriteString("Our café partner Zoë Müller will confirm by e-mail (zoe.mueller@example.org).\n")
	b.Write([]byte{0xFF, 0xFE - 1})
	b.WriteString("\nKind regards,\nCustomer Service — Nordlicht GmbH\n")
	return b.Bytes()
}

func utf16NoBOM(s string) []byte {
	var b bytes.Buffer
	for _, r := range s {
		b.WriteByte(byte(r))
		b.WriteByte(byte(r >> 8))
	}
	return b.Bytes()
}

func encryptedDOCX() []byte {
	info := append([]byte{4, 0, 4, 0, 0x40, 0, 0, 0}, []byte(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?><encryption xmlns="http://schemas.microsoft.com/office/2006/encryption"><keyData saltSize="16" blockSize="16" keyBits="256" hashSize="64" cipherAlgorithm="AES" cipherChaining="ChainingModeCBC" hashAlgorithm="SHA512"/></encryption>`)...)
	return compoundFile([]cfbStream{
		{name: "EncryptionInfo", data: info},
		{name: "EncryptedPackage", data: randomBytes(6000)},
	})
}

func legacyDOC() []byte {
	fib := []byte{0xEC, 0xA5, 0xC1, 0x00} // Word 97 FIB magic and version
	return compoundFile([]cfbStream{
		{name: "WordDocument", data: fib},
		{name: "1Table", data: nil},
	})
}

func tinyGIF() []byte {
	img := image.NewPaletted(image.Rect(0, 0, 8, 8), []color.Color{color.White, color.Black})
	for i := range 8 {
		img.SetColorIndex(i, i, 1)
	}
	var b bytes.Buffer
	_ = gif.Encode(&b, img, nil)
	return b.Bytes()
}

var notesMD = strings.TrimLeft(`
# Project Falcon — kickoff notes

**Date:** 21 October 2024  
**Attendees:** Aisha Khan (PM), Tomás Ruiz, Wei Zhang, Olga Petrova

## Decisions

1. The pilot runs from 4 November 2024 to 31 January 2025 in the Leeds office.
2. Budget is capped at £185,000; Aisha Khan signs off anything above £10,000.
3. Weekly status goes to [the steering group](https://intranet.example/falcon/steering) every Friday.

## Owners

| Workstream     | Owner        | Due date         | Contact                     |
|----------------|--------------|------------------|-----------------------------|
| Data migration | Wei Zhang    | 15 November 2024 | wei.zhang@falcon.example    |
| Training       | Olga Petrova | 2 December 2024  | olga.petrova@falcon.example |
| Vendor review  | Tomás Ruiz   | 29 November 2024 | tomas.ruiz@falcon.example   |

## Open questions

- Can the vendor (Helix Data Ltd) deliver the API by 18 November 2024?
- Who replaces Tomás during his leave from 9 to 20 December?
  - Proposal: Olga covers vendor calls.

> Risk: the legacy CRM export takes 14 hours; Wei suggests running it over the weekend of 16–17 November.

The export is started with:

`+"```"+`sh
crm-export --since 2019-01-01 --out /data/falcon/export.csv
`+"```"+`

Send corrections to [the project office](mailto:falcon-pmo@falcon.example).
`, "\n")

var pageHTML = strings.TrimLeft(`
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>City council approves riverside park budget — Millbrook Gazette</title>
<style>
  body { font-family: Georgia, serif; } .ad { display: none; }
</style>
<script>
  window.analytics = { track: function (e) { console.log("tracked", e); } };
  document.addEventListener("DOMContentLoaded", function () { analytics.track("view"); });
</script>
</head>
<body>
<header class="site-header">
  <a href="/">Millbrook Gazette</a>
  <nav><ul><li><a href="/news">News</a></li><li><a href="/sport">Sport</a></li><li><a href="/weather">Weather</a></li></ul></nav>
</header>
<div class="layout">
<main>
<article>
  <h1>City council approves riverside park budget</h1>
  <p class="byline">By Daniel Okafor, 12 September 2024</p>
  <p>The Millbrook city council voted 7 to 2 on Tuesday to approve a budget of $2.4 million for the
     Riverside Park renovation. Construction is expected to start on 3 March 2025 and finish by
     October 2025.</p>
  <p>Council member Rebecca Stein, who chairs the parks committee, said the plan "finally gives the east
     side the green space it was promised in 2016".</p>
  <h2>What the money pays for</h2>
  <table>
    <thead><tr><th>Item</th><th>Cost</th></tr></thead>
    <tbody>
      <tr><td>Playground and splash pad</td><td>$850,000</td></tr>
      <tr><td>Riverbank restoration</td><td>$1,100,000</td></tr>
      <tr><td>Lighting and paths</td><td>$450,000</td></tr>
    </tbody>
  </table>
  <h2>Public comment</h2>
  <p>Residents can comment until 30 September 2024 by writing to
     <a href="mailto:parks@millbrook.example">the parks department</a> or at the library on
     Elm Street.</p>
  <ul>
    <li>Open house: 18 September 2024, 6 pm, Millbrook Library</li>
    <li>Online survey: closes 30 September 2024</li>
  </ul>
  <form action="/subscribe"><label>Get the newsletter <input type="email" name="email"></label><button>Subscribe</button></form>
</article>
</main>
<aside class="related"><h3>Related</h3><p>Budget talks stall over school repairs</p></aside>
</div>
<footer><p>&copy; 2024 Millbrook Gazette. Contact newsroom@millbrook-gazette.example</p></footer>
<noscript><img src="/pixel.gif" alt=""></noscript>
</body>
</html>
`, "\n")

var letterUTF8 = strings.TrimLeft(`
Zürich, 28 October 2024

Dear Mr. Oyelaran,

Thank you for your order no. 55-2190 of 21 October 2024. We confirm delivery of 12 ergonomic
office chairs (model Aeron-Plus) to your office at Bahnhofstrasse 14, 8001 Zürich, on
Monday 11 November 2024 between 8:00 and 12:00.

The total amount of CHF 9,840.00 (including VAT of CHF 737.00) is payable within 30 days,
by 27 November 2024, to IBAN CH93 0076 2011 6238 5295 7.

If anything changes, please contact our logistics coordinator, Ms. Anna Brändli, at
anna.braendli@sitzwerk.example or on +41 44 555 01 87.

Kind regards,

Jürg Hofmann
Sales Manager, Sitzwerk AG
`, "\n")

var latin1Letter = strings.TrimLeft(`
Lyon, le 4 novembre 2024

Madame Hélène Lefèvre,

Nous accusons réception de votre dossier n° 2024-778 déposé le 29 octobre 2024. Le montant
remboursé, soit 1 245,60 EUR, sera versé sur votre compte avant le 15 novembre 2024.

Pour toute question, écrivez à François Müller (francois.muller@mutuelle-rhone.example) ou
appelez le 04 72 55 01 99, du lundi au vendredi de 9 h à 17 h.

Veuillez agréer, Madame, l'expression de nos salutations distinguées.

Agnès Dupré
Service des prestations, Mutuelle du Rhône
`, "\n")
