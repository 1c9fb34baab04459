package stagerun

import (
	"bytes"
	"encoding/json"
)

// Progress is what a command reports about itself while it runs: done of
// total units (Unit "" when it names none).
type Progress struct {
	Done  int    `json:"done"`
	Total int    `json:"total"`
	Unit  string `json:"unit,omitempty"`
}

// maxProgressLine bounds a stderr line read as a progress report; a longer
// line is log output.
const maxProgressLine = 512

// parseProgress reads one stderr line as a progress report:
// {"progress": {"done": n, "total": m, "unit": "rows"}}, with 0 <= n <= m
// and m > 0. Any other line is not one.
func parseProgress(line []byte) (Progress, bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' || !bytes.Contains(line, []byte(`"progress"`)) {
		return Progress{}, false
	}
	var msg struct {
		Progress *Progress `json:"progress"`
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if dec.Decode(&msg) != nil || dec.More() || msg.Progress == nil {
		return Progress{}, false
	}
	p := *msg.Progress
	if p.Total <= 0 || p.Done < 0 || p.Done > p.Total {
		return Progress{}, false
	}
	return p, true
}

// progressWriter splits a command's stderr into lines: progress reports go
// to report, everything else to log (the tail a failure's reason quotes),
// so a reason never ends in a column of progress lines.
type progressWriter struct {
	log    *tailBuffer
	report func(Progress)
	line   []byte // the unfinished line, while it may still be a report
	long   bool   // the unfinished line is too long to be one
}

func (w *progressWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i+1]
		}
		p = p[len(chunk):]
		if w.long {
			_, _ = w.log.Write(chunk)
		} else if w.line = append(w.line, chunk...); len(w.line) > maxProgressLine {
			_, _ = w.log.Write(w.line)
			w.line, w.long = w.line[:0], true
		}
		if i >= 0 {
			w.endLine()
		}
	}
	return n, nil
}

// endLine hands over the line just finished.
func (w *progressWriter) endLine() {
	if !w.long {
		if pr, ok := parseProgress(w.line); ok {
			w.report(pr)
		} else {
			_, _ = w.log.Write(w.line)
		}
	}
	w.line, w.long = w.line[:0], false
}

// flush passes on a last line without a newline once stderr is closed.
func (w *progressWriter) flush() {
	if len(w.line) > 0 {
		w.endLine()
	}
}
