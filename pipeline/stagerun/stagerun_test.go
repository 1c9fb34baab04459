package stagerun

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/pipeline/steperr"
)

// segmentRequest is a segment-scope request whose inputs are real files in
// a fresh folder.
func segmentRequest(t *testing.T, text string) Request {
	t.Helper()
	dir := t.TempDir()
	textPath := filepath.Join(dir, "segment.txt")
	needPath := filepath.Join(dir, "ocr.json")
	writeFile(t, textPath, text)
	writeFile(t, needPath, `{"confidence": 0.9}`)
	return Request{
		WorkflowID: "wf-1",
		Project:    Project{ID: "p1", Name: "Legal"},
		Document:   Document{ID: "d1", FileName: "report.pdf", Format: "pdf", Pages: 2},
		Stage:      "shout",
		Scope:      ScopeSegment,
		Settings:   map[string]any{"document_prompt": "be loud"},
		Segment:    &Segment{Index: 1, Text: text},
		Inputs: Inputs{
			Source:      filepath.Join(dir, "report.pdf"),
			SegmentText: textPath,
			Needs:       map[string]string{"ocr": needPath},
		},
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

// wantErr checks that err carries the ASL name want and that its message
// contains every fragment.
func wantErr(t *testing.T, err error, want string, fragments ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s", want)
	}
	if got := steperr.Name(err); got != want {
		t.Fatalf("error %q is a %s, want %s", err, got, want)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error %q does not contain %q", err, f)
		}
	}
}

func TestParseOutput(t *testing.T) {
	t.Parallel()
	text := func(s string) *string { return &s }
	for _, tc := range []struct {
		name, scope, out string
		text             *string
		err              string
	}{
		{name: "object", scope: ScopeDocument, out: `{"n": 1}`},
		{name: "document scope keeps its text field", scope: ScopeDocument, out: `{"text": "x"}`},
		{name: "segment text", scope: ScopeSegment, out: " {\"text\": \"HI\", \"n\": 2}\n", text: text("HI")},
		{name: "empty text replaces", scope: ScopeSegment, out: `{"text": ""}`, text: text("")},
		{name: "null text", scope: ScopeSegment, out: `{"text": null}`},
		{name: "array", scope: ScopeSegment, out: `[1, 2]`},
		{name: "text not a string", scope: ScopeSegment, out: `{"text": 3}`, err: `"text" must be a string`},
		{name: "not JSON", scope: ScopeDocument, out: "hello", err: "stage output is not JSON: invalid character"},
		{name: "empty", scope: ScopeDocument, out: "", err: "stage output is not JSON"},
		{name: "two values", scope: ScopeDocument, out: "{} {}", err: "stage output is not JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := parseOutput("s", tc.scope, []byte(tc.out))
			if tc.err != "" {
				wantErr(t, err, steperr.NameStageFailed, tc.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(res.Output) || string(res.Output) != strings.TrimSpace(tc.out) {
				t.Errorf("Output = %q", res.Output)
			}
			if (res.Text == nil) != (tc.text == nil) || (res.Text != nil && *res.Text != *tc.text) {
				t.Errorf("Text = %v, want %v", res.Text, tc.text)
			}
		})
	}
}

func TestRemotePayloadInlinesNeedsAndDropsPaths(t *testing.T) {
	t.Parallel()
	req := segmentRequest(t, "hello")
	req.Inputs.SourceURL = "https://blobs.example/report.pdf"
	raw, err := remotePayload(req, DefaultMaxInline)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if want := `{"source_url":"https://blobs.example/report.pdf"}`; string(got["inputs"]) != want {
		t.Errorf("inputs = %s, want %s", got["inputs"], want)
	}
	if want := `{"needs":{"ocr":{"confidence":0.9}}}`; string(got["inputs_inline"]) != want {
		t.Errorf("inputs_inline = %s, want %s", got["inputs_inline"], want)
	}

	if _, err := remotePayload(req, 100); err == nil {
		t.Error("a payload over the limit was accepted")
	} else {
		wantErr(t, err, steperr.NameStageFailed, "over the 100-byte limit")
	}

	writeFile(t, req.Inputs.Needs["ocr"], "not json")
	_, err = remotePayload(req, DefaultMaxInline)
	wantErr(t, err, steperr.NameInvalidInput, "output of ocr is not JSON")
}

func TestLocalPayloadSendsSettingsAsAnObject(t *testing.T) {
	t.Parallel()
	raw, err := localPayload(Request{Stage: "s", Scope: ScopeDocument})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"settings":{}`) || strings.Contains(string(raw), "segment") {
		t.Errorf("payload = %s", raw)
	}
}

func TestTail(t *testing.T) {
	t.Parallel()
	tb := newTail(16)
	for _, s := range []string{"first line\n", "second line\n", "third\n"} {
		_, _ = tb.Write([]byte(s))
	}
	if got := tb.String(); got != "third" {
		t.Errorf("tail = %q, want the last whole line", got)
	}
	tb = newTail(8)
	_, _ = tb.Write([]byte("one very long line without breaks"))
	if got := tb.String(); got != "t breaks" {
		t.Errorf("tail of a single line = %q", got)
	}
	if got := tailOf([]byte("short\n")); got != "short" {
		t.Errorf("tailOf = %q", got)
	}
	long := strings.Repeat("é", reasonBytes) // two bytes each: the cut lands mid-rune
	if got := tailOf([]byte("x" + long)); len(got) > reasonBytes || strings.ContainsRune(got, '\uFFFD') {
		t.Errorf("tailOf cut a rune or kept too much: %d bytes", len(got))
	}
}
