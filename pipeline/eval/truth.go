package eval

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Truth is what one document should come out as.
type Truth struct {
	File        string  // the truth file
	Document    string  // the document's path, resolved by Resolve
	SHA256      string  // hex SHA-256 of the document's bytes, "" when not given
	Fields      []Field // in path order
	Pages       map[string][]string
	PagesWeight float64
}

// Field is one expected value and how it is compared.
type Field struct {
	Path      string  `json:"path"`
	Expect    any     `json:"expect"`
	Compare   string  `json:"compare"`
	Items     string  `json:"items,omitempty"`  // list: the comparator of its items
	Match     float64 `json:"match,omitempty"`  // list: least item score that matches
	Tolerance float64 `json:"tolerance"`        // numeric
	Metric    string  `json:"metric,omitempty"` // list: f1, precision or recall
	Weight    float64 `json:"weight"`
}

// TruthError is a truth file that cannot be used: which file, which
// field, and why.
type TruthError struct {
	File  string
	Field string // "" for the file as a whole
	Err   error
}

func (e *TruthError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("truth file %s: %v", e.File, e.Err)
	}
	return fmt.Sprintf("truth file %s: %s: %v", e.File, e.Field, e.Err)
}

func (e *TruthError) Unwrap() error { return e.Err }

// maxTruthBytes bounds a truth file: it is written by hand.
const maxTruthBytes = 4 << 20

// LoadDir reads every *.json file in dir (not its subfolders) as a truth
// file, in name order. A folder without any is an error too.
func LoadDir(dir string) ([]Truth, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("truth folder: %w", err)
	}
	var truths []Truth
	for _, e := range entries {
		if e.IsDir() || !strings.EqualFold(filepath.Ext(e.Name()), ".json") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		raw, err := readLimited(path)
		if err != nil {
			return nil, &TruthError{File: path, Err: err}
		}
		t, err := Parse(path, raw)
		if err != nil {
			return nil, err
		}
		truths = append(truths, t)
	}
	if len(truths) == 0 {
		return nil, fmt.Errorf("truth folder %s holds no .json truth files", dir)
	}
	return truths, nil
}

func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxTruthBytes+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxTruthBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxTruthBytes)
	}
	return raw, nil
}

// Parse reads one truth file's content; file names it in errors.
func Parse(file string, raw []byte) (Truth, error) {
	fail := func(field string, format string, args ...any) (Truth, error) {
		return Truth{}, &TruthError{File: file, Field: field, Err: fmt.Errorf(format, args...)}
	}
	var top map[string]json.RawMessage
	if err := strictUnmarshal(raw, &top); err != nil {
		return fail("", "not a JSON object: %v", err)
	}
	t := Truth{File: file, PagesWeight: 1}
	for key, val := range top {
		var err error
		switch key {
		case "document":
			err = json.Unmarshal(val, &t.Document)
		case "sha256":
			if err = json.Unmarshal(val, &t.SHA256); err == nil {
				t.SHA256 = strings.ToLower(t.SHA256)
				if b, herr := hex.DecodeString(t.SHA256); herr != nil || len(b) != sha256.Size {
					err = errors.New("want 64 hex digits")
				}
			}
		case "fields":
			t.Fields, err = parseFields(file, val)
			var te *TruthError
			if errors.As(err, &te) {
				return Truth{}, err
			}
		case "pages":
			err = parsePages(val, &t.Pages)
		case "pages_weight":
			if err = json.Unmarshal(val, &t.PagesWeight); err == nil && t.PagesWeight < 0 {
				err = errors.New("must not be negative")
			}
		default:
			return fail(key, "unknown key; a truth file has document, sha256, fields, pages and pages_weight")
		}
		if err != nil {
			return fail(key, "%v", err)
		}
	}
	switch {
	case t.Document == "" && t.SHA256 == "":
		return fail("document", "missing: name the document (a path) or give its sha256")
	case len(t.Fields) == 0 && len(t.Pages) == 0:
		return fail("fields", "nothing to score: give fields, pages or both")
	case t.totalWeight() == 0:
		return fail("fields", "every weight is 0: nothing would count")
	}
	return t, nil
}

func parsePages(raw json.RawMessage, pages *map[string][]string) error {
	if err := strictUnmarshal(raw, pages); err != nil {
		return fmt.Errorf(`want {"PAGE": ["snippet", ...]}: %v`, err)
	}
	for page, snippets := range *pages {
		if page != AnyPage {
			if n, err := strconv.Atoi(page); err != nil || n < 1 {
				return fmt.Errorf("page %q: want a page number from 1, or %q for anywhere", page, AnyPage)
			}
		}
		for _, s := range snippets {
			if NormaliseText(s) == "" {
				return fmt.Errorf("page %s: snippet %q has no letters or digits to look for", page, s)
			}
		}
	}
	return nil
}

// AnyPage is the pages key whose snippets may be anywhere in the document.
const AnyPage = "*"

func parseFields(file string, raw json.RawMessage) ([]Field, error) {
	var specs map[string]json.RawMessage
	if err := strictUnmarshal(raw, &specs); err != nil {
		return nil, fmt.Errorf(`want {"PATH": {"expect": ...}}: %v`, err)
	}
	var fields []Field
	for _, path := range slices.Sorted(maps.Keys(specs)) {
		f, err := parseField(path, specs[path])
		if err != nil {
			return nil, &TruthError{File: file, Field: "fields." + path, Err: err}
		}
		fields = append(fields, f)
	}
	return fields, nil
}

