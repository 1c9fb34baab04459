package plaintext

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/extract/extracttest"
	"github.com/docpipe/docpipe/pipeline/sniff"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// wholeExtract is Extract as it was before Stream: the whole file read,
// decoded and split at once. Stream must give exactly its units.
func wholeExtract(ctx context.Context, path string, limits extract.Limits) ([]extract.Unit, error) {
	limits = limits.WithDefaults()
	b, err := sniff.ReadFile(path, limits)
	if err != nil {
		return nil, err
	}
	text, _ := Decode(b)
	return wholeSplit(ctx, text, limits)
}

// wholeSplit is Split as it was: whole lines, whole paragraphs.
func wholeSplit(ctx context.Context, text string, limits extract.Limits) ([]extract.Unit, error) {
	s := NewSplitter("section", limits)
	var para []string
	flush := func() {
		if len(para) > 0 {
			s.Block(strings.Join(para, "\n"))
			para = para[:0]
		}
	}
	for i := 0; len(text) > 0; i++ {
		if i%65536 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		line := text
		if nl := strings.IndexByte(text, '\n'); nl >= 0 {
			line, text = text[:nl], text[nl+1:]
		} else {
			text = ""
		}
		for {
			ff := strings.IndexByte(line, '\f')
			if ff < 0 {
				break
			}
			if l := strings.TrimRight(line[:ff], " \t"); strings.TrimSpace(l) != "" {
				para = append(para, l)
			}
			flush()
			line = line[ff+1:]
		}
		line = strings.TrimRight(line, " \t")
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		para = append(para, line)
	}
	flush()
	return s.Units()
}

// wholeCut is cut as it was before cutOnce was taken out of it.
func wholeCut(text string, max int) []string {
	var out []string
	for {
		limit, runes := 0, 0
		for runes < max && limit < len(text) {
			_, size := utf8.DecodeRuneInString(text[limit:])
			limit += size
			runes++
		}
		if limit >= len(text) {
			break
		}
		at := strings.LastIndexByte(text[:limit+1], '\n')
		if at < limit/2 {
			at = strings.LastIndexFunc(text[:limit+1], unicode.IsSpace)
		}
		if at <= 0 {
			at = limit
		}
		if p := strings.TrimSpace(text[:at]); p != "" {
			out = append(out, p)
		}
		text = strings.TrimSpace(text[at:])
	}
	if text != "" || len(out) == 0 {
		out = append(out, text)
	}
	return out
}

// streamAll runs stream with a chunk size and collects its units.
func streamAll(ctx context.Context, path string, limits extract.Limits, chunk int) ([]extract.Unit, error) {
	return extracttest.Gather(func(emit func(extract.Unit) error) (int, error) {
		return stream(ctx, path, limits, chunk, emit)
	})
}

// sameAsWhole fails t unless stream, at every chunk size given, gives what
// wholeExtract gives for the file: the same units or the same error.
func sameAsWhole(t *testing.T, path string, limits extract.Limits, chunks ...int) {
	t.Helper()
	want, wantErr := wholeExtract(context.Background(), path, limits)
	for _, chunk := range chunks {
		got, err := streamAll(context.Background(), path, limits, chunk)
		if fmt.Sprint(err) != fmt.Sprint(wantErr) || steperr.Name(err) != steperr.Name(wantErr) {
			t.Fatalf("chunk %d: err = %v, want %v", chunk, err, wantErr)
		}
		if d := extracttest.DiffUnits(got, want); d != "" {
			t.Fatalf("chunk %d, limits %+v: %s", chunk, limits, d)
		}
	}
}

func utf16Bytes(s string, bigEndian, bom bool) []byte {
	var out []byte
	u := utf16.Encode([]rune(s))
	if bom {
		u = append([]uint16{0xFEFF}, u...)
	}
	for _, c := range u {
		if bigEndian {
			out = append(out, byte(c>>8), byte(c))
		} else {
			out = append(out, byte(c), byte(c>>8))
		}
	}
	return out
}

// chunks are the read sizes the equivalence tests use: single bytes, odd
// sizes that cut characters, CRLFs and UTF-16 pairs anywhere, and the
// default.
var chunks = []int{1, 2, 3, 5, 7, 64, 1000, chunkSize}

// sectionLimits make sections small enough that paragraphs are joined,
// cut, and cut while they stream.
var sectionLimits = []extract.Limits{{MaxSectionChars: 7}, {MaxSectionChars: 40}, {MaxSectionChars: 300}, {}}

