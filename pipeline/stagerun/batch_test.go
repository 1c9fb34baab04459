package stagerun

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docpipe/docpipe/pipeline/steperr"
)

// batchArg makes the test binary a batch-mode stage (see TestMain): per
// request line it answers {"n": 1, "index": i, "text": TEXT, "stage": ...}
// with the text upper-cased, or {"index": i, "error": "bad input"} when
// the text is "fail". With "reverse" it reads every request first and
// answers them last to first.
const batchArg = "stagerun-test-batch-stage"

func batchStage(reverse bool) int {
	var reqs []Request
	answer := func(req Request) {
		if req.Segment.Text == "fail" {
			fmt.Printf("{\"index\": %d, \"error\": \"bad input\"}\n", req.Segment.Index)
			return
		}
		text, _ := json.Marshal(strings.ToUpper(req.Segment.Text))
		fmt.Printf("{\"n\": 1, \"index\": %d, \"text\": %s, \"stage\": %q}\n", req.Segment.Index, text, os.Getenv("DOCPIPE_STAGE"))
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	for in.Scan() {
		var req Request
		if err := json.Unmarshal(in.Bytes(), &req); err != nil || req.Segment == nil {
			fmt.Fprintln(os.Stderr, "bad request:", err)
			return 2
		}
		if reverse {
			reqs = append(reqs, req)
		} else {
			answer(req)
		}
	}
	for _, req := range slices.Backward(reqs) {
		answer(req)
	}
	return 0
}

// batchOf is a batch of segment requests with the given texts, indexes
// 1, 2, ...
func batchOf(t *testing.T, texts ...string) []Request {
	t.Helper()
	reqs := make([]Request, len(texts))
	for i, text := range texts {
		reqs[i] = segmentRequest(t, text)
		reqs[i].Segment.Index = i + 1
	}
	return reqs
}

func runBatch(t *testing.T, c *BatchCommand, reqs []Request) []Answer {
	t.Helper()
	answers, err := c.RunBatch(t.Context(), reqs)
	if err != nil {
		t.Fatal(err)
	}
	if len(answers) != len(reqs) {
		t.Fatalf("%d answers for %d requests", len(answers), len(reqs))
	}
	for i, a := range answers {
		if a.Index != reqs[i].Segment.Index {
			t.Fatalf("answer %d is for segment %d, want %d", i, a.Index, reqs[i].Segment.Index)
		}
	}
	return answers
}

// wantAnswered checks that the answer has no error and the output want.
func wantAnswered(t *testing.T, a Answer, want string) {
	t.Helper()
	if a.Err != nil {
		t.Fatalf("segment %d failed: %v", a.Index, a.Err)
	}
	if string(a.Result.Output) != want {
		t.Errorf("segment %d output %s, want %s", a.Index, a.Result.Output, want)
	}
}

func TestBatchAnswersInAnyOrder(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"in order", "reverse"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			argv := []string{os.Args[0], batchArg}
			if mode == "reverse" {
				argv = append(argv, "reverse")
			}
			reqs := batchOf(t, "one", "fail", "three")
			answers := runBatch(t, NewBatchCommand(argv, t.TempDir(), time.Minute), reqs)
			wantAnswered(t, answers[0], `{"n": 1, "text": "ONE", "stage": "shout"}`)
			if answers[0].Result.Text == nil || *answers[0].Result.Text != "ONE" {
				t.Errorf("segment 1 text %v, want ONE", answers[0].Result.Text)
			}
			wantErr(t, answers[1].Err, steperr.NameStageFailed, "shout: bad input")
			wantAnswered(t, answers[2], `{"n": 1, "text": "THREE", "stage": "shout"}`)
		})
	}
}

func TestPythonBatchStage(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed; the Go stage covers the same contract")
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "count.py"), `import json, sys
for line in sys.stdin:
    req = json.loads(line)
    seg = req["segment"]
    print(json.dumps({"index": seg["index"], "words": len(seg["text"].split())}), flush=True)
`)
	answers := runBatch(t, NewBatchCommand([]string{"python3", "count.py"}, dir, time.Minute), batchOf(t, "a b c", "", "d e"))
	for i, want := range []string{`{"words": 3}`, `{"words": 0}`, `{"words": 2}`} {
		wantAnswered(t, answers[i], want)
	}
}

