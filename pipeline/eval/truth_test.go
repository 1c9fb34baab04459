package eval

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseDefaults(t *testing.T) {
	t.Parallel()
	tr, err := Parse("t.json", []byte(`{"document": "a.txt", "fields": {
		"summary": {"expect": "x"},
		"facts.total": {"expect": 3},
		"keywords": {"expect": ["a"], "metric": "recall"},
		"facts.ok": {"expect": true},
		"amounts": {"expect": [1, 2]}
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]Field{}
	for _, f := range tr.Fields {
		byPath[f.Path] = f
	}
	checks := []struct {
		path, compare, items string
	}{
		{"summary", Fuzzy, ""}, {"facts.total", Numeric, ""}, {"keywords", List, Fuzzy},
		{"facts.ok", Exact, ""}, {"amounts", List, Numeric},
	}
	for _, c := range checks {
		f := byPath[c.path]
		if f.Compare != c.compare || f.Items != c.items || f.Weight != 1 {
			t.Errorf("%s: %+v, want compare %s items %q weight 1", c.path, f, c.compare, c.items)
		}
	}
	if k := byPath["keywords"]; k.Metric != MetricRecall || k.Match != defaultMatch {
		t.Errorf("keywords: %+v", k)
	}
	if tr.PagesWeight != 1 {
		t.Errorf("pages_weight %v, want 1", tr.PagesWeight)
	}
}

func TestParseErrorsNameFileAndField(t *testing.T) {
	t.Parallel()
	cases := []struct {
		body, field, says string
	}{
		{`[1]`, "", "not a JSON object"},
		{`{"document": "a", "fields": {}, "pagez": {}}`, "pagez", "unknown key"},
		{`{"fields": {"summary": {"expect": "x"}}}`, "document", "missing"},
		{`{"document": "a"}`, "fields", "nothing to score"},
		{`{"document": "a", "fields": {"summary": {"expect": "x", "compare": "fuzy"}}}`, "fields.summary", `compare "fuzy" is not one of`},
		{`{"document": "a", "fields": {"summary": {}}}`, "fields.summary", `missing "expect"`},
		{`{"document": "a", "fields": {"facts.total": {"expect": "n", "compare": "numeric"}}}`, "fields.facts.total", "needs a number"},
		{`{"document": "a", "fields": {"keywords": {"expect": "k", "compare": "list"}}}`, "fields.keywords", "needs a list"},
		{`{"document": "a", "fields": {"keywords": {"expect": ["k"], "items": "list"}}}`, "fields.keywords", "items:"},
		{`{"document": "a", "fields": {"keywords": {"expect": ["k"], "metric": "auc"}}}`, "fields.keywords", `metric "auc"`},
		{`{"document": "a", "fields": {"summary": {"expect": "x", "metric": "f1"}}}`, "fields.summary", "list comparison only"},
		{`{"document": "a", "fields": {"summary": {"expect": "x", "weight": -1}}}`, "fields.summary", "weight: must not be negative"},
		{`{"document": "a", "fields": {"summary": {"expect": "x", "weight": 0}}}`, "fields", "every weight is 0"},
		{`{"document": "a", "fields": {"facts..x": {"expect": 1}}}`, "fields.facts..x", "want NAME or STAGE.FIELD"},
		{`{"document": "a", "fields": {"summary": {"expect": "x", "colour": 1}}}`, "fields.summary", `unknown key "colour"`},
		{`{"document": "a", "pages": {"0": ["x"]}}`, "pages", `page "0"`},
		{`{"document": "a", "pages": {"1": ["--"]}}`, "pages", "no letters or digits"},
		{`{"document": "a", "sha256": "abc", "pages": {"1": ["x"]}}`, "sha256", "64 hex digits"},
		{`{"document": "a", "fields": {"summary": {"expect": "x"}}} {}`, "", "more than one JSON value"},
	}
	for _, c := range cases {
		_, err := Parse("truth/a.json", []byte(c.body))
		var te *TruthError
		if !errors.As(err, &te) {
			t.Errorf("%s: error %v, want a TruthError", c.body, err)
			continue
		}
		if te.File != "truth/a.json" || te.Field != c.field || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s:\n got %q (field %q)\nwant field %q saying %q", c.body, err, te.Field, c.field, c.says)
		}
	}
}

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadDirAndResolve(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "docs", "a.txt"), "alpha")
	write(t, filepath.Join(dir, "docs", "b.txt"), "beta")
	sum := sha256.Sum256([]byte("beta"))
	hexSum := hex.EncodeToString(sum[:])
	write(t, filepath.Join(dir, "truth", "a.json"), `{"document": "../docs/a.txt", "pages": {"1": ["alpha"]}}`)
	write(t, filepath.Join(dir, "truth", "b.json"), `{"sha256": "`+strings.ToUpper(hexSum)+`", "pages": {"1": ["beta"]}}`)
	write(t, filepath.Join(dir, "truth", "README.txt"), "not a truth file")

	truths, err := LoadDir(filepath.Join(dir, "truth"))
	if err != nil {
		t.Fatal(err)
	}
	if len(truths) != 2 {
		t.Fatalf("%d truths, want 2", len(truths))
	}
	// Without --docs, a file with b.json's bytes is looked for beside it.
	err = Resolve(truths, "")
	var te *TruthError
	if !errors.As(err, &te) || te.Field != "sha256" || !strings.Contains(err.Error(), "no file in") {
		t.Errorf("got %v, want b.json's bytes not found in the truth folder", err)
	}
	truths, _ = LoadDir(filepath.Join(dir, "truth"))
	truths[0].Document = "a.txt" // relative to --docs now
	if err := Resolve(truths, filepath.Join(dir, "docs")); err != nil {
		t.Fatal(err)
	}
	if truths[0].Document != filepath.Join(dir, "docs", "a.txt") || truths[1].Document != filepath.Join(dir, "docs", "b.txt") {
		t.Errorf("resolved %q and %q", truths[0].Document, truths[1].Document)
	}
}

func TestResolveRefusesChangedDocument(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.txt"), "alpha, edited")
	sum := sha256.Sum256([]byte("alpha"))
	write(t, filepath.Join(dir, "a.json"), `{"document": "a.txt", "sha256": "`+hex.EncodeToString(sum[:])+`", "pages": {"1": ["alpha"]}}`)
	truths, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	err = Resolve(truths, "")
	var te *TruthError
	if !errors.As(err, &te) || te.Field != "sha256" || !strings.Contains(err.Error(), "other bytes") {
		t.Errorf("got %v, want a sha256 mismatch", err)
	}
	write(t, filepath.Join(dir, "b.json"), `{"document": "missing.txt", "pages": {"1": ["x"]}}`)
	truths, _ = LoadDir(dir)
	err = Resolve(truths[1:], "")
	if !errors.As(err, &te) || te.Field != "document" || !strings.Contains(err.Error(), "missing.txt") {
		t.Errorf("got %v, want the missing document named", err)
	}
}

func TestLoadDirEmpty(t *testing.T) {
	t.Parallel()
	if _, err := LoadDir(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no .json truth files") {
		t.Errorf("got %v", err)
	}
}
