// Package export writes the results of completed analyses out of
// docpipe: every document's latest completed workflow, segment by segment
// (or cut into chunks for retrieval), as JSON Lines or Markdown, to a
// stream, a directory or S3. It reads through the table's paged queries
// and the blob store one document, and one manifest batch, at a time, and
// writes as it goes, so its memory does not grow with the number of
// documents.
package export

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/docread"
	"github.com/docpipe/docpipe/pipeline/extract"
)

// Filter chooses the workflows exported.
type Filter struct {
	Project  string    // "" for every project
	Pipeline string    // "" for any
	Version  int       // 0 for any version of Pipeline
	Since    time.Time // completed at or after; zero for any time
}

// Row is one line of a JSON Lines export: a segment, or with chunking a
// chunk of one document's text.
type Row struct {
	ProjectID   string    `json:"project_id"`
	DocumentID  string    `json:"document_id"`
	FileName    string    `json:"file_name"`
	FileURI     string    `json:"file_uri"`
	WorkflowID  string    `json:"workflow_id"`
	Pipeline    string    `json:"pipeline"` // name@version
	CompletedAt time.Time `json:"completed_at"`
	// A segment: its index and whether it is a page, a section or a
	// span of audio.
	Segment int    `json:"segment,omitempty"`
	Kind    string `json:"kind,omitempty"`
	// A chunk: its index in the document, the segments it comes from
	// and its size in Tokens.
	Chunk    int   `json:"chunk,omitempty"`
	Segments []int `json:"segments,omitempty"`
	Tokens   int   `json:"tokens,omitempty"`
	// HeadingPath is the Markdown headings the text is under, outermost
	// first.
	HeadingPath  []string                   `json:"heading_path"`
	AudioStartMS *int64                     `json:"audio_start_ms,omitempty"`
	AudioEndMS   *int64                     `json:"audio_end_ms,omitempty"`
	Text         string                     `json:"text"`
	Outputs      map[string]json.RawMessage `json:"outputs,omitempty"` // a segment's stage outputs by stage
}

// Source is where an export reads: the table (through the repository)
// and the blob store.
type Source struct {
	Repo  *pipeline.Repository
	Blobs blob.Store
}

// Workflows calls fn with the latest completed workflow of every
// document that f admits, one document at a time, paging through each
// project's documents.
func (s Source) Workflows(ctx context.Context, f Filter, fn func(pipeline.Workflow) error) error {
	if f.Project != "" {
		return s.projectWorkflows(ctx, f.Project, f, fn)
	}
	projects, err := s.Repo.ListProjects(ctx)
	if err != nil {
		return err
	}
	for _, p := range projects {
		if err := s.projectWorkflows(ctx, p.ID, f, fn); err != nil {
			return err
		}
	}
	return nil
}

func (s Source) projectWorkflows(ctx context.Context, project string, f Filter, fn func(pipeline.Workflow) error) error {
	token := ""
	for {
		docs, next, err := s.Repo.ListProjectDocuments(ctx, project, 100, token)
		if err != nil {
			return err
		}
		for _, d := range docs {
			wfs, err := s.Repo.ListDocumentWorkflows(ctx, d.ID)
			if err != nil {
				return err
			}
			for _, wf := range wfs { // newest first
				if wf.Status != pipeline.WorkflowCompleted || !f.admits(wf) {
					continue
				}
				if err := fn(wf); err != nil {
					return err
				}
				break
			}
		}
		if next == "" {
			return nil
		}
		token = next
	}
}

func (f Filter) admits(wf pipeline.Workflow) bool {
	switch {
	case f.Pipeline != "" && wf.Pipeline != f.Pipeline:
		return false
	case f.Version != 0 && wf.PipelineVersion != f.Version:
		return false
	case !f.Since.IsZero() && wf.UpdatedAt.Before(f.Since):
		return false
	}
	return true
}

