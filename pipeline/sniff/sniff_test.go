package sniff

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

const samples = "../../samples"

func utf16le(s string, bom bool) []byte {
	var b []byte
	if bom {
		b = append(b, 0xFF, 0xFE)
	}
	for _, r := range s {
		b = binary.LittleEndian.AppendUint16(b, uint16(r))
	}
	return b
}

func utf16be(s string, bom bool) []byte {
	var b []byte
	if bom {
		b = append(b, 0xFE, 0xFF)
	}
	for _, r := range s {
		b = binary.BigEndian.AppendUint16(b, uint16(r))
	}
	return b
}

func zipOf(t *testing.T, names ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range names {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: n, Method: zip.Store}) // cheap for thousands of entries
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write([]byte("<x/>"))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestDetect(t *testing.T) {
	t.Parallel()
	letter := "Dear Ms. Smith,\n\nThank you for your letter of 3 May.\n1. First point\n2. Second point\n\nRegards,\nJohn\n"
	tests := []struct {
		name    string
		head    []byte
		want    extract.Format
		errName string
		errText string
	}{
		{name: "empty", head: nil, errName: steperr.NameInvalidDocument, errText: "file is empty"},
		{name: "pdf", head: []byte("%PDF-1.7\n%\xe2\xe3\n1 0 obj"), want: extract.FormatPDF},
		{name: "pdf after junk", head: append(bytes.Repeat([]byte{0x00, 0x1F}, 300), "%PDF-1.4\n"...), want: extract.FormatPDF},
		{name: "pdf marker past 1 KB is text", head: []byte(strings.Repeat("plain words ", 100) + "%PDF-1.4"), want: extract.FormatText},
		{name: "png", head: []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), want: extract.FormatPNG},
		{name: "jpeg", head: []byte{0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10, 'J', 'F', 'I', 'F'}, want: extract.FormatJPEG},
		{name: "tiff le", head: []byte("II*\x00\x08\x00\x00\x00"), want: extract.FormatTIFF},
		{name: "tiff be", head: []byte("MM\x00*\x00\x00\x00\x08"), want: extract.FormatTIFF},
		{name: "gif", head: []byte("GIF89a\x08\x00\x08\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9\x04"), errName: steperr.NameUnsupportedFormat, errText: "image/gif"},
		{name: "rtf", head: []byte(`{\rtf1\ansi Hello}`), errName: steperr.NameUnsupportedFormat, errText: "RTF"},
		{name: "random", head: bytes.Repeat([]byte{0x01, 0x9d, 0xfe, 0x07, 0x88, 0x00, 0x13}, 100), errName: steperr.NameUnsupportedFormat, errText: "binary data of unknown format"},
		{name: "html doctype", head: []byte("<!DOCTYPE html>\n<html><body><p>Hi</p></body></html>"), want: extract.FormatHTML},
		{name: "html after bom, space, comment", head: []byte("\xEF\xBB\xBF  \n<!-- generated -->\n<HTML lang=en><p>x"), want: extract.FormatHTML},
		{name: "xhtml", head: []byte(`<?xml version="1.0"?>` + "\n<html xmlns=\"http://www.w3.org/1999/xhtml\"><body/></html>"), want: extract.FormatHTML},
		{name: "html utf-16 bom", head: utf16be("<html><body>Hi</body></html>", true), want: extract.FormatHTML},
		{name: "markdown heading first", head: []byte("# Title\n\nSome prose.\n"), want: extract.FormatMarkdown},
		{name: "markdown table", head: []byte("Budget\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nSee [docs](http://x.example).\n"), want: extract.FormatMarkdown},
		{name: "markdown setext and fence", head: []byte("Notes\n=====\n\n```\ncode\n```\n"), want: extract.FormatMarkdown},
		{name: "lists alone stay text", head: []byte(letter), want: extract.FormatText},
		{name: "div start is not html", head: []byte("<div>not a page</div> and more words\n"), want: extract.FormatText},
		{name: "latin-1 text", head: []byte("Caf\xe9 cr\xe8me br\xfbl\xe9e, 3 \xa3\n"), want: extract.FormatText},
		{name: "utf-16le bom text", head: utf16le("Hello world, this is text.\n", true), want: extract.FormatText},
		{name: "utf-16le without bom", head: utf16le("Hello world, this is text.\n", false), want: extract.FormatText},
		{name: "utf-32 is binary", head: []byte("\xFF\xFE\x00\x00H\x00\x00\x00i\x00\x00\x00"), errName: steperr.NameUnsupportedFormat},
		{name: "docx zip", head: zipOf(t, "[Content_Types].xml", "word/document.xml"), want: extract.FormatDOCX},
		{name: "xlsx zip", head: zipOf(t, "[Content_Types].xml", "xl/workbook.xml"), errName: steperr.NameUnsupportedFormat, errText: "XLSX"},
		{name: "plain zip", head: zipOf(t, "a.txt"), errName: steperr.NameUnsupportedFormat, errText: "not a DOCX"},
		{name: "wav", head: []byte("RIFF\x24\x08\x00\x00WAVEfmt \x10\x00\x00\x00"), want: extract.FormatWAV},
		{name: "riff that is not wave", head: []byte("RIFF\x24\x08\x00\x00AVI LIST\x10\x00\x00\x00\x00\x01"), errName: steperr.NameUnsupportedFormat},
		{name: "mp3 with id3 tag", head: []byte("ID3\x04\x00\x00\x00\x00\x00\x23TSSE"), want: extract.FormatMP3},
		{name: "mp3 frame sync", head: []byte{0xFF, 0xFB, 0x90, 0x64, 0x00, 0x0F, 0xF0, 0x00, 0x00, 0x69, 0x00, 0x00}, want: extract.FormatMP3},
		{name: "adts aac is not mp3", head: []byte{0xFF, 0xF1, 0x50, 0x80, 0x02, 0x1F, 0xFC, 0x21, 0x00, 0x49, 0x90, 0x02}, errName: steperr.NameUnsupportedFormat},
		{name: "flac", head: []byte("fLaC\x00\x00\x00\x22\x10\x00\x10\x00"), want: extract.FormatFLAC},
		{name: "ogg", head: []byte("OggS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x01vorbis"), want: extract.FormatOGG},
		{name: "empty zip", head: []byte("PK\x05\x06" + strings.Repeat("\x00", 18)), errName: steperr.NameInvalidDocument},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Detect(tc.head)
			if tc.errName != "" {
				if steperr.Name(err) != tc.errName || !strings.Contains(err.Error(), tc.errText) {
					t.Fatalf("Detect = %q, %v; want %s containing %q", got, err, tc.errName, tc.errText)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Detect = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestDetectEncoding(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		in     []byte
		want   string
		bom    int
		isText bool
	}{
		{"ascii", []byte("hello\tworld\r\n"), EncodingUTF8, 0, true},
		{"utf-8", []byte("Zürich — 5 €"), EncodingUTF8, 0, true},
		{"utf-8 bom", []byte("\xEF\xBB\xBFhi"), EncodingUTF8, 3, true},
		{"utf-8 cut mid-rune", []byte("Zürich €")[:10], EncodingUTF8, 0, true},
		{"mostly utf-8 with a bad byte", []byte("Müller, Zoë, café, naïve, Ødegård \xff end"), EncodingUTF8, 0, true},
		{"latin-1", []byte("Lef\xe8vre, \xe9t\xe9 \xe0 Lyon"), EncodingWindows1252, 0, true},
		{"cp1252 quotes", []byte("\x93quoted\x94 \x80 5"), EncodingWindows1252, 0, true},
		{"utf-16le bom", utf16le("hi there", true), EncodingUTF16LE, 2, true},
		{"utf-16be bom", utf16be("hi there", true), EncodingUTF16BE, 2, true},
		{"utf-16le no bom", utf16le("plain words here", false), EncodingUTF16LE, 0, true},
		{"utf-16be no bom", utf16be("plain words here", false), EncodingUTF16BE, 0, true},
		{"controls", bytes.Repeat([]byte("ab\x01\x02"), 50), EncodingUTF8, 0, false},
		{"nuls", bytes.Repeat([]byte("abc\x00\x00\x00"), 50), "", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, ok := DetectEncoding(tc.in)
			if ok != tc.isText {
				t.Fatalf("ok = %v, want %v (%+v)", ok, tc.isText, got)
			}
			if tc.isText && (got.Name != tc.want || got.BOMLen != tc.bom) {
				t.Fatalf("DetectEncoding = %+v, want %s bom %d", got, tc.want, tc.bom)
			}
		})
	}
}

func TestInspectSamples(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file     string
		want     extract.Format
		encoding string
		errName  string
		errText  string
	}{
		{file: "docs/report.docx", want: extract.FormatDOCX},
		{file: "docs/notes.md", want: extract.FormatMarkdown, encoding: EncodingUTF8},
		{file: "docs/page.html", want: extract.FormatHTML, encoding: "utf-8"},
		{file: "docs/letter.txt", want: extract.FormatText, encoding: EncodingUTF8},
		{file: "docs/letter-latin1.txt", want: extract.FormatText, encoding: EncodingWindows1252},
		{file: "docs/scan.png", want: extract.FormatPNG},
		{file: "bad/pdf-named.txt", want: extract.FormatPDF},
		{file: "bad/mixed-utf8.txt", want: extract.FormatText, encoding: EncodingUTF8},
		{file: "bad/utf16-nobom.txt", want: extract.FormatText, encoding: EncodingUTF16LE},
		{file: "bad/empty.txt", errName: steperr.NameInvalidDocument, errText: "file is empty"},
		{file: "bad/random.bin", errName: steperr.NameUnsupportedFormat, errText: "binary data of unknown format"},
		{file: "bad/binary-ish.txt", errName: steperr.NameUnsupportedFormat},
		{file: "bad/truncated.docx", errName: steperr.NameInvalidDocument, errText: "corrupt zip"},
		{file: "bad/zipbomb.docx", errName: steperr.NameTooLarge, errText: "zip bomb"},
		{file: "bad/encrypted.docx", errName: steperr.NamePasswordProtected, errText: "encrypted"},
		{file: "bad/legacy.doc", errName: steperr.NameUnsupportedFormat, errText: ".doc"},
		{file: "bad/spreadsheet.xlsx", errName: steperr.NameUnsupportedFormat, errText: "XLSX"},
		{file: "bad/image.gif", errName: steperr.NameUnsupportedFormat, errText: "image/gif"},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(samples, tc.file)
			info, err := Inspect(context.Background(), path, extract.Limits{})
			if tc.errName != "" {
				if steperr.Name(err) != tc.errName || !strings.Contains(err.Error(), tc.errText) {
					t.Fatalf("Inspect = %+v, %v; want %s containing %q", info, err, tc.errName, tc.errText)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			st, _ := os.Stat(path)
			want := Info{Format: tc.want, MIMEType: tc.want.MIMEType(), Encoding: tc.encoding, Size: st.Size()}
			if info != want {
				t.Fatalf("Inspect = %+v, want %+v", info, want)
			}
		})
	}
}

