package warc_test

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline/extract/warc"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

func TestWARCRoundTrip(t *testing.T) {
	when := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	pages := []warc.Page{
		{URL: "https://example.com/", Status: 200, Header: http.Header{"Content-Type": {"text/html"}, "Etag": {`"x"`}}, Body: []byte("<p>one</p>\r\n\r\n"), Fetched: when},
		{URL: "https://example.com/two", Status: 200, Header: http.Header{"Content-Type": {"text/plain"}}, Body: []byte("two"), Fetched: when},
	}
	var buf bytes.Buffer
	if err := warc.Write(&buf, pages); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(buf.Bytes(), warc.Magic) {
		t.Fatalf("WARC starts %q", buf.Bytes()[:10])
	}
	got, err := warc.Read(bytes.NewReader(buf.Bytes()), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d pages", len(got))
	}
	for i := range pages {
		if got[i].URL != pages[i].URL || !bytes.Equal(got[i].Body, pages[i].Body) || got[i].Header.Get("ETag") != pages[i].Header.Get("ETag") || !got[i].Fetched.Equal(when) {
			t.Errorf("page %d = %+v", i, got[i])
		}
	}
	if _, err := warc.Read(bytes.NewReader(buf.Bytes()[:buf.Len()-30]), 1<<20); steperr.Name(err) != steperr.NameInvalidDocument {
		t.Errorf("cut WARC: %v", err)
	}
	if _, err := warc.Read(bytes.NewReader(buf.Bytes()), 10); steperr.Name(err) != steperr.NameTooLarge {
		t.Errorf("record over the limit: %v", err)
	}
}