func TestStreamMatchesWholeFile(t *testing.T) {
	t.Parallel()
	letter, err := os.ReadFile(filepath.Join(samples, "docs/letter.txt"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(letter)
	rng := rand.New(rand.NewPCG(1, 2))
	var tiny, huge, oneLine, mixedEOL strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&tiny, "p%d\n\n", i)
	}
	for i := range 2000 {
		fmt.Fprintf(&huge, "line %d of one paragraph with Grüße and 東京 %s\n", i, strings.Repeat("x", i%50))
	}
	for i := range 3000 {
		fmt.Fprintf(&oneLine, "word%d%s", i, []string{" ", "  ", "\t", "\u00a0", " \u3000 "}[i%5])
	}
	eols := []string{"\r\n", "\r", "\n", "\r\r\n", "\n\r", "\r\n\r\n", "\r\r"}
	for i := range 800 {
		mixedEOL.WriteString(strings.Repeat("ab", i%4) + eols[rng.IntN(len(eols))])
	}
	// Multibyte text in the first 64 KiB and beyond, then invalid bytes
	// far past the first chunk and the NUL-pattern head: a quarter of the
	// multibyte count keeps it UTF-8, more makes all of it Windows-1252.
	accented := strings.Repeat("Müller café naïve Zoë.\n", 3000)
	fewBad := accented + strings.Repeat("bad \xff byte\n", 3000) // 12000 multibyte, 3000 invalid
	manyBad := accented + strings.Repeat("bad \xff byte\n", 3001)
	cases := []struct {
		name string
		b    []byte
	}{
		{"utf-8", letter},
		{"utf-8 bom", append([]byte("\xEF\xBB\xBF"), letter...)},
		{"utf-16le bom", utf16Bytes(text, false, true)},
		{"utf-16be bom", utf16Bytes(text, true, true)},
		{"utf-16le no bom", utf16Bytes(text, false, false)},
		{"utf-16be no bom", utf16Bytes(text, true, false)},
		{"utf-16le odd length", append(utf16Bytes(text, false, true), 'x')},
		{"windows-1252", []byte(strings.Repeat("Lef\xe8vre \xe0 Lyon, \x93quoted\x94 \x80 12.\r\n\r\n", 200))},
		{"utf-32le bom is read as utf-8", []byte("\xFF\xFE\x00\x00a\x00\x00\x00")},
		{"mixed crlf, cr, lf", []byte(mixedEOL.String())},
		{"form feeds", []byte(strings.Repeat("page one  \fpage two\f\f\n\fthree \t\f\n  four\n\n", 300))},
		{"nuls and controls", []byte(strings.Repeat("a\x00b\x01c\td\x7f e\u0085f\ufeffg\x00\n", 500))},
		{"no line break", []byte(oneLine.String())},
		{"huge single paragraph", []byte(huge.String())},
		{"many tiny paragraphs", []byte(tiny.String())},
		{"invalid utf-8 late, still utf-8", []byte(fewBad)},
		{"invalid utf-8 late, windows-1252", []byte(manyBad)},
		{"utf-8 cut at the end", []byte(text + "\xe2\x82")},
		{"only whitespace", []byte(" \n\t\n\f \u00a0\n")},
		{"long runs of spaces", []byte("a" + strings.Repeat(" ", 5000) + "b" + strings.Repeat(" \t", 3000) + "\nc\n" + strings.Repeat(" ", 4000) + "d")},
		{"long no-break space runs at line ends", []byte("a" + strings.Repeat("\u00a0", 900) + "\nb" + strings.Repeat(" ", 900) + "\u00a0 \nc" + strings.Repeat("\u3000", 700) + strings.Repeat(" ", 700) + "\n\nd " + strings.Repeat("\u00a0", 50) + "  \n")},
		{"long indentation", []byte(strings.Repeat(" ", 3000) + "indented\n" + strings.Repeat("\t", 900) + "more\n\n" + strings.Repeat("\u2028", 100) + "x")},
		{"words longer than a section", []byte(strings.Repeat("é", 9000) + " " + strings.Repeat("z", 333) + "\n" + strings.Repeat("ü", 77))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := extracttest.WriteTemp(t, "in.txt", tc.b)
			sizes := chunks
			if testing.Short() && len(tc.b) > 64<<10 {
				// Reads of one and two bytes through 100 KB are most of
				// the test's time under -race; the odd sizes still cut
				// every kind of character, and the small inputs get all.
				sizes = slices.DeleteFunc(slices.Clone(chunks), func(n int) bool { return n < 3 })
			}
			for _, l := range sectionLimits {
				sameAsWhole(t, path, l, sizes...)
			}
		})
	}
}

// The existing sample files, and the errors: empty file, too large a
// file, too many sections.
func TestStreamMatchesWholeFileOnSamples(t *testing.T) {
	t.Parallel()
	for _, file := range []string{"docs/letter.txt", "docs/letter-latin1.txt", "docs/notes.md", "docs/page.html", "bad/mixed-utf8.txt", "bad/utf16-nobom.txt", "bad/binary-ish.txt", "bad/pdf-named.txt", "bad/empty.txt"} {
		path := filepath.Join(samples, file)
		for _, l := range append(sectionLimits, extract.Limits{MaxFileBytes: 10}, extract.Limits{MaxSectionChars: 100, MaxPages: 2}) {
			sameAsWhole(t, path, l, 1, 13, 4096, chunkSize)
		}
	}
}

