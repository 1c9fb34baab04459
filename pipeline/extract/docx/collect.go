package docx

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/docpipe/docpipe/pipeline/extract"
	"github.com/docpipe/docpipe/pipeline/extract/plaintext"
	"github.com/docpipe/docpipe/pipeline/steperr"
)

// spillThreshold is how many bytes of encoded blocks the collector keeps in
// memory before it moves them to a temp file: enough that most documents
// never touch the disk, small next to what parsing a document that large
// costs anyway.
const spillThreshold = 4 << 20

// spillConfig says where and when the collector spills. Tests lower the
// threshold so that small documents spill too.
type spillConfig struct {
	dir       string // "" is os.TempDir()
	threshold int    // bytes of encoded blocks held in memory at most
}

// spillBuffer is the bufio size for writing and reading the spill file.
const spillBuffer = 64 << 10

// Record kinds of the block encoding: a kind byte, then for text blocks
// the text's length as a uvarint and its bytes.
const (
	recBody byte = iota
	recHeading
	recBreak
)

// collector receives the parser's blocks and page breaks and turns them
// into units. Whether a document comes out as pages or as sections depends
// on all of it (are there page breaks? is any page longer than pageSlack
// sections?), so the blocks are held, encoded, until the end of the parse:
// in memory up to spill.threshold bytes, then in a temp file, which costs a
// sequential write and read of the text, little next to parsing its XML.
//
// One page over the slack settles it early: the units are sections
// whatever follows. The collector then replays what it holds into a
// streaming splitter and passes later blocks straight to it, so a document
// without page breaks holds at most one page's worth of blocks.
type collector struct {
	ctx    context.Context
	limits extract.Limits
	spill  spillConfig
	emit   func(extract.Unit) error
	n      int   // units emitted
	err    error // first error of emit or of the spill file: stops the parse

	hasBreaks  bool
	lastBreak  bool // the last thing held is a break: an empty page carries nothing
	pages      int  // complete pages with text
	pageRunes  int  // of the current page, with the separators Join would add
	pageBlocks int  // in the current page

	buf  []byte        // encoded blocks, until they spill
	file *os.File      // the spill file, once buf has outgrown the threshold
	w    *bufio.Writer // onto file

	split *plaintext.Splitter // set once the units are known to be sections
}

func newCollector(ctx context.Context, limits extract.Limits, spill spillConfig, emit func(extract.Unit) error) *collector {
	return &collector{ctx: ctx, limits: limits, spill: spill, emit: emit}
}

// block takes a paragraph or table (never empty).
func (c *collector) block(text string, heading bool) {
	c.lastBreak = false
	if c.err != nil {
		return
	}
	if c.split != nil {
		c.feed(heading, text)
		return
	}
	if c.pageBlocks > 0 {
		c.pageRunes += len("\n\n")
	}
	c.pageRunes += utf8.RuneCountInString(text)
	c.pageBlocks++
	if c.pageRunes > pageSlack*c.limits.MaxSectionChars {
		c.toSections()
		c.feed(heading, text)
		return
	}
	kind := recBody
	if heading {
		kind = recHeading
	}
	c.put(kind, text)
}

// pageBreak takes an explicit page break.
func (c *collector) pageBreak() {
	c.hasBreaks = true
	if c.lastBreak {
		return // an empty page carries nothing
	}
	c.lastBreak = true
	if c.err != nil {
		return
	}
	if c.split != nil {
		c.split.Break()
		return
	}
	c.endPage()
	c.put(recBreak, "")
}

func (c *collector) endPage() {
	if c.pageBlocks > 0 {
		c.pages++
	}
	c.pageRunes, c.pageBlocks = 0, 0
}

// put appends a record to the memory buffer or, once it has spilled, to
// the file.
func (c *collector) put(kind byte, text string) {
	if c.file == nil {
		c.buf = append(c.buf, kind)
		if kind != recBreak {
			c.buf = binary.AppendUvarint(c.buf, uint64(len(text)))
			c.buf = append(c.buf, text...)
		}
		if len(c.buf) > c.spill.threshold {
			c.spillToFile()
		}
		return
	}
	var head [1 + binary.MaxVarintLen64]byte
	head[0] = kind
	n := 1
	if kind != recBreak {
		n += binary.PutUvarint(head[1:], uint64(len(text)))
	}
	if _, err := c.w.Write(head[:n]); err != nil {
		c.fail(err)
		return
	}
	if _, err := c.w.WriteString(text); err != nil {
		c.fail(err)
	}
}