// writeTemp writes b to a file in a fresh temporary directory.
func writeTemp(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// lyingZip has a word/document.xml that declares a few bytes and inflates
// to 4 MiB.
func lyingZip(t *testing.T) []byte {
	t.Helper()
	var comp bytes.Buffer
	fw, _ := flate.NewWriter(&comp, flate.BestSpeed)
	zeros := make([]byte, 1<<20)
	for range 4 {
		_, _ = fw.Write(zeros)
	}
	_ = fw.Close()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateRaw(&zip.FileHeader{
		Name: "word/document.xml", Method: zip.Deflate,
		CompressedSize64: uint64(comp.Len()), UncompressedSize64: 2048,
	})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = w.Write(comp.Bytes())
	_ = zw.Close()
	return buf.Bytes()
}

func TestInspectLimits(t *testing.T) {
	t.Parallel()
	report, err := os.ReadFile(filepath.Join(samples, "docs/report.docx"))
	if err != nil {
		t.Fatal(err)
	}
	many := make([]string, MaxZipEntries+1)
	for i := range many {
		many[i] = "word/f" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + time.Duration(i).String()
	}
	var encrypted bytes.Buffer
	zw := zip.NewWriter(&encrypted)
	w, _ := zw.CreateHeader(&zip.FileHeader{Name: "word/document.xml", Flags: 0x1})
	_, _ = w.Write([]byte("secret"))
	_ = zw.Close()

	tests := []struct {
		name    string
		data    []byte
		limits  extract.Limits
		errName string
		errText string
	}{
		{"file size", report, extract.Limits{MaxFileBytes: 1000}, steperr.NameTooLarge, "over the limit of 1000"},
		{"declared sum", report, extract.Limits{MaxDecompressedBytes: 4096}, steperr.NameTooLarge, "declares more than 4096"},
		{"lying sizes", lyingZip(t), extract.Limits{}, steperr.NameTooLarge, "beyond its declared 2048 bytes"},
		{"too many entries", zipOf(t, many...), extract.Limits{}, steperr.NameTooLarge, "entries"},
		{"zip encryption", encrypted.Bytes(), extract.Limits{}, steperr.NamePasswordProtected, "encrypted"},
		{"truncated cfb", append(append([]byte{}, cfbMagic...), make([]byte, 100)...), extract.Limits{}, steperr.NameInvalidDocument, "compound file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Inspect(context.Background(), writeTemp(t, "f", tc.data), tc.limits)
			if steperr.Name(err) != tc.errName || !strings.Contains(err.Error(), tc.errText) {
				t.Fatalf("Inspect error = %v; want %s containing %q", err, tc.errName, tc.errText)
			}
		})
	}
}