// Segments calls fn with a row for every segment of wf, in order.
func (s Source) Segments(ctx context.Context, wf pipeline.Workflow, fn func(Row) error) error {
	var order []string
	if def, err := s.Repo.Definition(ctx, wf.Pipeline, wf.PipelineVersion); err == nil {
		for _, st := range def.Stages {
			order = append(order, st.Name)
		}
	}
	titled := sectionsTitled(wf.MIMEType)
	var heads headings
	ref := pipeline.WorkflowRef{ProjectID: wf.ProjectID, DocumentID: wf.DocumentID, WorkflowID: wf.ID}
	return docread.Segments(ctx, s.Blobs, ref, order, func(seg docread.Segment) error {
		// A segment is under the headings in force where its first
		// paragraph starts: those before it, and its own leading ones.
		var path []string
		for _, b := range blocks(seg.Index, seg.Text, titled && seg.Kind == "section") {
			if !b.heading {
				if path == nil {
					path = heads.current()
				}
				continue
			}
			heads.enter(b.level, b.text)
		}
		if path == nil {
			path = heads.current()
		}
		r := documentRow(wf)
		r.Segment, r.Kind, r.HeadingPath, r.Text, r.Outputs = seg.Index, seg.Kind, path, seg.Text, seg.Outputs
		if seg.Audio != nil {
			r.AudioStartMS, r.AudioEndMS = &seg.Audio.StartMS, &seg.Audio.EndMS
		}
		return fn(r)
	})
}

// sectionsTitled reports whether the extractor of a format starts every
// section with its heading on a line of its own.
func sectionsTitled(mime string) bool {
	switch mime {
	case extract.FormatMarkdown.MIMEType(), extract.FormatHTML.MIMEType(), extract.FormatDOCX.MIMEType():
		return true
	}
	return false
}

// documentRow is a row with wf's document fields.
func documentRow(wf pipeline.Workflow) Row {
	return Row{
		ProjectID: wf.ProjectID, DocumentID: wf.DocumentID, FileName: wf.FileName, FileURI: wf.FileURI,
		WorkflowID: wf.ID, Pipeline: PipelineRef(wf), CompletedAt: wf.UpdatedAt.UTC(), HeadingPath: []string{},
	}
}

// PipelineRef is "name@version" of the pipeline wf ran.
func PipelineRef(wf pipeline.Workflow) string {
	return wf.Pipeline + "@" + strconv.Itoa(wf.PipelineVersion)
}

// Chunks calls fn with wf's text cut into chunks (see Chunker).
func (s Source) Chunks(ctx context.Context, wf pipeline.Workflow, budget, overlap int, fn func(Row) error) error {
	if budget < 1 || overlap < 0 || overlap >= budget {
		return fmt.Errorf("export: chunks of %d tokens with %d of overlap: the overlap must be less than the chunk", budget, overlap)
	}
	c := &Chunker{Budget: budget, Overlap: overlap, Emit: func(ch Chunk) error {
		r := documentRow(wf)
		r.Chunk, r.Segments, r.HeadingPath, r.Text, r.Tokens = ch.Index, ch.Segments, ch.HeadingPath, ch.Text, ch.Tokens
		if r.HeadingPath == nil {
			r.HeadingPath = []string{}
		}
		return fn(r)
	}}
	titled := sectionsTitled(wf.MIMEType)
	err := s.Segments(ctx, wf, func(r Row) error { return c.Add(r.Segment, r.Text, titled && r.Kind == "section") })
	if err != nil {
		return err
	}
	return c.Flush()
}

// Partition is where a workflow's files go in a partitioned export:
// "project=P/date=YYYY-MM-DD", the date it completed (UTC), the layout
// Athena and Glue read as partitions.
func Partition(wf pipeline.Workflow) string {
	return "project=" + wf.ProjectID + "/date=" + wf.UpdatedAt.UTC().Format(time.DateOnly)
}
