package stagerun

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/docpipe/docpipe/pipeline/steperr"
)

// BatchRunner runs a segment stage on many segments with one process.
type BatchRunner interface {
	RunBatch(ctx context.Context, reqs []Request) ([]Answer, error)
}

// Answer is one segment's outcome in a batch, in the order of reqs.
type Answer struct {
	Index  int
	Result Result // valid when Err is nil
	Err    error  // a *steperr.StageFailedError failing this segment alone
}

// DefaultMaxAnswer bounds one answer line of a batch command.
const DefaultMaxAnswer = 16 << 20

// BatchCommand runs a segment stage as one local program per batch: one
// request a line on stdin, one answer a line on stdout (see the package
// documentation, "Batch mode").
type BatchCommand struct {
	Program
	// Timeout bounds the wait for each answer: from the start to the
	// first, and from each answer to the next; zero means none.
	Timeout time.Duration
	// MaxOutput bounds the whole of stdout in bytes, MaxAnswer one line.
	MaxOutput, MaxAnswer int64
}

// NewBatchCommand returns a batch runner for argv run in dir, waiting at
// most timeout for each answer.
func NewBatchCommand(argv []string, dir string, timeout time.Duration) *BatchCommand {
	return &BatchCommand{
		Program: Program{Argv: argv, Dir: dir, Grace: DefaultGrace}, Timeout: timeout,
		MaxOutput: DefaultMaxOutput, MaxAnswer: DefaultMaxAnswer,
	}
}

// Why a batch's process was stopped before it exited on its own; a
// *protocolError is the other reason.
var (
	errOutputTooLarge = errors.New("output too large")
	errAllAnswered    = errors.New("every segment answered")
)

// protocolError is an answer line that breaks the protocol.
type protocolError struct{ reason string }

func (e *protocolError) Error() string { return e.reason }

// RunBatch writes every request to the program's stdin and collects one
// answer per segment. The error is for the batch as a whole: a
// *steperr.TransientError (exit 75, or no answer within Timeout), an
// *steperr.InvalidInputError, or the caller's cancellation; a segment that
// failed alone has its Answer.Err instead.
func (c *BatchCommand) RunBatch(ctx context.Context, reqs []Request) ([]Answer, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	stage := reqs[0].Stage
	if len(c.Argv) == 0 {
		return nil, &steperr.InvalidInputError{Reason: stage + ": empty command"}
	}
	b := &batch{stage: stage, answers: make([]Answer, len(reqs)), answered: make([]bool, len(reqs)), pos: make(map[int]int, len(reqs)), left: len(reqs)}
	var payload []byte
	for i, req := range reqs {
		if req.Segment == nil {
			return nil, &steperr.InvalidInputError{Reason: stage + ": batch mode runs segment stages only"}
		}
		if _, dup := b.pos[req.Segment.Index]; dup {
			return nil, &steperr.InvalidInputError{Reason: fmt.Sprintf("%s: segment %d is twice in the batch", stage, req.Segment.Index)}
		}
		b.pos[req.Segment.Index] = i
		b.answers[i].Index = req.Segment.Index
		req.Progress = nil
		line, err := localPayload(req)
		if err != nil {
			return nil, err
		}
		payload = append(append(payload, line...), '\n')
	}

	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	clock := &answerClock{stop: stop}
	clock.set(c.Timeout, errStageTimeout)
	defer clock.set(0, nil)

	first := reqs[0]
	first.Progress = nil // segment stages report no progress: stderr is all log
	p, err := c.start(first)
	if err != nil {
		return nil, &steperr.StageFailedError{Reason: fmt.Sprintf("%s: %v", stage, err)}
	}
	go p.feed(payload)
	go p.logStderr()
	go func() {
		defer p.io.Done()
		b.read(p, c, clock, stop)
	}()
	waitErr := p.wait(runCtx, c.Grace)

	var protocol *protocolError
	switch cause := context.Cause(runCtx); {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("%s: %w", stage, context.Cause(ctx))
	case cause == errStageTimeout:
		return nil, &steperr.TransientError{Reason: fmt.Sprintf("%s: timed out after %gs without an answer", stage, c.Timeout.Seconds())}
	case errors.As(cause, &protocol):
		b.failRest(fmt.Sprintf("%s: %s", stage, protocol.reason))
	case cause == errOutputTooLarge:
		b.failRest(fmt.Sprintf("%s: output too large (over %d bytes)", stage, c.MaxOutput))
	case exitCode(waitErr) == ExitTempFail:
		return nil, exitError(stage, waitErr, p.stderr.String())
	case b.left > 0 && waitErr != nil:
		b.failRest(exitError(stage, waitErr, p.stderr.String()).Error())
	case b.left > 0:
		reason := fmt.Sprintf("%s: exited without answering", stage)
		if tail := p.stderr.String(); tail != "" {
			reason += ": " + tail
		}
		b.failRest(reason)
	}
	return b.answers, nil
}

func exitCode(err error) int {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	return 0
}

// batch is the answers of one RunBatch as they arrive.
type batch struct {
	stage    string
	answers  []Answer
	answered []bool
	pos      map[int]int // segment index -> position in answers
	left     int         // segments not answered yet
}

