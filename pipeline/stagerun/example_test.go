package stagerun_test

import (
	"context"
	"fmt"
	"time"

	"github.com/docpipe/docpipe/pipeline/stagerun"
)

// A command stage reads one JSON request on stdin and answers with JSON on
// stdout; a failure that is the stage's own is a StageFailedError, which
// fails that segment alone.
func ExampleCommand() {
	c := stagerun.NewCommand([]string{"sh", "-c", `cat >/dev/null; echo '{"words": 2}'`}, "", time.Minute)
	res, err := c.Run(context.Background(), stagerun.Request{
		Stage: "count", Scope: stagerun.ScopeSegment,
		Segment: &stagerun.Segment{Index: 1, Text: "two words"},
	})
	fmt.Println(string(res.Output), err)
	// Output: {"words": 2} <nil>
}

// In batch mode one process answers a whole batch: one request a line
// in, one answer a line out, in any order; an "error" answer fails that
// segment alone.
func ExampleBatchCommand() {
	script := `import json, sys
for line in sys.stdin:
    seg = json.loads(line)["segment"]
    if seg["index"] == 2:
        print(json.dumps({"index": 2, "error": "no words"}), flush=True)
    else:
        print(json.dumps({"index": seg["index"], "words": len(seg["text"].split())}), flush=True)
`
	b := stagerun.NewBatchCommand([]string{"python3", "-c", script}, "", time.Minute)
	var reqs []stagerun.Request
	for i, text := range []string{"one", "", "three more words"} {
		reqs = append(reqs, stagerun.Request{Stage: "count", Scope: stagerun.ScopeSegment, Segment: &stagerun.Segment{Index: i + 1, Text: text}})
	}
	answers, err := b.RunBatch(context.Background(), reqs)
	if err != nil {
		panic(err)
	}
	for _, a := range answers {
		if a.Err != nil {
			fmt.Println(a.Index, "failed:", a.Err)
			continue
		}
		fmt.Println(a.Index, string(a.Result.Output))
	}
	// Output:
	// 1 {"words": 1}
	// 2 failed: count: no words
	// 3 {"words": 3}
}
