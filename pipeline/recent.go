package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/docpipe/docpipe/pipeline/table"
	"github.com/oklog/ulid/v2"
)

// ErrBadCursor is ListRecent's answer to a cursor no page returned: a
// cursor is the id of a workflow, and anything else would silently page
// from an arbitrary point of the key space.
var ErrBadCursor = errors.New("not a cursor a previous page printed")

// RecentFilter narrows ListRecent; empty fields match everything.
type RecentFilter struct {
	Project  string
	Pipeline string
	Status   WorkflowStatus
}

// recentReadFactor bounds how many workflow items one page of ListRecent
// reads per source, as a multiple of the page size: a filter that matches
// few workflows gives a short (even empty) page and a cursor to go on,
// rather than one request that reads the whole table.
const recentReadFactor = 10

// ListRecent pages through analyses of every status, newest first (ids
// are time-ordered), with their step progress (segment counts, error).
// before is the cursor a previous page returned ("" for the first page);
// next is "" after the last page.
//
// Each page is one Query per source, never a scan: the pipeline index
// (GSI2) when f names a pipeline, the project's workflows when it names a
// project, otherwise every project's workflows (ListProjects), merged by
// id. Status is filtered as the items are read.
func (r *Repository) ListRecent(ctx context.Context, f RecentFilter, limit int, before string) (list []StepProgress, next string, err error) {
	if limit <= 0 {
		return nil, "", fmt.Errorf("pipeline: list recent analyses: limit %d, want 1 or more", limit)
	}
	if before != "" {
		if _, err := ulid.ParseStrict(before); err != nil {
			return nil, "", fmt.Errorf("%q: %w", before, ErrBadCursor)
		}
	}
	var sources []table.Query
	switch {
	case f.Pipeline != "":
		sources = []table.Query{{Index: table.IndexGSI2, PK: PipelineIndexPK(f.Pipeline)}}
	case f.Project != "":
		sources = []table.Query{{PK: ProjectKey(f.Project).PK}}
	default:
		projects, err := r.ListProjects(ctx)
		if err != nil {
			return nil, "", err
		}
		for _, p := range projects {
			sources = append(sources, table.Query{PK: ProjectKey(p.ID).PK})
		}
	}
	keep := func(w Workflow) bool {
		return w.ID != before && (f.Status == "" || w.Status == f.Status) &&
			(f.Project == "" || w.ProjectID == f.Project) && (f.Pipeline == "" || w.Pipeline == f.Pipeline)
	}
	var found []Workflow
	// floor is the oldest id every unfinished source has read down to:
	// whatever is at or above it has been seen by all sources.
	floor := ""
	for _, q := range sources {
		q.Reverse = true
		if before == "" {
			q.SKPrefix = PrefixWorkflow
		} else {
			q.SKFrom, q.SKTo = PrefixWorkflow, PrefixWorkflow+before
		}
		ws, last, done, err := r.readRecent(ctx, q, keep, limit)
		if err != nil {
			return nil, "", err
		}
		found = append(found, ws...)
		if !done && last > floor {
			floor = last
		}
	}
	slices.SortFunc(found, func(a, b Workflow) int { return strings.Compare(b.ID, a.ID) })
	found = slices.DeleteFunc(found, func(w Workflow) bool { return w.ID < floor })
	if len(found) > limit {
		found, next = found[:limit], found[limit-1].ID
	} else if floor != "" {
		next = floor
	}
	list = make([]StepProgress, 0, len(found))
	for _, w := range found {
		p, err := r.GetProgress(ctx, w.ID)
		if err != nil {
			return nil, "", fmt.Errorf("pipeline: progress of workflow %s: %w", w.ID, err)
		}
		list = append(list, p)
	}
	return list, next, nil
}

// readRecent reads q's workflows newest first until limit+1 of them pass
// keep, the source ends (done) or the read budget is spent; last is the
// id of the oldest workflow read.
func (r *Repository) readRecent(ctx context.Context, q table.Query, keep func(Workflow) bool, limit int) (out []Workflow, last string, done bool, err error) {
	budget := recentReadFactor * limit
	q.Limit = limit + 1
	for read := 0; ; {
		ws, token, err := queryPage[Workflow](ctx, r.t, q)
		if err != nil {
			return nil, "", false, err
		}
		for _, w := range ws {
			if keep(w) {
				out = append(out, w)
			}
			last = w.ID
		}
		read += len(ws)
		if token == "" {
			return out, last, true, nil
		}
		if len(out) > limit || read >= budget {
			return out, last, false, nil
		}
		q.PageToken = token
	}
}
