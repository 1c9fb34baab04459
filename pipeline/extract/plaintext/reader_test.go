package plaintext

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/extract/extracttest"
)

// TextReader gives what Decode gives for the whole file, read with Next or
// Read, at every chunk size, and again after Rewind.
func TestTextReaderMatchesDecode(t *testing.T) {
	t.Parallel()
	text := strings.Repeat("Grüße aus 東京\r\nzweite Zeile\r\rdritte\x00 \x85\uFEFF Zeile 😀\n\n", 40)
	inputs := map[string][]byte{
		"utf-8":            []byte(text),
		"utf-8 bom":        append([]byte("\xEF\xBB\xBF"), text...),
		"utf-8 invalid":    []byte(strings.Repeat("ok \xff\xfe \u00e9\u00e9\u00e9\u00e9\u00e9 ", 50)),
		"utf-16le bom":     utf16Bytes(text, false, true),
		"utf-16be":         utf16Bytes(text, true, false),
		"windows-1252":     []byte(strings.Repeat("d\xe9l\xe9gu\xe9 \x93x\x94\r\n", 100)),
		"cr at the end":    []byte("a\r"),
		"bom and a letter": []byte("\xEF\xBB\xBFx"),
	}
	for name, b := range inputs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := extracttest.WriteTemp(t, "in.txt", b)
			want, enc := Decode(b)
			for _, chunk := range chunks {
				r, err := openText(context.Background(), path, extract.Limits{}, chunk)
				if err != nil {
					t.Fatal(err)
				}
				if r.Encoding() != enc {
					t.Errorf("chunk %d: encoding %s, want %s", chunk, r.Encoding(), enc)
				}
				var got bytes.Buffer
				for {
					part, err := r.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					got.Write(part)
				}
				if got.String() != want {
					t.Errorf("chunk %d: Next gave\n%q\nwant\n%q", chunk, got.String(), want)
				}
				if err := r.Rewind(); err != nil {
					t.Fatal(err)
				}
				again, err := io.ReadAll(r)
				if err != nil {
					t.Fatal(err)
				}
				if string(again) != want {
					t.Errorf("chunk %d: Read after Rewind gave\n%q\nwant\n%q", chunk, again, want)
				}
				if err := r.Close(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
