package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/docpipe/docpipe/internal/testbin"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// BenchmarkCompare runs, on one real-producer PDF of about 3,000 pages,
// bare pdftotext, PyMuPDF, and the whole docpipe pipeline with poppler and
// with the pure-Go extractor, and prints seconds, pages/s and how well each
// one's words agree with pdftotext's. `make bench-compare` runs it.
//
// Every row runs DOCPIPE_COMPARE_ROUNDS times (default 3), in turn, and
// the median is reported. The PDF is DOCPIPE_BENCH_PDF, else the corpus's enscript-3000p.pdf in
// DOCPIPE_CORPUS, else the same file made here with enscript and ps2pdf
// (cached under the user cache directory); without those tools the
// benchmark skips and says why.
func BenchmarkCompare(b *testing.B) {
	pdf := comparePDF(b)
	if _, err := exec.LookPath("pdftotext"); err != nil {
		b.Skip("pdftotext (poppler-utils) is not installed")
	}
	pages := pdfPages(b, pdf)
	bin := testbin.Docpipe(b)
	dir := b.TempDir()

	type row struct {
		name    string
		run     func() (string, error) // the text, or "" when read later
		text    func() (string, error) // reads the text outside the timing
		seconds []float64
		words   map[string]int
		note    string
	}
	readFile := func(p string) func() (string, error) {
		return func() (string, error) {
			raw, err := os.ReadFile(p)
			return string(raw), err
		}
	}
	bareOut := filepath.Join(dir, "pdftotext.txt")
	rows := []*row{{name: "pdftotext", text: readFile(bareOut), run: func() (string, error) {
		if msg, err := exec.Command("pdftotext", "-q", pdf, bareOut).CombinedOutput(); err != nil {
			return "", fmt.Errorf("%v: %s", err, msg)
		}
		return "", nil
	}}}
	if py, reason := pymupdfPython(b); py != "" {
		script := filepath.Join(dir, "pymupdf_text.py")
		if err := os.WriteFile(script, []byte(pymupdfScript), 0o644); err != nil {
			b.Fatal(err)
		}
		out := filepath.Join(dir, "pymupdf.txt")
		rows = append(rows, &row{name: "PyMuPDF", text: readFile(out), run: func() (string, error) {
			if msg, err := exec.Command(py, script, pdf, out).CombinedOutput(); err != nil {
				return "", fmt.Errorf("%v: %s", err, msg)
			}
			return "", nil
		}})
	} else {
		rows = append(rows, &row{name: "PyMuPDF", note: "skipped: " + reason})
	}
	for _, backend := range []string{"poppler", "go"} {
		var home, id string
		rows = append(rows, &row{name: "docpipe --pdf " + backend,
			run: func() (string, error) {
				home = benchHome(b) // a fresh home: nothing reused
				out, err := exec.Command(bin, "run", "--home", home, "--progress", "none", "--json", "--pdf", backend, pdf).Output()
				if err != nil {
					return "", fmt.Errorf("docpipe run: %v", err)
				}
				var res struct {
					WorkflowID string `json:"workflow_id"`
				}
				if err := json.Unmarshal(bytes.SplitN(out, []byte("\n"), 2)[0], &res); err != nil {
					return "", fmt.Errorf("docpipe run --json: %v", err)
				}
				id = res.WorkflowID
				return "", nil
			},
			text: func() (string, error) {
				out, err := exec.Command(bin, "show", "--home", home, "--text", id).Output()
				return string(out), err
			},
		})
	}

	// Rounds take every row in turn, so load that comes and goes on a
	// shared machine falls on all of them alike; the median is reported.
	rounds := 3
	if v := os.Getenv("DOCPIPE_COMPARE_ROUNDS"); v != "" {
		fmt.Sscan(v, &rounds)
	}
	for range max(1, rounds) {
		for _, r := range rows {
			if r.run == nil || r.note != "" {
				continue
			}
			start := time.Now()
			_, err := r.run()
			r.seconds = append(r.seconds, time.Since(start).Seconds())
			if err == nil && r.words == nil {
				var text string
				text, err = r.text()
				r.words = wordCounts(text)
			}
			if err != nil {
				r.note, r.words = err.Error(), nil
			}
		}
	}
	bare := rows[0]
	if bare.note != "" {
		b.Fatal(bare.note)
	}

	fmt.Printf("\n%s: %d pages\n", filepath.Base(pdf), pages)
	fmt.Printf("%-22s %9s %9s %16s\n", "", "seconds", "pages/s", "words vs pdftotext")
	for _, r := range rows {
		if r.words == nil {
			fmt.Printf("%-22s %s\n", r.name, r.note)
			continue
		}
		secs := median(r.seconds)
		fmt.Printf("%-22s %9.2f %9.0f %15.2f%%\n", r.name, secs, float64(pages)/secs, 100*wordAgreement(bare.words, r.words))
	}
	fmt.Printf("(median of %d rounds)\n", len(bare.seconds))
	byName := map[string]*row{}
	for _, r := range rows {
		byName[r.name] = r
	}
	if d := byName["docpipe --pdf poppler"]; d.words != nil {
		ratio := median(d.seconds) / median(bare.seconds)
		fmt.Printf("docpipe-poppler / pdftotext: %.2fx\n", ratio)
		b.ReportMetric(ratio, "x-pdftotext")
		if py := byName["PyMuPDF"]; py.words != nil {
			speed := median(py.seconds) / median(d.seconds)
			fmt.Printf("docpipe-poppler vs PyMuPDF pages/s: %.2fx\n", speed)
			b.ReportMetric(speed, "x-PyMuPDF-pages/s")
		}
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// pymupdfScript writes the text of every page, in order, to the output.
const pymupdfScript = `import sys
import pymupdf
with pymupdf.open(sys.argv[1]) as doc, open(sys.argv[2], "w", encoding="utf-8") as out:
    for page in doc:
        out.write(page.get_text())
        out.write("\f")
`

// pymupdfPython returns a Python that can import pymupdf, installing it
// with pip into a virtual environment in the cache when it must, or the
// reason there is none.
func pymupdfPython(b *testing.B) (python, reason string) {
	if _, err := exec.LookPath("python3"); err != nil {
		return "", "python3 is not installed"
	}
	if exec.Command("python3", "-c", "import pymupdf").Run() == nil {
		return "python3", ""
	}
	venv := filepath.Join(benchCache(b), "pymupdf-venv")
	py := filepath.Join(venv, "bin", "python3")
	if exec.Command(py, "-c", "import pymupdf").Run() == nil {
		return py, ""
	}
	if out, err := exec.Command("python3", "-m", "venv", venv).CombinedOutput(); err != nil {
		return "", fmt.Sprintf("python3 -m venv: %v: %s", err, lastLine(out))
	}
	if out, err := exec.Command(py, "-m", "pip", "install", "-q", "pymupdf").CombinedOutput(); err != nil {
		return "", fmt.Sprintf("pip install pymupdf: %v: %s", err, lastLine(out))
	}
	return py, ""
}

func lastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

func benchCache(b *testing.B) string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, "docpipe-bench")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	return dir
}

