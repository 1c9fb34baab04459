package sqlitesearch

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/driver/sqlitetable"
	"github.com/docpipe/docpipe/pipeline/search"
)

// Index answers queries on the index in a state file, and rebuilds it.
type Index struct {
	db      *sql.DB
	indexer *Indexer
	// rankedMatches is how many matches bm25 ranks at most
	// (RankedMatches; tests lower it).
	rankedMatches int
}

// RankedMatches is how many of a query's matches are ranked at most: when
// more match, the most recently indexed this many are ranked and the
// rest left out. bm25 costs about a microsecond a match, and a first pass
// over all of them for the words' rarity; ranking every match of a word
// found in most of 100,000 segments takes a quarter of a second or more,
// and a phrase of common words must first be found in each of them
// (BenchmarkSearch).
const RankedMatches = 2000

// Open opens the index of the state file at path, which the state table
// (opened with the Indexer as its write hook) has created.
func Open(path string, ix *Indexer) (*Index, error) {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "synchronous(NORMAL)") // as the table's writer: WAL survives a crash of the process
	q.Add("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return &Index{db: db, indexer: ix, rankedMatches: RankedMatches}, nil
}

// Close closes the index's connection.
func (x *Index) Close() error { return x.db.Close() }

// bm25 ranks a match by where it is: a keyword or entity the analyzer
// picked says more than a word of the body, the summary a little more,
// users' outputs least.
const bm25 = `bm25(search_text, 1.0, 3.0, 2.0, 1.5, 0.75)`

// Search returns the best matches of q, best first: of every match, or
// of the RankedMatches most recently indexed when more match (the
// results say so). The matches are ranked from the index alone;
// snippets, which read a row's text, are cut for the hits returned only.
func (x *Index) Search(ctx context.Context, q search.Query) (search.Results, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = search.DefaultLimit
	}
	from, args := matches(q)
	// FTS5 walks the matches newest first and stops after rankedMatches
	// and one more, which tells whether more match; the best of those
	// ranked are picked here.
	rows, err := x.db.QueryContext(ctx, `SELECT search_text.rowid, `+bm25+from+` ORDER BY search_text.rowid DESC LIMIT ?`,
		append(args, x.rankedMatches+1)...)
	if err != nil {
		return search.Results{}, queryError(q.Text, err)
	}
	var ranked []rankedRow
	for rows.Next() {
		var r rankedRow
		if err := rows.Scan(&r.id, &r.score); err != nil {
			rows.Close()
			return search.Results{}, queryError(q.Text, err)
		}
		ranked = append(ranked, r)
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return search.Results{}, queryError(q.Text, err)
	}
	res := search.Results{Ranked: len(ranked)}
	if len(ranked) > x.rankedMatches {
		ranked = ranked[:x.rankedMatches]
		res.Ranked, res.Capped = len(ranked), true
	}
	// Stable: of equal scores, the newest first.
	slices.SortStableFunc(ranked, func(a, b rankedRow) int { return cmp.Compare(a.score, b.score) })
	ranked = ranked[:min(limit, len(ranked))]
	hits := make([]search.Hit, len(ranked))
	ids := make([]int64, len(ranked))
	for i, r := range ranked {
		ids[i], hits[i].Score = r.id, r.score
	}
	res.Hits, err = x.describe(ctx, q.Text, ids, hits)
	if err != nil {
		return search.Results{}, err
	}
	return res, nil
}

// rankedRow is a match's row id and its bm25 score.
type rankedRow struct {
	id    int64
	score float64
}

// matches is the FROM and WHERE clauses of q's matches, open to one more
// AND, and their arguments. Project and pipeline come from search_rows,
// looked up by rowid for each match.
func matches(q search.Query) (string, []any) {
	from := ` FROM search_text`
	where := ` WHERE search_text MATCH ?`
	args := []any{q.Text}
	if q.Project != "" || q.Pipeline != "" {
		from += ` JOIN search_rows r ON r.id = search_text.rowid`
		if q.Project != "" {
			where += ` AND r.project = ?`
			args = append(args, q.Project)
		}
		if q.Pipeline != "" {
			where += ` AND r.pipeline = ?`
			args = append(args, q.Pipeline)
		}
	}
	return from + where, args
}