// spillToFile moves the memory buffer to a new temp file, where later
// records go too.
func (c *collector) spillToFile() {
	f, err := os.CreateTemp(c.spill.dir, "docpipe-docx-*.blocks")
	if err != nil {
		c.fail(err)
		return
	}
	c.file = f
	c.w = bufio.NewWriterSize(f, spillBuffer)
	if _, err := c.w.Write(c.buf); err != nil {
		c.fail(err)
	}
	c.buf = nil
}

func (c *collector) failed() error { return c.err }

func (c *collector) fail(err error) {
	if c.err == nil {
		c.err = fmt.Errorf("docx: spilling blocks to a temp file: %w", err)
	}
}

// close removes the spill file. Stream defers it, so the file goes on
// every return, and on a panic.
func (c *collector) close() {
	if c.file != nil {
		_ = c.file.Close()
		_ = os.Remove(c.file.Name())
		c.file, c.w = nil, nil
	}
	c.buf = nil
}

// replay reads back the records held, in order, and calls fn with each;
// text is valid only during the call. It stops at the first error of fn
// or of the context.
func (c *collector) replay(fn func(kind byte, text []byte) error) error {
	var r interface {
		io.Reader
		io.ByteReader
	}
	if c.file != nil {
		if err := c.w.Flush(); err != nil {
			c.fail(err)
			return c.err
		}
		if _, err := c.file.Seek(0, io.SeekStart); err != nil {
			c.fail(err)
			return c.err
		}
		r = bufio.NewReaderSize(c.file, spillBuffer)
	} else {
		r = bytes.NewReader(c.buf)
	}
	var text []byte
	for {
		if err := c.ctx.Err(); err != nil {
			return err
		}
		kind, err := r.ReadByte()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			c.fail(err)
			return c.err
		}
		text = text[:0]
		if kind != recBreak {
			n, err := binary.ReadUvarint(r)
			if err != nil {
				c.fail(unexpected(err))
				return c.err
			}
			if uint64(cap(text)) < n {
				text = make([]byte, n)
			}
			text = text[:n]
			if _, err := io.ReadFull(r, text); err != nil {
				c.fail(unexpected(err))
				return c.err
			}
		}
		if err := fn(kind, text); err != nil {
			return err
		}
	}
}

// unexpected turns EOF inside a record into ErrUnexpectedEOF: the file is
// ours, so a short record means it was cut or overwritten.
func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// toSections settles the layout on sections: it starts the streaming
// splitter, replays what is held into it, and lets the held blocks go.
func (c *collector) toSections() {
	c.split = plaintext.NewStreamingSplitter("section", c.limits, func(u extract.Unit) error {
		if err := c.emit(u); err != nil {
			c.err = err
			return err
		}
		c.n++
		return nil
	})
	err := c.replay(func(kind byte, text []byte) error {
		switch kind {
		case recBreak:
			c.split.Break()
		default:
			c.feed(kind == recHeading, string(text))
		}
		return c.err
	})
	if err != nil && c.err == nil {
		c.err = err
	}
	c.close()
}

// feed hands a block to the splitter.
func (c *collector) feed(heading bool, text string) {
	if heading {
		c.split.Heading(text)
	} else {
		c.split.Block(text)
	}
}

// finish lays out what the parse left: pages when there were page breaks
// and every page fits, else sections. It returns the number of units.
func (c *collector) finish() (int, error) {
	if c.err != nil {
		return c.n, c.err
	}
	if c.split == nil && !c.hasBreaks {
		c.toSections()
	}
	if c.split != nil {
		if c.err != nil {
			return c.n, c.err
		}
		n, err := c.split.Close()
		if err == nil && c.err != nil {
			err = c.err
		}
		return n, err
	}
	c.endPage()
	if c.pages > c.limits.MaxPages {
		return 0, &steperr.TooLargeError{Reason: fmt.Sprintf("document has %d pages, over the limit of %d", c.pages, c.limits.MaxPages)}
	}
	var page strings.Builder
	flush := func() error {
		if page.Len() == 0 {
			return nil
		}
		u := extract.Unit{Index: c.n + 1, Kind: "page", Text: page.String()}
		page = strings.Builder{}
		if err := c.emit(u); err != nil {
			return err
		}
		c.n++
		return nil
	}
	err := c.replay(func(kind byte, text []byte) error {
		if kind == recBreak {
			return flush()
		}
		if page.Len() > 0 {
			page.WriteString("\n\n")
		}
		page.Write(text)
		return nil
	})
	if err == nil {
		err = flush()
	}
	return c.n, err
}
