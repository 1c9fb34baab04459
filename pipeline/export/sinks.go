package export

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/blob"
)

// Sink receives an export: each document's workflow, then its rows.
type Sink interface {
	Begin(ctx context.Context, wf pipeline.Workflow) error
	Row(ctx context.Context, r Row) error
	// Close finishes the export: files not yet written are written.
	Close(ctx context.Context) error
}

// Options shape the rows.
type Options struct {
	ChunkTokens int // 0: a row per segment; otherwise chunks of at most this many tokens
	Overlap     int // tokens consecutive chunks of a section share
}

// Stats count what an export wrote.
type Stats struct {
	Documents int
	Rows      int
}

// Run exports every workflow src has for f into sink, and closes it.
func Run(ctx context.Context, src Source, f Filter, o Options, sink Sink) (Stats, error) {
	var st Stats
	row := func(r Row) error {
		st.Rows++
		return sink.Row(ctx, r)
	}
	err := src.Workflows(ctx, f, func(wf pipeline.Workflow) error {
		st.Documents++
		if err := sink.Begin(ctx, wf); err != nil {
			return err
		}
		if o.ChunkTokens > 0 {
			return src.Chunks(ctx, wf, o.ChunkTokens, o.Overlap, row)
		}
		return src.Segments(ctx, wf, row)
	})
	return st, errors.Join(err, sink.Close(ctx))
}

// Files is where a partitioned export puts its files: a directory, or a
// blob store (S3) under a prefix.
type Files interface {
	Create(ctx context.Context, name string) (io.WriteCloser, error)
}

// Dir is a directory of files.
type Dir string

// Create creates the file name (slash-separated) under the directory.
func (d Dir) Create(_ context.Context, name string) (io.WriteCloser, error) {
	p := filepath.Join(string(d), filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, err
	}
	return os.Create(p)
}

// BlobFiles are objects under Prefix in a blob store. A file is written
// to a temporary file first and stored when closed, so that neither its
// size nor the number of files open costs memory.
type BlobFiles struct {
	Store  blob.Store
	Prefix string // "" or ending in /
	TmpDir string // "" for the system's
}

// Create starts the object Prefix+name.
func (b BlobFiles) Create(ctx context.Context, name string) (io.WriteCloser, error) {
	f, err := os.CreateTemp(b.TmpDir, "docpipe-export-*")
	if err != nil {
		return nil, err
	}
	return &blobFile{File: f, ctx: ctx, store: b.Store, key: b.Prefix + name}, nil
}

type blobFile struct {
	*os.File
	ctx   context.Context
	store blob.Store
	key   string
}

func (f *blobFile) Close() error {
	defer os.Remove(f.Name())
	defer f.File.Close()
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if err := f.store.Put(f.ctx, f.key, f.File); err != nil {
		return fmt.Errorf("export: store %s: %w", f.key, err)
	}
	return nil
}

// JSONLines writes rows to one stream.
type JSONLines struct {
	W   io.Writer
	enc *json.Encoder
}

func (j *JSONLines) Begin(context.Context, pipeline.Workflow) error { return nil }

func (j *JSONLines) Row(_ context.Context, r Row) error {
	if j.enc == nil {
		j.enc = json.NewEncoder(j.W)
		j.enc.SetEscapeHTML(false)
	}
	return j.enc.Encode(r)
}

func (j *JSONLines) Close(context.Context) error { return nil }

// PartitionedJSONLines writes rows to Files as
// project=P/date=YYYY-MM-DD/part-<Run>-00001.jsonl (see Partition), a
// new part every PartBytes. At most maxOpenParts parts are open: the one
// least recently written is finished to open another, and a later row of
// its partition starts a new part.
type PartitionedJSONLines struct {
	Files     Files
	Run       string // names this export's parts apart from other exports'
	PartBytes int64  // 0: DefaultPartBytes

	open  []*part // least recently written first
	parts map[string]int
	cur   *part
}

// DefaultPartBytes is the size a part is finished at: large enough for
// Athena to read efficiently, small enough to load in one request.
const DefaultPartBytes = 128 << 20

const maxOpenParts = 4

type part struct {
	partition string
	w         io.WriteCloser
	buf       *bufio.Writer
	enc       *json.Encoder
	n         int64
}

func (p *part) Write(b []byte) (int, error) {
	n, err := p.buf.Write(b)
	p.n += int64(n)
	return n, err
}