// Random text from the characters the rules care about, in random chunk
// sizes: the broadest check that streaming changes nothing.
func TestStreamMatchesWholeFileRandom(t *testing.T) {
	t.Parallel()
	alphabet := []string{"a", "bc", "déf", " ", " ", "  ", "\t", "\n", "\n", "\r", "\r\n", "\f", "\u00a0", "\u3000", "\x00", "\x01", "\ufeff", "東", "\u2028", "\u1680", "\u205f", "\u0085", "\xc3", "word", "longerword"}
	rng := rand.New(rand.NewPCG(7, 7))
	dir := t.TempDir()
	files := 300
	if testing.Short() {
		files = 100 // each encoding still a few dozen times, with all limits
	}
	for i := range files {
		var b strings.Builder
		n := rng.IntN(3000)
		for range n {
			s := alphabet[rng.IntN(len(alphabet))]
			if rng.IntN(50) == 0 {
				s = strings.Repeat(s, rng.IntN(200)) // long runs
			}
			b.WriteString(s)
		}
		raw := []byte(b.String())
		if i%3 == 1 {
			raw = utf16Bytes(b.String(), i%2 == 0, i%4 == 1)
		}
		path := filepath.Join(dir, fmt.Sprintf("r%d.txt", i))
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		if len(raw) == 0 {
			continue
		}
		l := extract.Limits{MaxSectionChars: 1 + rng.IntN(60)}
		sameAsWhole(t, path, l, 1+rng.IntN(20), 1+rng.IntN(300))
	}
}

func FuzzStream(f *testing.F) {
	f.Add([]byte("a b\r\n\r\nc\fd"), 5, 3)
	f.Add([]byte("\xff\xfea\x00\r\x00"), 7, 1)
	f.Add([]byte(strings.Repeat(" \u00a0x", 40)), 4, 2)
	f.Fuzz(func(t *testing.T, b []byte, max, chunk int) {
		if len(b) == 0 || max < 1 || max > 500 || chunk < 1 || chunk > 1000 {
			t.Skip()
		}
		path := extracttest.WriteTemp(t, "f.txt", b)
		sameAsWhole(t, path, extract.Limits{MaxSectionChars: max}, chunk)
	})
}

// The encoding Stream decodes with is DetectEncoding's over the whole
// file, whatever the chunk size, also where the head alone says otherwise.
func TestDetectEncodingMatchesWholeFile(t *testing.T) {
	t.Parallel()
	head := strings.Repeat("plain ascii head ", 1000) // 17 KB, past the NUL sample
	inputs := [][]byte{
		[]byte(head + strings.Repeat("é", 4) + "\xff"),                          // one invalid per four multibyte: UTF-8
		[]byte(head + strings.Repeat("é", 3) + "\xff"),                          // over: Windows-1252
		[]byte(head + "\xe9t\xe9"),                                              // no multibyte at all: Windows-1252
		[]byte(head + "\xe2\x82"),                                               // a character cut at the end is ignored
		[]byte(head + "\xe2\x82\xac"),                                           // UTF-8
		[]byte("\xe2\x82\xac\xe2\x82"),                                          // short file, cut character
		[]byte(head + strings.Repeat("\xe2\x82\xac\xe2\x82", 10)),               // cut characters mid-file are invalid
		[]byte(head + strings.Repeat("\xf0\x9f\x98\x80\xff\xff", 50)),           // 4-byte characters
		[]byte(strings.Repeat("\xc3\xa9", 9000) + strings.Repeat("\x80", 2250)), // stray continuation bytes
		[]byte(strings.Repeat("\xc3\xa9", 9000) + strings.Repeat("\x80", 2251)),
		utf16Bytes(head, false, false),
		utf16Bytes(head, true, false),
		utf16Bytes(head, true, true),
		[]byte("\xEF\xBB\xBF" + head + "\xff\xff"),
		[]byte("\xFF\xFE\x00\x00"),
		[]byte("ab"),
	}
	for i, b := range inputs {
		want, _ := sniff.DetectEncoding(b)
		for _, chunk := range []int{1, 2, 3, 4, 5, 100, 8191, 8192, 8193, chunkSize} {
			got, valid, err := detectEncoding(context.Background(), bytes.NewReader(b), chunk)
			if err != nil || got != want || valid != (want == sniff.TextEncoding{Name: sniff.EncodingUTF8} && utf8.Valid(b)) {
				t.Errorf("input %d, chunk %d: %+v, valid %v, %v; DetectEncoding says %+v", i, chunk, got, valid, err, want)
			}
		}
	}
}

