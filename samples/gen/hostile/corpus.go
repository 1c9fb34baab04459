package hostile

import (
	"io"
	"os"
	"path/filepath"
)

// File is one file of the corpus.
type File struct {
	Name  string // with the extension docpipe recognises it by
	Write func(w io.Writer) error
}

// Corpus is every hostile file at scale: 1 is full size (bombs of
// 64-256 MB decompressed, paragraphs of 100 MB), smaller scales shrink
// every size by that factor, for quick runs that still reach every code
// path.
func Corpus(scale float64) []File {
	mb := func(n int64) int64 { return max(1, int64(float64(n<<20)*scale)) }
	n := func(k int) int { return max(1, int(float64(k)*scale)) }
	return []File{
		{"pdf-content-bomb.pdf", func(w io.Writer) error { return ContentBomb(w, mb(64)) }},
		{"pdf-operator-bomb.pdf", func(w io.Writer) error { return OperatorBomb(w, mb(256)) }},
		{"pdf-operand-bomb.pdf", func(w io.Writer) error { return OperandBomb(w, mb(128)) }},
		{"pdf-nesting-bomb.pdf", func(w io.Writer) error { return NestingBomb(w, mb(64)) }},
		{"pdf-string-bomb.pdf", func(w io.Writer) error { return StringBomb(w, mb(64)) }},
		{"pdf-form-fanout.pdf", func(w io.Writer) error { return FormFanOut(w, 8) }},
		{"pdf-image-bomb.pdf", func(w io.Writer) error { return ImageBomb(w, mb(1024)) }},
		{"pdf-objstm-bomb.pdf", func(w io.Writer) error { return ObjectStreamBomb(w, mb(256), 20) }},
		{"pdf-xref-offset-bomb.pdf", XrefOffsetBomb},
		{"pdf-xref-size-bomb.pdf", TrailerSizeBomb},
		{"pdf-xref-stream-size-bomb.pdf", XrefStreamSizeBomb},
		{"pdf-xref-stream-index-bomb.pdf", XrefStreamIndexBomb},
		{"pdf-xref-stream-empty-rows.pdf", XrefStreamEmptyRowBomb},
		{"pdf-xref-stream-row-width.pdf", XrefStreamWidthBomb},
		{"pdf-xref-stream-predictor.pdf", XrefStreamPredictorBomb},
		{"pdf-xref-loop.pdf", XrefLoop},
		{"pdf-predictor-bomb.pdf", PredictorBomb},
		{"docx-huge-paragraph.docx", func(w io.Writer) error { return DOCXHugeParagraph(w, mb(100)) }},
		{"docx-deep-nesting.docx", func(w io.Writer) error { return DOCXDeepNesting(w, n(1_000_000)) }},
		{"docx-zip-bomb.docx", func(w io.Writer) error { return DOCXZipBomb(w, mb(1100)) }},
		{"html-deep-nesting.html", func(w io.Writer) error { return HTMLDeepNesting(w, n(1_000_000)) }},
		{"md-deep-nesting.md", func(w io.Writer) error { return MarkdownDeepNesting(w, n(1_000_000)) }},
		{"md-references.md", func(w io.Writer) error { return MarkdownReferences(w, n(1_000_000)) }},
		{"text-one-line.txt", func(w io.Writer) error { return TextOneLine(w, mb(100)) }},
	}
}

// WriteFile writes f into dir and returns its path.
func (f File) WriteFile(dir string) (string, error) {
	path := filepath.Join(dir, f.Name)
	out, err := os.Create(path)
	if err != nil {
		return "", err
	}
	if err := f.Write(out); err != nil {
		out.Close()
		return "", err
	}
	return path, out.Close()
}