func (p *part) close() error {
	return errors.Join(p.buf.Flush(), p.w.Close())
}

func (j *PartitionedJSONLines) Begin(ctx context.Context, wf pipeline.Workflow) error {
	partition := Partition(wf)
	for i, p := range j.open {
		if p.partition == partition {
			j.cur = p
			j.open = append(append(j.open[:i:i], j.open[i+1:]...), p)
			return nil
		}
	}
	if len(j.open) == maxOpenParts {
		if err := j.open[0].close(); err != nil {
			return err
		}
		j.open = j.open[1:]
	}
	return j.newPart(ctx, partition)
}

func (j *PartitionedJSONLines) newPart(ctx context.Context, partition string) error {
	if j.parts == nil {
		j.parts = map[string]int{}
	}
	j.parts[partition]++
	name := path.Join(partition, fmt.Sprintf("part-%s-%05d.jsonl", j.Run, j.parts[partition]))
	w, err := j.Files.Create(ctx, name)
	if err != nil {
		return err
	}
	p := &part{partition: partition, w: w, buf: bufio.NewWriterSize(w, 64<<10)}
	p.enc = json.NewEncoder(p)
	p.enc.SetEscapeHTML(false)
	j.open = append(j.open, p)
	j.cur = p
	return nil
}

func (j *PartitionedJSONLines) Row(ctx context.Context, r Row) error {
	limit := j.PartBytes
	if limit <= 0 {
		limit = DefaultPartBytes
	}
	if j.cur.n >= limit {
		if err := j.cur.close(); err != nil {
			return err
		}
		j.open = j.open[:len(j.open)-1] // cur is the most recently written
		if err := j.newPart(ctx, j.cur.partition); err != nil {
			return err
		}
	}
	return j.cur.enc.Encode(r)
}

func (j *PartitionedJSONLines) Close(context.Context) error {
	var errs []error
	for _, p := range j.open {
		errs = append(errs, p.close())
	}
	j.open, j.cur = nil, nil
	return errors.Join(errs...)
}

// Markdown writes one Markdown file per document: a title, where it
// comes from, then each segment's text after a comment that marks the
// boundary (<!-- page 3 -->). To Files, a document is
// <partition>/<document id>.md; to a stream (W), the documents follow
// one another.
type Markdown struct {
	Files Files
	W     io.Writer

	cur io.WriteCloser
	buf *bufio.Writer
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

func (m *Markdown) Begin(ctx context.Context, wf pipeline.Workflow) error {
	if err := m.end(); err != nil {
		return err
	}
	if m.Files != nil {
		w, err := m.Files.Create(ctx, path.Join(Partition(wf), wf.DocumentID+".md"))
		if err != nil {
			return err
		}
		m.cur = w
	} else {
		m.cur = nopCloser{m.W}
	}
	m.buf = bufio.NewWriter(m.cur)
	fmt.Fprintf(m.buf, "# %s\n\n<!-- docpipe document=%s workflow=%s pipeline=%s completed=%s uri=%s -->\n",
		oneLine(wf.FileName), wf.DocumentID, wf.ID, PipelineRef(wf), wf.UpdatedAt.UTC().Format("2006-01-02T15:04:05Z"), commentSafe(wf.FileURI))
	return nil
}

func (m *Markdown) Row(_ context.Context, r Row) error {
	where := fmt.Sprintf("%s %d", r.Kind, r.Segment)
	if r.Chunk > 0 {
		where = fmt.Sprintf("chunk %d, segments %v", r.Chunk, r.Segments)
	}
	if r.AudioStartMS != nil {
		where += fmt.Sprintf(" (%d-%d ms)", *r.AudioStartMS, *r.AudioEndMS)
	}
	_, err := fmt.Fprintf(m.buf, "\n<!-- %s -->\n\n%s\n", where, strings.TrimRight(r.Text, "\n"))
	return err
}

func (m *Markdown) end() error {
	if m.cur == nil {
		return nil
	}
	err := errors.Join(m.buf.Flush(), m.cur.Close())
	m.cur, m.buf = nil, nil
	return err
}

func (m *Markdown) Close(context.Context) error { return m.end() }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// commentSafe keeps s from ending an HTML comment.
func commentSafe(s string) string { return strings.ReplaceAll(oneLine(s), "--", "-\u200b-") }
