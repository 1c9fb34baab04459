package plaintext

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

const samples = "../../../samples"

func TestDecode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want, enc string
	}{
		{"utf-8 bom, crlf", "\xEF\xBB\xBFa\r\nb\rc", "a\nb\nc", "utf-8"},
		{"latin-1", "Lef\xe8vre \xe0 Lyon", "Lefèvre à Lyon", "windows-1252"},
		{"cp1252 quotes and euro", "\x93hi\x94 \x80", "\u201chi\u201d €", "windows-1252"},
		{"utf-16le bom", "\xFF\xFEh\x00\xe9\x00\r\x00\n\x00", "hé\n", "utf-16le"},
		{"utf-16be bom", "\xFE\xFF\x00h\x00i", "hi", "utf-16be"},
		{"nul and controls dropped", "a\x00b\x01c\td", "abc\td", "utf-8"},
		{"invalid byte replaced", "Müller, café, naïve, Zoë \xff!", "Müller, café, naïve, Zoë \uFFFD!", "utf-8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, enc := Decode([]byte(tc.in))
			if got != tc.want || enc != tc.enc {
				t.Fatalf("Decode = %q (%s), want %q (%s)", got, enc, tc.want, tc.enc)
			}
		})
	}
}

func TestSplitter(t *testing.T) {
	t.Parallel()
	word := "lorem "
	long := strings.TrimSpace(strings.Repeat(word, 50)) // 299 runes
	tests := []struct {
		name   string
		build  func(s *Splitter)
		max    int
		units  int // MaxPages; 10 when 0
		want   []string
		errRes string
	}{
		{
			name:  "paragraphs join until the limit",
			build: func(s *Splitter) { s.Block("aaaa"); s.Block("bbbb"); s.Block("cccc") },
			max:   10,
			want:  []string{"aaaa\n\nbbbb", "cccc"},
		},
		{
			name:  "heading starts a section, title and subtitle stay together",
			build: func(s *Splitter) { s.Heading("T"); s.Heading("S"); s.Block("body"); s.Heading("H2"); s.Block("more") },
			max:   100,
			want:  []string{"T\n\nS\n\nbody", "H2\n\nmore"},
		},
		{
			name:  "huge paragraph cut between words",
			build: func(s *Splitter) { s.Block(long) },
			max:   100,
			want:  []string{strings.Repeat("lorem ", 15) + "lorem", strings.Repeat("lorem ", 15) + "lorem", strings.Repeat("lorem ", 15) + "lorem", "lorem lorem"},
		},
		{
			name:  "a word longer than a section is cut",
			build: func(s *Splitter) { s.Block(strings.Repeat("é", 25)) },
			max:   10,
			want:  []string{strings.Repeat("é", 10), strings.Repeat("é", 10), strings.Repeat("é", 5)},
		},
		{
			name: "breaks make no empty units",
			build: func(s *Splitter) {
				s.Break()
				s.Block(" ")
				s.Break()
				s.Block("x")
				s.Break()
				s.Break()
			},
			max:  10,
			want: []string{"x"},
		},
		{
			name: "too many sections",
			build: func(s *Splitter) {
				for range 5 {
					s.Block("0123456789")
				}
			},
			max:    10,
			units:  3,
			errRes: "more than 3 sections",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			maxUnits := tc.units
			if maxUnits == 0 {
				maxUnits = 10
			}
			s := NewSplitter("section", extract.Limits{MaxSectionChars: tc.max, MaxPages: maxUnits})
			tc.build(s)
			units, err := s.Units()
			if tc.errRes != "" {
				if steperr.Name(err) != steperr.NameTooLarge || !strings.Contains(err.Error(), tc.errRes) {
					t.Fatalf("err = %v, want TooLarge %q", err, tc.errRes)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for i, u := range units {
				if u.Index != i+1 || u.Kind != "section" {
					t.Fatalf("unit %d = %+v", i, u)
				}
				if n := utf8.RuneCountInString(u.Text); n > tc.max {
					t.Fatalf("unit %d has %d runes, over %d", i, n, tc.max)
				}
				got = append(got, u.Text)
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("units = %q\nwant    %q", got, tc.want)
			}
		})
	}
}

func TestExtractSamples(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file    string
		limits  extract.Limits
		units   int
		want    []string
		errName string
	}{
		{file: "docs/letter.txt", units: 1, want: []string{"Zürich, 28 October 2024", "anna.braendli@sitzwerk.example", "CHF 9,840.00"}},
		{file: "docs/letter.txt", limits: extract.Limits{MaxSectionChars: 300}, units: 3, want: []string{"Jürg Hofmann"}},
		{file: "docs/letter-latin1.txt", units: 1, want: []string{"Hélène Lefèvre", "n° 2024-778", "François Müller", "Agnès Dupré"}},
		{file: "bad/mixed-utf8.txt", units: 1, want: []string{"Søren-Ødegård", "€1,250.00", "2024.\n", "\uFFFD"}},
		{file: "bad/utf16-nobom.txt", units: 1, want: []string{"Invoice INV-2024-0193 was paid on 14 October 2024 by Helena Novak."}},
		{file: "bad/empty.txt", errName: steperr.NameInvalidDocument},
		{file: "docs/letter.txt", limits: extract.Limits{MaxFileBytes: 10}, errName: steperr.NameTooLarge},
		{file: "docs/letter.txt", limits: extract.Limits{MaxSectionChars: 100, MaxPages: 2}, errName: steperr.NameTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			units, err := Extract(context.Background(), filepath.Join(samples, tc.file), tc.limits)
			if tc.errName != "" {
				if steperr.Name(err) != tc.errName {
					t.Fatalf("err = %v, want %s", err, tc.errName)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(units) != tc.units {
				t.Fatalf("%d units, want %d: %+v", len(units), tc.units, units)
			}
			var all strings.Builder
			for _, u := range units {
				all.WriteString(u.Text + "\n")
				if strings.ContainsRune(u.Text, 0) || strings.Contains(u.Text, "\r") {
					t.Fatalf("unit holds NUL or CR: %q", u.Text)
				}
			}
			for _, w := range tc.want {
				if !strings.Contains(all.String(), w) {
					t.Errorf("text lacks %q:\n%s", w, all.String())
				}
			}
		})
	}
}

func TestSplitNeverCutsWordsOfNormalParagraphs(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 200 {
		b.WriteString("Paragraph " + strings.Repeat("word ", i%40) + "end.\n\n")
	}
	units, err := Split(context.Background(), b.String(), extract.Limits{MaxSectionChars: 500})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range units {
		if !strings.HasPrefix(u.Text, "Paragraph ") || !strings.HasSuffix(u.Text, "end.") {
			t.Fatalf("section not on a paragraph boundary: %q", u.Text)
		}
	}
}

func BenchmarkExtract(b *testing.B) {
	path := filepath.Join(b.TempDir(), "big.txt")
	letter, err := os.ReadFile(filepath.Join(samples, "docs/letter.txt"))
	if err != nil {
		b.Fatal(err)
	}
	big := []byte(strings.Repeat(string(letter)+"\n", 8<<20/len(letter)))
	if err := os.WriteFile(path, big, 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(big)))
	for b.Loop() {
		if _, err := Extract(context.Background(), path, extract.Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}
