package sqlitetable

import (
	"fmt"
	"testing"

	"github.com/docpipe/docpipe/pipeline/table"
)

// A 3,000-page document's segment items, all written before the analysis
// updates the first of them, are still cached when it does.
func TestCacheHoldsALargeDocumentsSegments(t *testing.T) {
	var c itemCache
	c.young = map[table.Key]*cacheEntry{} // as validate leaves it
	seg := func(i int) table.Key { return table.Key{PK: "WF#w", SK: fmt.Sprintf("SEG#%06d", i)} }
	const pages = 3000
	for i := range pages {
		c.put(seg(i), table.Item{"index": float64(i)})
	}
	c.put(table.Key{PK: "WF#w", SK: "STEP#segment_builder"}, table.Item{"status": "completed"})
	for i := range pages {
		if c.entry(seg(i)) == nil {
			t.Fatalf("segment %d of %d left the cache before its update", i, pages)
		}
	}
}
