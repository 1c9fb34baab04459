package pipeline

import (
	"slices"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline/extract"
)

// diamond: a; b and c need a; d needs b and c.
func diamond() Definition {
	return Definition{Name: "x", Stages: []Stage{
		{Name: "d", Needs: []string{"b", "c"}},
		{Name: "c", Needs: []string{"a"}},
		{Name: "a"},
		{Name: "b", Needs: []string{"a"}},
	}}
}

func names(stages []Stage) string {
	var n []string
	for _, s := range stages {
		n = append(n, s.Name)
	}
	return strings.Join(n, " ")
}

func TestTopoOrder(t *testing.T) {
	t.Parallel()
	order, err := diamond().TopoOrder()
	if err != nil || names(order) != "a c b d" {
		t.Fatalf("order = %s, %v; want a c b d (listed order among the free)", names(order), err)
	}
	for name, def := range map[string]Definition{
		"cycle":     {Stages: []Stage{{Name: "a", Needs: []string{"b"}}, {Name: "b", Needs: []string{"a"}}}},
		"missing":   {Stages: []Stage{{Name: "a", Needs: []string{"z"}}}},
		"duplicate": {Stages: []Stage{{Name: "a"}, {Name: "a"}}},
	} {
		if _, err := def.TopoOrder(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestClosures(t *testing.T) {
	t.Parallel()
	d := diamond()
	if got := d.Ancestors("d"); !slices.Equal(got, []string{"c", "a", "b"}) {
		t.Errorf("Ancestors(d) = %v", got)
	}
	if got := d.Dependents("a"); !slices.Equal(got, []string{"d", "c", "b"}) {
		t.Errorf("Dependents(a) = %v", got)
	}
	if !d.HasPath("a", "d") || d.HasPath("b", "c") || d.HasPath("d", "a") {
		t.Error("HasPath disagrees with the needs")
	}
}

func TestContentHash(t *testing.T) {
	t.Parallel()
	d := diamond()
	h := d.ContentHash()
	d.Dir, d.Source = "/somewhere", &Source{File: "p.yaml"}
	if d.ContentHash() != h {
		t.Error("where the file lives changed the hash")
	}
	d.Stages[0].TimeoutSeconds = 5
	if d.ContentHash() == h {
		t.Error("a changed timeout kept the hash")
	}
}

// Every format the sniffer knows, with the group `when` puts it in ("" for
// none): a new format fails here until it is placed.
var formatGroupOf = map[extract.Format]string{
	extract.FormatPDF: "", extract.FormatDOCX: "", extract.FormatHTML: "",
	extract.FormatMarkdown: "", extract.FormatText: "", extract.FormatWebArchive: "",
	extract.FormatPNG: FormatImage, extract.FormatJPEG: FormatImage, extract.FormatTIFF: FormatImage,
	extract.FormatWAV: FormatAudio, extract.FormatMP3: FormatAudio, extract.FormatFLAC: FormatAudio, extract.FormatOGG: FormatAudio,
}

func TestFormatGroups(t *testing.T) {
	t.Parallel()
	if len(extract.Formats) != len(formatGroupOf) {
		t.Fatalf("extract.Formats has %d formats, the table %d: place every format", len(extract.Formats), len(formatGroupOf))
	}
	if got, want := FormatGroups(), []string{FormatImage, FormatAudio}; !slices.Equal(got, want) {
		t.Errorf("FormatGroups() = %v, want %v", got, want)
	}
	for _, group := range FormatGroups() {
		members, ok := FormatGroup(group)
		if !ok || len(members) == 0 {
			t.Errorf("group %q: %v %v", group, members, ok)
		}
		for _, f := range extract.Formats {
			in := slices.Contains(members, string(f))
			if want := formatGroupOf[f] == group; in != want {
				t.Errorf("%s in group %s: %v, want %v", f, group, in, want)
			}
			// The runtime's answer is the expansion's: a document of
			// format f matches [group] exactly when f is a member.
			if ok, _ := (&When{Format: []string{group}}).Matches(DocAttrs{Format: string(f)}); ok != in {
				t.Errorf("when [%s] on a %s document: %v, want %v", group, f, ok, in)
			}
		}
	}
	for _, f := range extract.Formats {
		if got := ExpandFormats([]string{string(f)}); !slices.Equal(got, []string{string(f)}) {
			t.Errorf("ExpandFormats(%s) = %v", f, got)
		}
		if ok, _ := (&When{Format: []string{string(f)}}).Matches(DocAttrs{Format: string(f)}); !ok {
			t.Errorf("when [%s] does not match a %s document", f, f)
		}
		if !slices.Contains(WhenFormats(), string(f)) {
			t.Errorf("WhenFormats() lacks %s", f)
		}
	}
	if _, ok := FormatGroup("pdf"); ok {
		t.Error("pdf is a group")
	}
	if got, want := ExpandFormats([]string{"wav", FormatAudio, "pdf"}), []string{"flac", "mp3", "ogg", "pdf", "wav"}; !slices.Equal(got, want) {
		t.Errorf("ExpandFormats = %v, want %v", got, want)
	}
}

func TestWhenMatches(t *testing.T) {
	t.Parallel()
	w := &When{Format: []string{"pdf", FormatImage}, Language: []string{"en", "de"}, Pages: &PageRange{Min: 2, Max: 10}}
	for _, tc := range []struct {
		doc    DocAttrs
		ok     bool
		reason string
	}{
		{DocAttrs{Format: "pdf", Language: "en", Pages: 3}, true, ""},
		{DocAttrs{Format: "png", Language: "de", Pages: 2}, true, ""},
		{DocAttrs{Format: "html", Language: "en", Pages: 3}, false, "format html is not one of pdf, image"},
		{DocAttrs{Format: "pdf", Pages: 3}, false, "language unknown is not one of en, de"},
		{DocAttrs{Format: "pdf", Language: "en", Pages: 1}, false, "1 pages, fewer than 2"},
		{DocAttrs{Format: "pdf", Language: "en", Pages: 11}, false, "11 pages, more than 10"},
	} {
		ok, reason := w.Matches(tc.doc)
		if ok != tc.ok || reason != tc.reason {
			t.Errorf("%+v: %v %q, want %v %q", tc.doc, ok, reason, tc.ok, tc.reason)
		}
	}
	if ok, _ := (*When)(nil).Matches(DocAttrs{}); !ok {
		t.Error("no when does not match")
	}
}
