// Package warc reads and writes WARC files (ISO 28500, the web archive
// format of wget --warc-file and the Internet Archive): docpipe keeps a
// crawl as one, and reads any as a document.
package warc

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/docpipe/docpipe/pipeline/steperr"
)

// A crawl is stored as a WARC file (ISO 28500, the web archive format of
// wget --warc-file and the Internet Archive): one response record per page
// with the HTTP status line and headers as they came, so a later crawl can
// send the same validators, and any WARC tool can read what docpipe kept.

const warcVersion = "WARC/1.1"

// Write writes pages as WARC response records.
func Write(w io.Writer, pages []Page) error {
	bw := bufio.NewWriter(w)
	for _, p := range pages {
		var block bytes.Buffer
		fmt.Fprintf(&block, "HTTP/1.1 %d %s\r\n", p.Status, http.StatusText(p.Status))
		h := p.Header.Clone()
		if h == nil {
			h = http.Header{}
		}
		// The body is stored as received after transfer decoding.
		h.Del("Transfer-Encoding")
		h.Del("Content-Encoding")
		h.Set("Content-Length", strconv.Itoa(len(p.Body)))
		if err := h.Write(&block); err != nil {
			return err
		}
		block.WriteString("\r\n")
		block.Write(p.Body)
		// The record id is derived from the URL and the content, so the
		// same page fetched again is the same record.
		id := uuid.NewSHA1(uuid.NameSpaceURL, append([]byte(p.URL+"\n"), p.Body...))
		fmt.Fprintf(bw, "%s\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:%s>\r\nWARC-Date: %s\r\nWARC-Target-URI: %s\r\nContent-Type: application/http;msgtype=response\r\nContent-Length: %d\r\n\r\n",
			warcVersion, id, p.Fetched.UTC().Format(time.RFC3339), p.URL, block.Len())
		if _, err := bw.Write(block.Bytes()); err != nil {
			return err
		}
		if _, err := bw.WriteString("\r\n\r\n"); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// Magic starts every WARC file.
var Magic = []byte("WARC/1.")

// Read reads the pages of a WARC file: response records holding an
// HTTP response, and resource records (a body with its Content-Type).
// Other records (warcinfo, request, metadata) are passed over.
func Read(r io.Reader, maxRecordBytes int64) ([]Page, error) {
	br := bufio.NewReader(r)
	tp := textproto.NewReader(br)
	var pages []Page
	for n := 1; ; n++ {
		line, err := tp.ReadLine()
		for err == nil && line == "" { // blank lines between records
			line, err = tp.ReadLine()
		}
		if err == io.EOF {
			return pages, nil
		}
		if err != nil {
			return nil, err
		}
		if !strings.HasPrefix(line, "WARC/1.") {
			return nil, invalid("record %d starts with %q, not a WARC version", n, clip(line))
		}
		hdr, err := tp.ReadMIMEHeader()
		if err != nil {
			return nil, invalid("record %d: header: %v", n, err)
		}
		size, err := strconv.ParseInt(hdr.Get("Content-Length"), 10, 64)
		if err != nil || size < 0 {
			return nil, invalid("record %d: bad Content-Length %q", n, hdr.Get("Content-Length"))
		}
		if size > maxRecordBytes {
			return nil, &steperr.TooLargeError{Reason: fmt.Sprintf("WARC record %d is %d bytes, over the limit of %d", n, size, maxRecordBytes)}
		}
		block := make([]byte, size)
		if _, err := io.ReadFull(br, block); err != nil {
			return nil, invalid("record %d is cut short", n)
		}
		page, ok, err := pageOfRecord(hdr, block)
		if err != nil {
			return nil, invalid("record %d: %v", n, err)
		}
		if ok {
			pages = append(pages, page)
		}
	}
}

func pageOfRecord(hdr textproto.MIMEHeader, block []byte) (Page, bool, error) {
	when, _ := time.Parse(time.RFC3339, hdr.Get("WARC-Date"))
	p := Page{URL: strings.Trim(hdr.Get("WARC-Target-URI"), "<>"), Fetched: when}
	switch strings.ToLower(hdr.Get("WARC-Type")) {
	case "response":
		if !strings.HasPrefix(strings.ToLower(hdr.Get("Content-Type")), "application/http") {
			return p, false, nil
		}
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(block)), nil)
		if err != nil {
			return p, false, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return p, false, err
		}
		p.Status, p.Header, p.Body = resp.StatusCode, resp.Header, body
	case "resource":
		p.Status, p.Body = http.StatusOK, block
		p.Header = http.Header{"Content-Type": {hdr.Get("Content-Type")}}
	default:
		return p, false, nil
	}
	return p, true, nil
}

func invalid(format string, args ...any) error {
	return &steperr.InvalidDocumentError{Reason: "corrupt WARC file: " + fmt.Sprintf(format, args...)}
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// Page is one fetched page: its final URL, the response's status and
// headers, and its body.
type Page struct {
	URL    string
	Status int
	Header http.Header
	Body   []byte
	// Fetched is when the response arrived.
	Fetched time.Time
	// NotModified is true when the server answered a conditional request
	// with 304 and Body is the earlier copy.
	NotModified bool
}

// ContentType is the page's media type without parameters.
func (p Page) ContentType() string {
	ct, _, _ := strings.Cut(p.Header.Get("Content-Type"), ";")
	return strings.ToLower(strings.TrimSpace(ct))
}

// IsHTML reports whether the page is HTML (or says nothing and looks like it).
func (p Page) IsHTML() bool {
	switch ct := p.ContentType(); ct {
	case "text/html", "application/xhtml+xml":
		return true
	case "":
		return strings.HasPrefix(http.DetectContentType(p.Body), "text/html")
	}
	return false
}