func TestBatchExitFailsOnlyTheUnanswered(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, script string
		reason       []string
	}{
		{"exit 3", `echo '{"index": 1}'; echo boom >&2; exit 3`, []string{"shout: exit status 3: boom"}},
		{"killed by a signal", `echo '{"index": 1}'; kill -SEGV $$`, []string{"shout: signal: segmentation fault"}},
		{"exit 0 early", `echo '{"index": 1}'; echo 'only one' >&2`, []string{"shout: exited without answering: only one"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			answers := runBatch(t, NewBatchCommand(shell(tc.script), "", time.Minute), batchOf(t, "a", "b", "c"))
			wantAnswered(t, answers[0], `{}`)
			for _, a := range answers[1:] {
				wantErr(t, a.Err, steperr.NameStageFailed, tc.reason...)
			}
		})
	}
}

func TestBatchTempFailIsTransientForTheWholeBatch(t *testing.T) {
	t.Parallel()
	_, err := NewBatchCommand(shell(`echo '{"index": 1}'; echo busy >&2; exit 75`), "", time.Minute).RunBatch(t.Context(), batchOf(t, "a", "b"))
	wantErr(t, err, steperr.NameTransient, "shout: exit status 75: busy")
}

func TestBatchProtocolErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, line, reason string }{
		{"not JSON", `hello`, `shout: answer line 2 is not a JSON object: hello`},
		{"an array", `[1, 2]`, `answer line 2 is not a JSON object: [1, 2]`},
		{"no index", `{"words": 2}`, `answer line 2 has no "index": {"words": 2}`},
		{"index not a number", `{"index": "2"}`, `answer line 2 has an "index" that is not a whole number`},
		{"index twice in a line", `{"index": 2, "index": 3}`, `answer line 2 has "index" twice`},
		{"unknown segment", `{"index": 9}`, `answer line 2 answers segment 9, which is not in the batch`},
		{"answered twice", `{"index": 1}`, `answer line 2 answers segment 1 a second time`},
		{"two values", `{"index": 2} {}`, `answer line 2 holds more than one JSON value`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pidFile := filepath.Join(t.TempDir(), "pid")
			// Whatever follows a bad line is not believed, and the
			// process is stopped rather than waited for.
			script := fmt.Sprintf(`sleep 1000 & echo $! > %s; echo '{"index": 1}'; echo '%s'; echo '{"index": 3}'; wait`, pidFile, tc.line)
			c := NewBatchCommand(shell(script), "", time.Minute)
			c.Grace = 200 * time.Millisecond
			answers := runBatch(t, c, batchOf(t, "a", "b", "c"))
			wantAnswered(t, answers[0], `{}`)
			for _, a := range answers[1:] {
				wantErr(t, a.Err, steperr.NameStageFailed, tc.reason)
			}
			waitGone(t, readPid(t, pidFile))
		})
	}
}

func TestBatchTimeoutBoundsEachAnswer(t *testing.T) {
	t.Parallel()
	t.Run("answers in time", func(t *testing.T) {
		t.Parallel()
		// 1.5 s in all, 0.3 s between answers: within a 1 s timeout.
		script := `for i in 1 2 3 4 5; do sleep 0.3; echo "{\"index\": $i}"; done`
		answers := runBatch(t, NewBatchCommand(shell(script), "", time.Second), batchOf(t, "a", "b", "c", "d", "e"))
		for _, a := range answers {
			wantAnswered(t, a, `{}`)
		}
	})
	t.Run("an answer late", func(t *testing.T) {
		t.Parallel()
		pidFile := filepath.Join(t.TempDir(), "pid")
		c := NewBatchCommand(startsSleeper(pidFile, `echo '{"index": 1}'; trap '' TERM; wait`), "", 300*time.Millisecond)
		c.Grace = 200 * time.Millisecond
		_, err := c.RunBatch(t.Context(), batchOf(t, "a", "b"))
		wantErr(t, err, steperr.NameTransient, "shout: timed out after 0.3s without an answer")
		waitGone(t, readPid(t, pidFile))
	})
}

func TestBatchProcessLingeringAfterTheLastAnswerIsStopped(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	c := NewBatchCommand(startsSleeper(pidFile, `echo '{"index": 1}'; echo '{"index": 2}'; wait`), "", time.Minute)
	c.Grace = 100 * time.Millisecond
	answers := runBatch(t, c, batchOf(t, "a", "b"))
	wantAnswered(t, answers[0], `{}`)
	wantAnswered(t, answers[1], `{}`)
	waitGone(t, readPid(t, pidFile))
}

