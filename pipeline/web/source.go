package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/extract/warc"
)

// Source registers URLs as documents. One URL (depth 0) is stored as the
// bytes it served, so an HTML page is split into its sections and a PDF is
// read as a PDF; a crawl is stored as a WARC file whose pages are the
// segments. The document's file_uri is the URL.
type Source struct {
	Ingester *pipeline.Ingester
	Fetcher  *Fetcher
	Limits   Limits
}

// Fetched is the outcome of registering one URL.
type Fetched struct {
	Registration pipeline.Registration
	Pages        int
	// Unchanged is true when every page answered 304 or served the bytes
	// registered before: the earlier analysis stands and nothing new runs.
	Unchanged bool
	Skipped   []Skip
}

// record is what a URL was last registered as.
type record struct {
	URL        string       `json:"url"`
	Depth      int          `json:"depth"`
	DocumentID string       `json:"document_id"`
	WorkflowID string       `json:"workflow_id"`
	Digest     string       `json:"digest"`
	Pages      []recordPage `json:"pages"`
}

type recordPage struct {
	URL          string `json:"url"`
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"last_modified,omitempty"`
}

const maxRecordBytes = 8 << 20

// Register fetches rawURL (and, with Limits.Depth, the pages it links to)
// and registers the result under req's project and pipeline.
func (s *Source) Register(ctx context.Context, req pipeline.IngestRequest, rawURL string) (Fetched, error) {
	u, err := ParseURL(rawURL)
	if err != nil {
		return Fetched{}, err
	}
	depth := max(s.Limits.Depth, 0)
	recKey := pipeline.WebSourceBlobKey(req.ProjectID, u.String(), depth)
	rec, prev, err := s.previous(ctx, req.ProjectID, recKey, depth)
	if err != nil {
		return Fetched{}, err
	}
	res, err := s.Fetcher.Crawl(ctx, u, s.Limits, prev)
	if err != nil {
		return Fetched{}, err
	}
	out := Fetched{Pages: len(res.Pages), Skipped: res.Skipped}
	digest := digestOf(res.Pages)
	if rec != nil && rec.Digest == digest {
		req.WorkflowID = rec.WorkflowID // Register finds it and creates nothing
	}
	var body bytes.Buffer
	if depth == 0 {
		body.Write(res.Pages[0].Body)
	} else if err := warc.Write(&body, res.Pages); err != nil {
		return Fetched{}, err
	}
	req.FileURI = u.String()
	req.FileName = displayName(u.Host, u.EscapedPath())
	req.Body = &body
	req.Reuse = true
	reg, err := s.Ingester.Register(ctx, req)
	if err != nil {
		return Fetched{}, err
	}
	out.Registration = reg
	out.Unchanged = reg.Existing
	next := record{URL: u.String(), Depth: depth, DocumentID: reg.Document.ID, WorkflowID: reg.Workflow.ID, Digest: digest}
	for _, p := range res.Pages {
		next.Pages = append(next.Pages, recordPage{URL: p.URL, ETag: p.Header.Get("ETag"), LastModified: p.Header.Get("Last-Modified")})
	}
	b, err := json.Marshal(next)
	if err != nil {
		return Fetched{}, err
	}
	if err := blob.PutBytes(ctx, s.Ingester.Blobs, recKey, b); err != nil {
		return Fetched{}, fmt.Errorf("record %s: %w", u, err)
	}
	return out, nil
}

// previous loads what the URL was last registered as and the pages it
// held, by URL, for conditional requests.
func (s *Source) previous(ctx context.Context, project, key string, depth int) (*record, map[string]Page, error) {
	b, err := blob.GetBytes(ctx, s.Ingester.Blobs, key, maxRecordBytes)
	if errors.Is(err, blob.ErrNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var rec record
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, nil, nil // unreadable: fetch afresh
	}
	doc, err := s.Ingester.Repo.GetDocument(ctx, project, rec.DocumentID)
	if err != nil {
		return nil, nil, nil // the document is gone: fetch afresh
	}
	src, err := blob.GetBytes(ctx, s.Ingester.Blobs, doc.BlobKey, DefaultMaxBytes*4)
	if err != nil {
		return nil, nil, nil
	}
	prev := map[string]Page{}
	if depth == 0 && len(rec.Pages) == 1 {
		p := rec.Pages[0]
		prev[p.URL] = Page{URL: p.URL, Status: http.StatusOK, Body: src, Header: validators(p)}
		prev[rec.URL] = prev[p.URL] // the start URL, when it redirected
		return &rec, prev, nil
	}
	pages, err := warc.Read(bytes.NewReader(src), int64(len(src)))
	if err != nil {
		return &rec, nil, nil
	}
	for _, p := range pages {
		prev[p.URL] = p
	}
	return &rec, prev, nil
}

func validators(p recordPage) http.Header {
	h := http.Header{}
	if p.ETag != "" {
		h.Set("ETag", p.ETag)
	}
	if p.LastModified != "" {
		h.Set("Last-Modified", p.LastModified)
	}
	return h
}

// digestOf identifies the content of a crawl: each page's URL and the
// hash of its body, in order.
func digestOf(pages []Page) string {
	h := sha256.New()
	for _, p := range pages {
		sum := sha256.Sum256(p.Body)
		fmt.Fprintf(h, "%s\n%x\n", p.URL, sum)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// displayName is the file name shown for a URL: host and path.
func displayName(host, path string) string {
	name := host + strings.TrimSuffix(path, "/")
	if len(name) > 200 {
		name = name[:200]
	}
	return name
}
