// Package transcribe turns the spans of an audio document into text with
// word timings. Engines: pocketsphinx run as a command on this machine
// (Pocketsphinx), and Amazon Transcribe on AWS (package
// pipeline/driver/awstranscribe). An engine that cannot run says why, in a
// reason fit to show on a skipped segment.
package transcribe

import (
	"context"

	"github.com/docpipe/docpipe/pipeline/extract"
)

// Engine transcribes the spans of one audio file.
type Engine interface {
	Name() string
	// Available reports whether Transcribe can work on a file of this
	// format; when it cannot, reason says why and how to fix it.
	Available(format extract.Format) (ok bool, reason string)
	// Transcribe returns one Result per span of job, in order. A span the
	// engine could not recognise has its Err set; the error return is for
	// faults that stop the whole job (cancellation, a timeout, storage).
	Transcribe(ctx context.Context, job Job) ([]Result, error)
}

// Job is one audio document to transcribe.
type Job struct {
	// Name identifies the job; engines that run remote jobs derive the
	// job's name from it, so a retried step finds its earlier job.
	Name   string
	Path   string // the file on this machine
	Key    string // the same file in the blob store (S3 on AWS)
	Format extract.Format
	Spans  []extract.Span
	// Dir holds temporary files.
	Dir string
	// Parallelism bounds how many spans are recognised at once (0 = 1).
	Parallelism int
}

// FailedPrefix starts the reason of a span the recogniser could not read.
const FailedPrefix = "transcription failed"

// Word is one recognised word and when it was said, from the start of the
// file.
type Word struct {
	Text    string `json:"text"`
	StartMS int64  `json:"start_ms"`
	EndMS   int64  `json:"end_ms"`
}

// Result is the transcript of one span.
type Result struct {
	Text  string `json:"text"`
	Words []Word `json:"words,omitempty"`
	// Err says why the span could not be transcribed.
	Err string `json:"error,omitempty"`
}

// Unavailable is an Engine that never runs; Reason says why.
type Unavailable struct{ Reason string }

func (u Unavailable) Name() string                            { return "none" }
func (u Unavailable) Available(extract.Format) (bool, string) { return false, u.Reason }
func (u Unavailable) Transcribe(context.Context, Job) ([]Result, error) {
	return nil, &UnavailableError{Reason: u.Reason}
}

// UnavailableError is returned when the engine's tools cannot run.
type UnavailableError struct{ Reason string }

func (e *UnavailableError) Error() string { return e.Reason }

// BySpan groups timed words into the spans they start in, joining each
// span's words into its text. Engines that transcribe a whole file at
// once use it to give each segment its part.
func BySpan(words []Word, spans []extract.Span) []Result {
	out := make([]Result, len(spans))
	for _, w := range words {
		i := len(spans) - 1
		for j, s := range spans {
			if s.EndMS == 0 || w.StartMS < s.EndMS {
				i = j
				break
			}
		}
		if i < 0 {
			continue
		}
		out[i].Words = append(out[i].Words, w)
	}
	for i := range out {
		out[i].Text = joinWords(out[i].Words)
	}
	return out
}

func joinWords(words []Word) string {
	b := make([]byte, 0, len(words)*6)
	for _, w := range words {
		if len(b) > 0 && !isPunctuation(w.Text) {
			b = append(b, ' ')
		}
		b = append(b, w.Text...)
	}
	return string(b)
}

// isPunctuation: Amazon Transcribe reports punctuation as items of its own
// that attach to the word before.
func isPunctuation(s string) bool {
	return s == "." || s == "," || s == "?" || s == "!" || s == ";" || s == ":"
}