// describe fills in where each hit (row ids[i]) comes from, and its
// snippet, cut from the column FTS5 finds best (-1), and returns those
// still in the index (a newer analysis may have replaced a document's
// rows since they were ranked). One statement cuts every snippet:
// setting up a match (a prefix's every word) costs a few milliseconds.
func (x *Index) describe(ctx context.Context, query string, ids []int64, hits []search.Hit) ([]search.Hit, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	byID := make(map[int64]*search.Hit, len(ids))
	lo, hi := ids[0], ids[0]
	for i, id := range ids {
		byID[id] = &hits[i]
		lo, hi = min(lo, id), max(hi, id)
	}
	idList, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	// The rowid range is FTS5's to walk; +rowid keeps the list out of
	// it (it would set the match up again for each id) and filters the
	// range before a snippet is cut.
	rows, err := x.db.QueryContext(ctx, `SELECT t.rowid, r.project, r.pipeline, r.version, r.document, r.workflow, r.file_name, r.segment, r.kind, r.audio_start, r.audio_end,
		snippet(search_text, -1, char(1), char(2), '…', 16), t.`+strings.Join(fieldNames, ", t.")+`
		FROM search_text t JOIN search_rows r ON r.id = t.rowid
		WHERE search_text MATCH ? AND t.rowid BETWEEN ? AND ? AND +t.rowid IN (SELECT value FROM json_each(?))`,
		query, lo, hi, string(idList))
	if err != nil {
		return nil, queryError(query, err)
	}
	defer rows.Close()
	described := make(map[int64]bool, len(ids))
	for rows.Next() {
		var id int64
		var start, end sql.NullInt64
		var snippet string
		cols := make([]string, len(fieldNames))
		var h search.Hit
		dest := []any{&id, &h.ProjectID, &h.Pipeline, &h.PipelineVersion, &h.DocumentID, &h.WorkflowID, &h.FileName, &h.Segment, &h.Kind, &start, &end, &snippet}
		for i := range cols {
			dest = append(dest, &cols[i])
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, queryError(query, err)
		}
		if start.Valid && end.Valid {
			h.AudioStartMS, h.AudioEndMS = &start.Int64, &end.Int64
		}
		h.Field = field(cols, snippet)
		h.Snippet = strings.NewReplacer("\x01", search.SnippetOpen, "\x02", search.SnippetClose, "\n", " ").Replace(snippet)
		target := byID[id]
		h.Score = target.Score
		*target = h
		described[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, queryError(query, err)
	}
	found := hits[:0]
	for i, id := range ids {
		if described[id] {
			found = append(found, hits[i])
		}
	}
	return found, nil
}

// field names the column a snippet was cut from: the first of a row's
// columns that holds the snippet's text.
func field(cols []string, snippet string) string {
	plain := strings.NewReplacer("\x01", "", "\x02", "").Replace(snippet)
	for _, part := range strings.Split(plain, "…") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		for i, c := range cols {
			if strings.Contains(c, part) {
				return fieldNames[i]
			}
		}
	}
	return fieldNames[0]
}

// queryError turns FTS5's complaints about a query into a
// search.BadQueryError in the query's own terms.
func queryError(query string, err error) error {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "SQL logic error: ")
	if i := strings.LastIndex(msg, " ("); i > 0 && strings.HasSuffix(msg, ")") {
		msg = msg[:i] // SQLite's result code
	}
	switch {
	case strings.HasPrefix(msg, "fts5: syntax error near \"\""):
		return &search.BadQueryError{Query: query, Reason: "it ends where a word was expected"}
	case strings.HasPrefix(msg, "fts5: "):
		return &search.BadQueryError{Query: query, Reason: strings.TrimPrefix(msg, "fts5: ")}
	case msg == "unterminated string":
		return &search.BadQueryError{Query: query, Reason: "a quote is not closed"}
	case strings.HasPrefix(msg, "no such column: "):
		return &search.BadQueryError{Query: query, Reason: fmt.Sprintf("%q is not a field (a word followed by : names one: %s)",
			strings.TrimPrefix(msg, "no such column: "), strings.Join(fieldNames, ", "))}
	}
	return fmt.Errorf("search: %w", err)
}

// Unindexed returns the workflows whose completion could not be indexed,
// with the reason.
func (x *Index) Unindexed(ctx context.Context) (map[string]string, error) {
	rows, err := x.db.QueryContext(ctx, `SELECT workflow, error FROM search_unindexed ORDER BY workflow`)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var wf, reason string
		if err := rows.Scan(&wf, &reason); err != nil {
			return nil, err
		}
		out[wf] = reason
	}
	return out, rows.Err()
}

// Empty reports whether nothing is indexed.
func (x *Index) Empty(ctx context.Context) (bool, error) {
	var n int
	err := x.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM search_rows LIMIT 1)`).Scan(&n)
	return n == 0, err
}

// Reindex rebuilds the index from the table and the blob store: every
// document's latest completed workflow, each in a transaction of its own
// so that a run going on meanwhile waits for one document at a time. It
// returns how many workflows it indexed.
func (x *Index) Reindex(ctx context.Context, repo *pipeline.Repository) (int, error) {
	if _, err := x.db.ExecContext(ctx, `DELETE FROM search_text; DELETE FROM search_rows; DELETE FROM search_unindexed;`); err != nil {
		return 0, fmt.Errorf("search: clear the index: %w", err)
	}
	projects, err := repo.ListProjects(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, p := range projects {
		token := ""
		for {
			// Newest first: a document's first completed workflow is
			// its latest.
			wfs, next, err := repo.ListProjectWorkflows(ctx, p.ID, 200, token)
			if err != nil {
				return n, err
			}
			for _, wf := range wfs {
				if wf.Status != pipeline.WorkflowCompleted {
					continue
				}
				done, err := x.reindexOne(ctx, wf)
				if err != nil {
					return n, err
				}
				if done {
					n++
				}
			}
			if next == "" {
				break
			}
			token = next
		}
	}
	return n, nil
}

// reindexOne indexes wf unless its document is indexed already (by a
// newer workflow, or by the write hook meanwhile).
func (x *Index) reindexOne(ctx context.Context, wf pipeline.Workflow) (bool, error) {
	tx, err := x.db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM search_rows WHERE document = ?`, wf.DocumentID).Scan(&n); err != nil {
		return false, err
	}
	if n > 0 {
		return false, nil
	}
	if err := x.indexer.indexOrRecord(ctx, &sqlitetable.HookTx{Tx: tx}, wf, known{}); err != nil {
		return false, err
	}
	return true, tx.Commit()
}
