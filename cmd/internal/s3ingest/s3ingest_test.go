package s3ingest

import "testing"

// A project whose blobs could fall under the uploads prefix is refused;
// any other is not.
func TestProjectOutsideUploads(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		project, prefix string
		refused         bool
	}{
		{"default", "incoming/", false},
		{"incoming", "incoming/", true},
		{"inbox", "in", true},             // a prefix need not end at a slash
		{"incoming", "incoming/a/", true}, // a document's key could start so
		{"incomingx", "incoming/", false},
		{"acme", "uploads/acme/", false},
	} {
		err := CheckProjectOutsideUploads(c.project, c.prefix)
		if (err != nil) != c.refused {
			t.Errorf("project %q, prefix %q: %v, refused want %v", c.project, c.prefix, err, c.refused)
		}
	}
}
