package extracttest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/docpipe/docpipe/pipeline/extract"
)

// Gather runs a streaming extraction (run calls its emit argument once per
// unit and returns the count) and returns the units it emitted; a count
// other than the units emitted is an error.
func Gather(run func(emit func(extract.Unit) error) (int, error)) ([]extract.Unit, error) {
	units := []extract.Unit{}
	n, err := run(func(u extract.Unit) error {
		units = append(units, u)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if n != len(units) {
		return nil, fmt.Errorf("the stream said %d units and emitted %d", n, len(units))
	}
	return units, nil
}

// DiffUnits describes the first difference between two series of units,
// "" when they are equal.
func DiffUnits(got, want []extract.Unit) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("unit %d = %+v\nwant      %+v", i+1, got[i], want[i])
		}
	}
	if len(got) != len(want) {
		return fmt.Sprintf("%d units, want %d", len(got), len(want))
	}
	return ""
}

// WriteTemp writes b to a file called name in a temp dir of t's.
func WriteTemp(t testing.TB, name string, b []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// StreamStats is what MeasureStream saw of a streaming extraction.
type StreamStats struct {
	Units int    // the count the stream returned
	Chars int    // bytes of text emitted
	Kind  string // the last unit's kind
	// HeapGrowth is how far the heap rose above the live heap at the
	// start, at its peak.
	HeapGrowth uint64
}

// MeasureStream runs a streaming extraction (run calls its emit argument
// once per unit) under a heap probe, sampled also every 32 units, and
// returns what it saw. Memory tests call it alone: anything else
// allocating meanwhile counts too.
func MeasureStream(run func(emit func(extract.Unit) error) (int, error)) (StreamStats, error) {
	var st StreamStats
	probe := StartHeapProbe()
	n, err := run(func(u extract.Unit) error {
		st.Chars += len(u.Text)
		st.Kind = u.Kind
		if u.Index%32 == 0 {
			probe.Sample()
		}
		return nil
	})
	st.HeapGrowth = probe.Stop()
	st.Units = n
	return st, err
}

// CheckBounded fails t when the stream of inputBytes gave fewer than
// minUnits units or minChars bytes of text (it skipped work), or when the
// heap rose by more than limit (it held the file); it logs the rise.
func (st StreamStats) CheckBounded(t testing.TB, inputBytes, minUnits, minChars int, limit uint64) {
	t.Helper()
	if st.Units < minUnits || st.Chars < minChars {
		t.Fatalf("%d units, %d bytes of text from %d bytes", st.Units, st.Chars, inputBytes)
	}
	t.Logf("%d %ss, %d MB of text; the heap grew by %.1f MB at most", st.Units, st.Kind, st.Chars>>20, float64(st.HeapGrowth)/(1<<20))
	if st.HeapGrowth > limit {
		t.Errorf("the heap grew by %d bytes streaming %d, over %d", st.HeapGrowth, inputBytes, limit)
	}
}