func parseField(path string, raw json.RawMessage) (Field, error) {
	if err := checkPath(path); err != nil {
		return Field{}, err
	}
	var spec map[string]json.RawMessage
	if err := strictUnmarshal(raw, &spec); err != nil {
		return Field{}, fmt.Errorf(`want {"expect": VALUE, ...}: %v`, err)
	}
	f := Field{Path: path, Weight: 1}
	for key, val := range spec {
		var err error
		switch key {
		case "expect":
			err = json.Unmarshal(val, &f.Expect)
		case "compare":
			err = json.Unmarshal(val, &f.Compare)
		case "items":
			err = json.Unmarshal(val, &f.Items)
		case "match":
			err = json.Unmarshal(val, &f.Match)
			if err == nil && (f.Match <= 0 || f.Match > 1) {
				err = errors.New("want a score above 0, at most 1")
			}
		case "tolerance":
			err = json.Unmarshal(val, &f.Tolerance)
			if err == nil && f.Tolerance < 0 {
				err = errors.New("must not be negative")
			}
		case "metric":
			err = json.Unmarshal(val, &f.Metric)
		case "weight":
			err = json.Unmarshal(val, &f.Weight)
			if err == nil && f.Weight < 0 {
				err = errors.New("must not be negative")
			}
		default:
			return Field{}, fmt.Errorf("unknown key %q; a field has expect, compare, items, match, tolerance, metric and weight", key)
		}
		if err != nil {
			return Field{}, fmt.Errorf("%s: %v", key, err)
		}
	}
	if f.Expect == nil {
		return Field{}, errors.New(`missing "expect" (null is not a value to expect)`)
	}
	if f.Compare == "" {
		f.Compare = defaultCompare(f.Expect)
	}
	switch f.Compare {
	case Exact, Fuzzy:
	case Numeric:
		if _, ok := number(f.Expect); !ok {
			return Field{}, fmt.Errorf("expect: %s comparison needs a number, got %s", Numeric, textOf(f.Expect))
		}
	case List:
		items, ok := f.Expect.([]any)
		if !ok {
			return Field{}, fmt.Errorf("expect: %s comparison needs a list, got %s", List, textOf(f.Expect))
		}
		if f.Items == "" {
			f.Items = Fuzzy
			if len(items) > 0 {
				f.Items = defaultCompare(items[0])
			}
			if f.Items == List {
				f.Items = Exact
			}
		}
		if _, err := itemScorer(f.Items, f.Tolerance); err != nil {
			return Field{}, fmt.Errorf("items: %v", err)
		}
		if f.Match == 0 {
			f.Match = defaultMatch
		}
		switch f.Metric {
		case "":
			f.Metric = MetricF1
		case MetricF1, MetricPrecision, MetricRecall:
		default:
			return Field{}, fmt.Errorf("metric %q is not one of %s, %s, %s", f.Metric, MetricF1, MetricPrecision, MetricRecall)
		}
	default:
		return Field{}, fmt.Errorf("compare %q is not one of %s, %s, %s, %s", f.Compare, Exact, Fuzzy, Numeric, List)
	}
	if f.Compare != List && (f.Items != "" || f.Metric != "" || f.Match != 0) {
		return Field{}, fmt.Errorf("items, match and metric apply to %s comparison only", List)
	}
	return f, nil
}

// checkPath rejects paths no output can have: empty parts.
func checkPath(path string) error {
	if path == "" || slices.Contains(strings.Split(path, "."), "") {
		return fmt.Errorf("path %q: want NAME or STAGE.FIELD[.FIELD...]", path)
	}
	return nil
}

// strictUnmarshal decodes one JSON value and nothing after it.
func strictUnmarshal(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value")
	}
	return nil
}

// Resolve settles which file each truth is about. A document path is
// relative to docsDir when given, else to the truth file's folder; a truth
// with only a sha256 names the file in docsDir (or the truth folder) with
// those bytes. A truth with both must agree with the file's bytes, so a
// changed document is not scored against what was true of another.
func Resolve(truths []Truth, docsDir string) error {
	var byHash map[string]string // sha256 → path, read when first needed
	for i := range truths {
		t := &truths[i]
		base := docsDir
		if base == "" {
			base = filepath.Dir(t.File)
		}
		if t.Document == "" {
			if byHash == nil {
				var err error
				if byHash, err = hashFolder(base); err != nil {
					return &TruthError{File: t.File, Field: "sha256", Err: err}
				}
			}
			path, ok := byHash[t.SHA256]
			if !ok {
				return &TruthError{File: t.File, Field: "sha256", Err: fmt.Errorf("no file in %s has these bytes", base)}
			}
			t.Document = path
			continue
		}
		if !filepath.IsAbs(t.Document) {
			t.Document = filepath.Join(base, filepath.FromSlash(t.Document))
		}
		info, err := os.Stat(t.Document)
		if err != nil || !info.Mode().IsRegular() {
			return &TruthError{File: t.File, Field: "document", Err: fmt.Errorf("%s is not a readable file", t.Document)}
		}
		if t.SHA256 != "" {
			sum, err := fileSHA256(t.Document)
			if err != nil {
				return &TruthError{File: t.File, Field: "document", Err: err}
			}
			if sum != t.SHA256 {
				return &TruthError{File: t.File, Field: "sha256", Err: fmt.Errorf("%s has other bytes (sha256 %s): update the truth for the new content", t.Document, sum)}
			}
		}
	}
	return nil
}

func hashFolder(dir string) (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		sum, err := fileSHA256(path)
		if err != nil {
			return err
		}
		if _, seen := out[sum]; !seen {
			out[sum] = path
		}
		return nil
	})
	return out, err
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