func TestInspectCanceled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Inspect(ctx, filepath.Join(samples, "docs/report.docx"), extract.Limits{}); err != context.Canceled {
		t.Fatalf("Inspect on a canceled context = %v", err)
	}
}

func TestArchiveBudgetSharedAcrossEntries(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range []string{"a", "b"} {
		w, _ := zw.Create(n)
		_, _ = w.Write(bytes.Repeat([]byte("x"), 600))
	}
	_ = zw.Close()
	// Declared total 1200 > 1000 is refused up front...
	if _, err := NewArchive(bytes.NewReader(buf.Bytes()), int64(buf.Len()), extract.Limits{MaxDecompressedBytes: 1000}); steperr.Name(err) != steperr.NameTooLarge {
		t.Fatalf("declared total over the limit: %v", err)
	}
	// ...and with room for both, reading them counts against one budget.
	a, err := NewArchive(bytes.NewReader(buf.Bytes()), int64(buf.Len()), extract.Limits{MaxDecompressedBytes: 1200})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b"} {
		b, err := a.ReadAll(context.Background(), n, 1<<20)
		if err != nil || len(b) != 600 {
			t.Fatalf("ReadAll(%s) = %d bytes, %v", n, len(b), err)
		}
	}
	if _, err := a.ReadAll(context.Background(), "a", 1<<20); steperr.Name(err) != steperr.NameTooLarge {
		t.Fatalf("third read past the shared budget: %v", err)
	}
}

func BenchmarkDetect(b *testing.B) {
	head, err := os.ReadFile(filepath.Join(samples, "docs/notes.md"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(head)))
	for b.Loop() {
		if _, err := Detect(head); err != nil {
			b.Fatal(err)
		}
	}
}