// cutOnce, step by step, is cut as it was.
func TestCutMatchesWholeCut(t *testing.T) {
	t.Parallel()
	alphabet := []string{"a", "é", " ", "\n", "\t", "\u00a0", "東", "xyz"}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		var b strings.Builder
		for range rng.IntN(200) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		text, max := b.String(), 1+rng.IntN(30)
		if got, want := cut(text, max), wholeCut(text, max); strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
			t.Fatalf("cut(%q, %d) = %q, want %q", text, max, got, want)
		}
	}
}

// Split keeps its behaviour for callers with the text in memory.
func TestSplitMatchesWholeSplit(t *testing.T) {
	t.Parallel()
	inputs := []string{
		"a\r\nb\v c \t\n\n\fd",
		strings.Repeat("word ", 3000),
		"x" + strings.Repeat(" ", 500) + "\u00a0\ny",
		"bad \xff\xfe utf-8 \xe2\x82\n\nnext",
		"next line \u0085 ogham \u1680 math \u205f \xc3\xe2\x80\x80 x\u00a0\n\u3000\n" + strings.Repeat("\u2000", 400) + "y",
		strings.Repeat("é", 1<<20) + "\xa9" + strings.Repeat("é", 10), // a part boundary among continuation bytes
	}
	for _, in := range inputs {
		for _, l := range sectionLimits {
			got, err := Split(context.Background(), in, l)
			want, wantErr := wholeSplit(context.Background(), in, l)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Fatalf("err %v, want %v", err, wantErr)
			}
			if d := extracttest.DiffUnits(got, want); d != "" {
				t.Fatalf("Split(%.40q, %+v): %s", in, l, d)
			}
		}
	}
}

// An error from emit stops the stream at once and comes back; so does
// cancellation.
func TestStreamStops(t *testing.T) {
	t.Parallel()
	path := extracttest.WriteTemp(t, "s.txt", []byte(strings.Repeat("para\n\n", 10000)))
	stop := errors.New("stop")
	calls := 0
	n, err := stream(context.Background(), path, extract.Limits{MaxSectionChars: 10}, 64, func(extract.Unit) error {
		calls++
		if calls == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || calls != 3 {
		t.Errorf("emit error: n=%d err=%v after %d calls", n, err, calls)
	}
	ctx, cancel := context.WithCancel(context.Background())
	calls = 0
	_, err = stream(ctx, path, extract.Limits{MaxSectionChars: 10}, 64, func(extract.Unit) error {
		if calls++; calls == 2 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || calls > 20 {
		t.Errorf("cancelled: err=%v after %d calls", err, calls)
	}
	if _, err := Stream(ctx, path, extract.Limits{}, func(extract.Unit) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled before: %v", err)
	}
}

// A streaming Splitter emits each unit when it is complete, keeps none,
// and counts against MaxPages as Units does.
func TestStreamingSplitter(t *testing.T) {
	t.Parallel()
	var got []extract.Unit
	s := NewStreamingSplitter("section", extract.Limits{MaxSectionChars: 10, MaxPages: 3}, func(u extract.Unit) error {
		got = append(got, u)
		return nil
	})
	s.Block("aaaa")
	s.Block("bbbb")
	if len(got) != 0 {
		t.Fatalf("emitted before the section was complete: %+v", got)
	}
	s.Block("cccc")
	if len(got) != 1 || got[0].Text != "aaaa\n\nbbbb" || got[0].Index != 1 {
		t.Fatalf("after the first section: %+v", got)
	}
	s.Block(strings.Repeat("z", 25))
	n, err := s.Close()
	if steperr.Name(err) != steperr.NameTooLarge || n != 3 || s.Len() != 3 {
		t.Fatalf("Close = %d, %v; want TooLarge after 3", n, err)
	}
	if units, _ := s.Units(); len(units) != 0 {
		t.Errorf("a streaming splitter kept %d units", len(units))
	}
}

// TestSpaceLeadMarksEveryWhitespaceLead checks the table built from
// White_Space against every code point unicode.IsSpace accepts.
func TestSpaceLeadMarksEveryWhitespaceLead(t *testing.T) {
	var want [256]bool
	for r := rune(utf8.RuneSelf); r <= unicode.MaxRune; r++ {
		if unicode.IsSpace(r) {
			var b [utf8.UTFMax]byte
			utf8.EncodeRune(b[:], r)
			want[b[0]] = true
		}
	}
	if spaceLead != want {
		for i := range want {
			if spaceLead[i] != want[i] {
				t.Errorf("lead byte %#x: marked %v, want %v", i, spaceLead[i], want[i])
			}
		}
	}
}