// read takes the answers from stdout, one a line, restarting the answer
// clock after each. A line that breaks the protocol, or stdout past its
// bound, stops the process: what comes after is not trusted.
func (b *batch) read(p *process, c *BatchCommand, clock *answerClock, stop context.CancelCauseFunc) {
	defer func() {
		_, _ = io.Copy(io.Discard, p.stdoutR)
		_ = p.stdoutR.Close()
	}()
	r := bufio.NewReaderSize(p.stdoutR, 64<<10)
	var total int64
	for n := 1; ; n++ {
		limit := min(c.MaxAnswer, c.MaxOutput-total)
		line, err := readLine(r, limit)
		total += int64(len(line)) + 1
		if errors.Is(err, errLineTooLong) {
			if limit < c.MaxAnswer {
				p.killGroup()
				stop(errOutputTooLarge)
			} else {
				stop(&protocolError{fmt.Sprintf("answer line %d is over %d bytes", n, c.MaxAnswer)})
			}
			return
		}
		if len(bytes.TrimSpace(line)) > 0 {
			if reason := b.answer(line); reason != "" {
				stop(&protocolError{fmt.Sprintf("answer line %d %s: %s", n, reason, quote(line))})
				return
			}
			if b.left == 0 {
				// The program should now see the end of stdin and exit.
				clock.set(c.Grace, errAllAnswered)
			} else {
				clock.set(c.Timeout, errStageTimeout)
			}
		}
		if err != nil {
			return
		}
	}
}

// answer records one answer line; it returns why the line breaks the
// protocol, or "".
func (b *batch) answer(line []byte) string {
	index, rest, reason := splitIndex(line)
	if reason != "" {
		return reason
	}
	i, ok := b.pos[index]
	switch {
	case !ok:
		return fmt.Sprintf("answers segment %d, which is not in the batch", index)
	case b.answered[i]:
		return fmt.Sprintf("answers segment %d a second time", index)
	}
	b.answered[i] = true
	b.left--
	var failed struct {
		Error json.RawMessage `json:"error"`
	}
	_ = json.Unmarshal(rest, &failed) // rest is a JSON object: splitIndex checked it
	if len(failed.Error) > 0 && string(failed.Error) != "null" {
		msg := string(failed.Error)
		_ = json.Unmarshal(failed.Error, &msg)
		if msg == "" {
			msg = "failed without a reason"
		}
		b.answers[i].Err = &steperr.StageFailedError{Reason: fmt.Sprintf("%s: %s", b.stage, cut(msg, reasonBytes))}
		return ""
	}
	b.answers[i].Result, b.answers[i].Err = parseOutput(b.stage, ScopeSegment, rest)
	return ""
}

// failRest fails every segment not answered with reason.
func (b *batch) failRest(reason string) {
	for i := range b.answers {
		if !b.answered[i] {
			b.answers[i].Err = &steperr.StageFailedError{Reason: reason}
		}
	}
}

// splitIndex reads an answer line, a JSON object with an integer
// "index": it returns the index and the object without that member, byte
// for byte as the program wrote the rest; or why the line is no answer.
func splitIndex(line []byte) (index int, rest []byte, reason string) {
	line = bytes.TrimSpace(line)
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return 0, nil, "is not a JSON object"
	}
	cutFrom, cutTo := -1, -1
	prev := dec.InputOffset() // the end of the previous member, or of '{'
	for member := 0; dec.More(); member++ {
		key, err := dec.Token()
		if err != nil {
			return 0, nil, "is not a JSON object"
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return 0, nil, "is not a JSON object"
		}
		end := dec.InputOffset()
		if key == "index" {
			if cutFrom >= 0 {
				return 0, nil, `has "index" twice`
			}
			if err := json.Unmarshal(value, &index); err != nil {
				return 0, nil, `has an "index" that is not a whole number`
			}
			cutFrom, cutTo = int(prev), int(end)
			if member == 0 {
				// The first member: its separator is the comma after it,
				// and the space after that goes with it.
				if comma := bytes.IndexByte(line[end:], ','); comma >= 0 && dec.More() {
					after := line[int(end)+comma+1:]
					cutTo = len(line) - len(bytes.TrimLeft(after, " \t\r"))
				}
			}
		}
		prev = end
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return 0, nil, "is not a JSON object"
	}
	if _, err := dec.Token(); err != io.EOF {
		return 0, nil, "holds more than one JSON value"
	}
	if cutFrom < 0 {
		return 0, nil, `has no "index"`
	}
	rest = append(append(make([]byte, 0, len(line)), line[:cutFrom]...), line[cutTo:]...)
	return index, rest, ""
}

var errLineTooLong = errors.New("line too long")

// readLine reads one line without its newline, at most limit bytes of
// it; io.EOF comes with the last line when stdout ends without one.
func readLine(r *bufio.Reader, limit int64) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if int64(len(bytes.TrimSuffix(line, []byte("\n")))) > limit {
			return nil, errLineTooLong
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil:
			return line, err
		}
		return line[:len(line)-1], nil
	}
}

// quote shows the start of a line in a reason.
func quote(line []byte) string {
	const show = 120
	s := strings.ToValidUTF8(string(line[:min(len(line), show)]), "\uFFFD")
	if len(line) > show {
		s += "..."
	}
	return s
}

// cut bounds s to max bytes, on a rune boundary.
func cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	for max > 0 && !utf8.RuneStart(s[max]) {
		max--
	}
	return s[:max] + "..."
}

// answerClock stops the process with cause when set's duration passes
// without another set: the wait for the next answer.
type answerClock struct {
	mu    sync.Mutex
	timer *time.Timer
	stop  context.CancelCauseFunc
}

// set restarts the clock; d <= 0 stops it.
func (a *answerClock) set(d time.Duration, cause error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.timer != nil {
		a.timer.Stop()
		a.timer = nil
	}
	if d > 0 {
		a.timer = time.AfterFunc(d, func() { a.stop(cause) })
	}
}