// comparePDF finds or makes the 3,000-page enscript PDF.
func comparePDF(b *testing.B) string {
	if p := os.Getenv("DOCPIPE_BENCH_PDF"); p != "" {
		return p
	}
	if dir := os.Getenv("DOCPIPE_CORPUS"); dir != "" {
		if p := filepath.Join(dir, "enscript-3000p.pdf"); fileExists(p) {
			return p
		}
	}
	p := filepath.Join(benchCache(b), "enscript-3000p.pdf")
	if fileExists(p) {
		return p
	}
	for _, tool := range []string{"enscript", "ps2pdf"} {
		if _, err := exec.LookPath(tool); err != nil {
			b.Skipf("%s is not installed: set DOCPIPE_BENCH_PDF to a long PDF made by a real producer", tool)
		}
	}
	// The same text as samples/corpus/build.sh's enscript-3000p.
	var txt bytes.Buffer
	for i := 1; i <= 210000; i++ {
		fmt.Fprintf(&txt, "%06d the confidential workflow of office number %d is efficient and affluent\n", i, i%97)
	}
	work := b.TempDir()
	ps, tmp := filepath.Join(work, "big.ps"), filepath.Join(work, "big.pdf")
	en := exec.Command("enscript", "-q", "-B", "-o", ps)
	en.Stdin = &txt
	if out, err := en.CombinedOutput(); err != nil {
		b.Fatalf("enscript: %v: %s", err, out)
	}
	if out, err := exec.Command("ps2pdf", ps, tmp).CombinedOutput(); err != nil {
		b.Fatalf("ps2pdf: %v: %s", err, out)
	}
	if err := os.Rename(tmp, p); err != nil {
		b.Fatal(err)
	}
	return p
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Size() > 0
}

func pdfPages(b *testing.B, pdf string) int {
	out, err := exec.Command("pdfinfo", pdf).Output()
	if err != nil {
		b.Fatalf("pdfinfo: %v", err)
	}
	for line := range strings.SplitSeq(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "Pages:"); ok {
			var n int
			fmt.Sscan(v, &n)
			return n
		}
	}
	b.Fatal("pdfinfo printed no page count")
	return 0
}

// wordCounts is the multiset of words after NFKC and case folding, so that
// ligatures and case do not count as differences.
func wordCounts(text string) map[string]int {
	fold := cases.Fold()
	counts := map[string]int{}
	for _, w := range strings.FieldsFunc(fold.String(norm.NFKC.String(text)), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	}) {
		counts[w]++
	}
	return counts
}

// wordAgreement is the share of words two texts have in common: twice the
// multiset intersection over the sum of both sizes (1 for the same words).
func wordAgreement(a, b map[string]int) float64 {
	var common, total int
	for w, n := range a {
		common += min(n, b[w])
		total += n
	}
	for _, n := range b {
		total += n
	}
	if total == 0 {
		return 1
	}
	return 2 * float64(common) / float64(total)
}
