package pdftext

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// groffPDF finds or makes a 3,000-page two-column groff document: the
// corpus's groff-3000p.pdf (samples/corpus/build.sh writes the same
// file), else one cached under the user cache directory, else one made
// here with groff, which takes minutes. Without groff the benchmark skips.
func groffPDF(b *testing.B) string {
	b.Helper()
	if dir := os.Getenv("DOCPIPE_CORPUS"); dir != "" {
		if p := filepath.Join(dir, "groff-3000p.pdf"); nonEmpty(p) {
			return p
		}
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	p := filepath.Join(cache, "docpipe-bench", "groff-3000p.pdf")
	if nonEmpty(p) {
		return p
	}
	if _, err := exec.LookPath("groff"); err != nil {
		b.Skip("groff is not installed: set DOCPIPE_CORPUS to a corpus with groff-3000p.pdf (make corpus)")
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command("groff", "-ms", "-Tpdf")
	cmd.Stdin = bytes.NewReader(groffSource(28800))
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Run(); err != nil {
		b.Fatalf("groff: %v: %s", err, errs.Bytes())
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, out.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		b.Fatal(err)
	}
	return p
}

// groffSource is ms input of n paragraphs in two columns, the prose of
// samples/corpus/build.sh: 24 paragraphs fill 2.5 pages.
func groffSource(n int) []byte {
	var b bytes.Buffer
	b.WriteString(".TL\nGroff two-column report\n.2C\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `.PP
Paragraph %d. The confidential workflow of the office is efficient and
affluent; the official staff find the offline files baffling, shuffle
the effluent reports and fly to the fjords. Internationalization,
characteristically incomprehensible, responsibilities, telecommunications
and electroencephalography are long words that narrow columns hyphenate.
Sufficiently effective, the difficult afflictions differ from the fluffy
suffixes; a flawless firefly offers waffles to the scaffolding officer.
`, i)
	}
	return b.Bytes()
}

func nonEmpty(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Size() > 0
}
