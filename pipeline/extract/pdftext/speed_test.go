package pdftext

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ledongthuc/pdf"

	"github.com/docpipe/docpipe/pipeline/extract"
)

// A page takes the /Resources of the tree node that lists it even when its
// /Parent does not lead there (here: it has none).
func TestPureGoResourcesInheritedAlongTheTree(t *testing.T) {
	t.Parallel()
	path := rawPDF(t,
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 /Resources << /Font << /F1 4 0 R >> >> >>",
		"<< /Type /Page /Contents 5 0 R >>",
		helvetica,
		stream("BT /F1 12 Tf 72 700 Td (Inherited font) Tj ET"),
	)
	us, err := NewPureGo().Extract(context.Background(), path, extract.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(us) != 1 || us[0].Text != "Inherited font" {
		t.Fatalf("units = %+v", us)
	}
}

// The byte table of a font decodes every code as the library's own
// decoder does, string by string.
func TestFontByteTableMatchesLibraryDecoder(t *testing.T) {
	t.Parallel()
	fonts := map[string]string{
		"differences": "<< /Type /Font /Subtype /Type1 /BaseFont /Times-Roman /Encoding << /Type /Encoding " +
			"/Differences [2 /fi /fl 39 /quoteright 96 /quoteleft 128 /bullet /endash /emdash 173 /hyphen] >> >>",
		"winansi":  helvetica,
		"macroman": "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /MacRomanEncoding >>",
	}
	for name, font := range fonts {
		t.Run(name, func(t *testing.T) {
			file, r, err := pdf.Open(rawPDF(t, "<< /Type /Catalog /Pages 2 0 R >>",
				"<< /Type /Pages /Kids [] /Count 0 /Resources << /Font << /F1 3 0 R >> >> >>", font))
			if err != nil {
				t.Fatal(err)
			}
			defer file.Close()
			v := r.Trailer().Key("Root").Key("Pages").Key("Resources").Key("Font").Key("F1")
			f := parseFont(v)
			if f.byteText == nil {
				t.Fatal("no byte table for a font decoded byte by byte")
			}
			lib := (&pdf.Font{V: v}).Encoder()
			all := make([]byte, 256)
			for i := range all {
				all[i] = byte(i)
			}
			for _, raw := range []string{string(all), "\x02\x03ce", "it\x27s \x60quoted\x27 \x80 \xad"} {
				var got []byte
				for i := 0; i < len(raw); i++ {
					got = append(got, f.byteText[raw[i]]...)
				}
				if want := lib.Decode(raw); string(got) != want {
					t.Errorf("decoding %q: table %q, library %q", raw, got, want)
				}
			}
		})
	}
}

// mergeRuns sorts as a stable sort does, whatever the runs.
func TestMergeRunsIsAStableSort(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 3, 7, 100, 1000} {
		for _, runs := range []int{1, 2, 3, 5, n} {
			keys := make([]lineKey, n)
			for i := range keys {
				// Few distinct baselines and orientations, so ties are
				// common; runs descending lines make the content order.
				keys[i] = lineKey{y: float64(700 - 12*(i%max(1, n/max(1, runs))) - rng.IntN(3)), i: int32(i), dir: orientation(rng.IntN(4) / 3)}
			}
			want := slices.Clone(keys)
			slices.SortStableFunc(want, func(a, b lineKey) int {
				switch {
				case lineBefore(a, b):
					return -1
				case lineBefore(b, a):
					return 1
				}
				return 0
			})
			got, _ := mergeRuns(slices.Clone(keys), make([]lineKey, n))
			if !slices.Equal(got, want) {
				t.Fatalf("n=%d runs=%d: merged order differs from a stable sort", n, runs)
			}
		}
	}
}