func TestBatchOutputBounds(t *testing.T) {
	t.Parallel()
	pad := `pad=$(head -c 600000 /dev/zero | tr '\0' a); `
	t.Run("in all", func(t *testing.T) {
		t.Parallel()
		c := NewBatchCommand(shell(pad+`for i in 1 2 3; do echo "{\"index\": $i, \"pad\": \"$pad\"}"; done`), "", time.Minute)
		c.MaxOutput, c.MaxAnswer = 1<<20, 1<<20
		answers := runBatch(t, c, batchOf(t, "a", "b", "c"))
		if answers[0].Err != nil || len(answers[0].Result.Output) < 600000 {
			t.Fatalf("segment 1: %v", answers[0].Err)
		}
		for _, a := range answers[1:] {
			wantErr(t, a.Err, steperr.NameStageFailed, "shout: output too large (over 1048576 bytes)")
		}
	})
	t.Run("one line", func(t *testing.T) {
		t.Parallel()
		c := NewBatchCommand(shell(pad+`echo "{\"index\": 1, \"pad\": \"$pad\"}"`), "", time.Minute)
		c.MaxAnswer = 500000
		answers := runBatch(t, c, batchOf(t, "a"))
		wantErr(t, answers[0].Err, steperr.NameStageFailed, "shout: answer line 1 is over 500000 bytes")
	})
}

func TestBatchCancelKillsTheProcessGroup(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(t.Context())
	go cancelOncePidWritten(pidFile, cancel)
	_, err := NewBatchCommand(startsSleeper(pidFile, "wait"), "", time.Minute).RunBatch(ctx, batchOf(t, "a"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	waitGone(t, readPid(t, pidFile))
}

func TestBatchRejectsWhatIsNoSegmentBatch(t *testing.T) {
	t.Parallel()
	c := NewBatchCommand(shell("exit 0"), "", time.Minute)
	doc := segmentRequest(t, "x")
	doc.Segment, doc.Scope = nil, ScopeDocument
	_, err := c.RunBatch(t.Context(), []Request{doc})
	wantErr(t, err, steperr.NameInvalidInput, "batch mode runs segment stages only")
	twice := batchOf(t, "a", "b")
	twice[1].Segment.Index = 1
	_, err = c.RunBatch(t.Context(), twice)
	wantErr(t, err, steperr.NameInvalidInput, "segment 1 is twice in the batch")
}

func TestSplitIndex(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ line, rest string }{
		{`{"index": 1}`, `{}`},
		{`{"index":1,"a":2}`, `{"a":2}`},
		{`{"index": 1, "words": 3}`, `{"words": 3}`},
		{` { "index" : 1 , "a" : [1, {"index": 5}] } `, `{"a" : [1, {"index": 5}] }`},
		{`{"a": "x", "index": 1, "b": null}`, `{"a": "x", "b": null}`},
		{`{"a": {"b": 2}, "index": 1}`, `{"a": {"b": 2}}`},
	} {
		index, rest, reason := splitIndex([]byte(tc.line))
		if reason != "" || index != 1 || string(rest) != tc.rest {
			t.Errorf("splitIndex(%s) = %d, %s, %q; want 1, %s", tc.line, index, rest, reason, tc.rest)
		}
		if !json.Valid(rest) {
			t.Errorf("rest %s is not JSON", rest)
		}
	}
}

// BenchmarkPythonBatch runs a one-line Python batch stage on batches of
// 100 segments: the cost per segment once the interpreter start is shared.
func BenchmarkPythonBatch(b *testing.B) {
	if _, err := exec.LookPath("python3"); err != nil {
		b.Skip("python3 is not installed")
	}
	c := NewBatchCommand([]string{"python3", "-c", `import sys, json; [print(json.dumps({"index": r["segment"]["index"], "chars": len(r["segment"]["text"])}), flush=True) for r in map(json.loads, sys.stdin)]`}, "", time.Minute)
	reqs := make([]Request, 100)
	for i := range reqs {
		reqs[i] = Request{WorkflowID: "wf", Stage: "chars", Scope: ScopeSegment, Segment: &Segment{Index: i + 1, Text: strings.Repeat("word ", 400)}}
	}
	for b.Loop() {
		answers, err := c.RunBatch(b.Context(), reqs)
		if err != nil {
			b.Fatal(err)
		}
		if answers[99].Err != nil {
			b.Fatal(answers[99].Err)
		}
	}
	b.ReportMetric(float64(b.N*len(reqs))/b.Elapsed().Seconds(), "segments/s")
}
