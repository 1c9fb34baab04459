package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/docpipe/docpipe/pipeline/table"
)

// Repository errors. Both match table.ErrConditionFailed with errors.Is, so
// callers that only care "the write did not happen" can test for that.
var (
	// ErrAlreadyExists: a create found the item in place.
	ErrAlreadyExists = fmt.Errorf("pipeline: already exists: %w", table.ErrConditionFailed)
	// ErrStale: a status change expected a state the item is no longer in.
	ErrStale = fmt.Errorf("pipeline: stale state: %w", table.ErrConditionFailed)
	// ErrNotFound is table.ErrNotFound, re-exported for callers of the
	// repository.
	ErrNotFound = table.ErrNotFound
)

// Repository is every read and write of pipeline state, written once on top
// of table.Table. Each method is one Get, one Query (per shard) or one
// transaction; none scans.
type Repository struct {
	t             table.Table
	now           func() time.Time
	sleep         func(context.Context, time.Duration) error // between retries
	transitionTTL time.Duration
	// builtin is the pipeline a workflow runs when none is named; versions
	// caches stored pipeline versions, which never change.
	builtin  *Definition
	versions sync.Map               // "name@version" → Definition
	eventID  func(time.Time) string // outbox event ids
}

// RepositoryOption configures a Repository.
type RepositoryOption func(*Repository)

// WithClock injects the clock used for timestamps and ids.
func WithClock(now func() time.Time) RepositoryOption {
	return func(r *Repository) { r.now = now }
}

// WithTransitionTTL makes TRANSITION# audit items expire d after they are
// written. Zero (the default) keeps them forever.
func WithTransitionTTL(d time.Duration) RepositoryOption {
	return func(r *Repository) { r.transitionTTL = d }
}

// WithBuiltinPipeline names the pipeline Definition resolves for an empty
// name, and for def's own name while no version of it is stored.
func WithBuiltinPipeline(def Definition) RepositoryOption {
	return func(r *Repository) { d := def.Clone(); r.builtin = &d }
}

// NewRepository returns a repository over t.
func NewRepository(t table.Table, opts ...RepositoryOption) *Repository {
	r := &Repository{t: t, now: time.Now, sleep: sleepContext, eventID: func(time.Time) string { return NewID() }}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Table returns the table the repository works on.
func (r *Repository) Table() table.Table { return r.t }

// encode turns an entity into the map stored under "data". Going through
// JSON makes every number a float64, as every driver reads it back.
func encode(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("pipeline: encode %T: %w", v, err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("pipeline: encode %T: %w", v, err)
	}
	return m, nil
}

// decode reads an item's "data" into an entity.
func decode(it table.Item, v any) error {
	if err := table.DecodeData(it, v); err != nil {
		return fmt.Errorf("pipeline: %w", err)
	}
	return nil
}

// newItem builds an item at key with data and optional extra attributes.
func newItem(key table.Key, data map[string]any, extra ...string) table.Item {
	it := table.Item{table.AttrPK: key.PK, table.AttrSK: key.SK, table.AttrData: data}
	for i := 0; i+1 < len(extra); i += 2 {
		it[extra[i]] = extra[i+1]
	}
	return it
}

func entityItem(key table.Key, v any, extra ...string) (table.Item, error) {
	data, err := encode(v)
	if err != nil {
		return nil, err
	}
	return newItem(key, data, extra...), nil
}

func decodeAll[T any](items []table.Item) ([]T, error) {
	out := make([]T, 0, len(items))
	for _, it := range items {
		var v T
		if err := decode(it, &v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Attribute paths inside "data".
const (
	pathStatus        = "data.status"
	pathError         = "data.error"
	pathUpdatedAt     = "data.updated_at"
	pathTotalSegments = "data.total_segments"
)

func stepPath(step, field string) string { return "data.steps." + step + "." + field }

// counterPath is the step-item counter a finished segment status counts in.
func counterPath(s SegmentStatus) string {
	switch s {
	case SegmentDone:
		return "data.segments_done"
	case SegmentFailed:
		return "data.segments_failed"
	case SegmentSkipped:
		return "data.segments_skipped"
	}
	return ""
}

// validName rejects names that would break a dotted attribute path.
func validName(kind, name string) error {
	if name == "" || strings.ContainsAny(name, ".#") {
		return fmt.Errorf("pipeline: invalid %s name %q", kind, name)
	}
	return nil
}

func validID(kind, id string) error {
	if kind == "project" {
		return ValidProjectID(id)
	}
	if id == "" || strings.Contains(id, "#") {
		return fmt.Errorf("pipeline: invalid %s id %q", kind, id)
	}
	return nil
}

// MaxProjectID is how long a project id may be.
const MaxProjectID = 64

// ValidProjectID says whether id may name a project. A project's id is
// the first segment of every blob key of its documents (blobkeys.go) and
// a part of table keys, so it is kept to what is safe in both, in a
// path, in a URL and on a terminal: letters, digits, '.', '_' and '-',
// starting with a letter or digit.
func ValidProjectID(id string) error {
	ok := id != "" && len(id) <= MaxProjectID
	for i := 0; ok && i < len(id); i++ {
		c := id[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		ok = alnum || i > 0 && (c == '.' || c == '_' || c == '-')
	}
	if !ok {
		return fmt.Errorf("project id %q is not valid: use 1 to %d letters, digits, '.', '_' or '-', starting with a letter or digit", id, MaxProjectID)
	}
	return nil
}

// setOrRemove sets path to s, or removes it when s is empty (the entities
// encode empty strings as absent).
func setOrRemove(path, s string) table.Update {
	if s == "" {
		return table.Remove{Path: path}
	}
	return table.Set{Path: path, Value: s}
}

func (r *Repository) get(ctx context.Context, key table.Key, v any) error {
	if err := table.GetData(ctx, r.t, key, v); err != nil {
		return fmt.Errorf("pipeline: get %s: %w", key, err)
	}
	return nil
}
