package interp

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"

	"github.com/docpipe/docpipe/statemachine/asl"
)

// distributedDefinition mirrors the pipeline's fan-out: a distributed Map
// reading a manifest of batches, one task per batch.
const distributedDefinition = `{
  "StartAt": "Segments",
  "States": {
    "Segments": {
      "Type": "Map",
      "ItemReader": {
        "Resource": "arn:aws:states:::s3:getObject",
        "ReaderConfig": {"InputType": "JSON"},
        "Parameters": {"Bucket": "blobs", "Key.$": "$.manifest"}
      },
      "ItemSelector": {"batch.$": "$$.Map.Item.Value", "workflow.$": "$.workflow"},
      "ItemProcessor": {
        "ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"},
        "StartAt": "Analyze",
        "States": {
          "Analyze": {
            "Type": "Task",
            "Resource": "arn:aws:states:::lambda:invoke",
            "Parameters": {"step": "segment_analyzer", "batch.$": "$.batch", "workflow.$": "$.workflow"},
            "ResultPath": null,
            "Retry": [{"ErrorEquals": ["TransientError"], "JitterStrategy": "FULL"}],
            "End": true
          }
        }
      },
      "ResultPath": null,
      "End": true
    }
  }
}`

func manifest(n int) []byte {
	items := make([]map[string]int, n)
	for i := range items {
		items[i] = map[string]int{"batch": i, "from": i + 1, "to": i + 1}
	}
	b, _ := json.Marshal(items)
	return b
}

// BenchmarkDistributedMap measures pure orchestration of a 10,000-item
// distributed Map with a no-op task, with and without a history callback.
func BenchmarkDistributedMap(b *testing.B) {
	const items = 10000
	sm, err := asl.Parse([]byte(distributedDefinition))
	if err != nil {
		b.Fatal(err)
	}
	data := manifest(items)
	noop := TaskInvokerFunc(func(context.Context, string, json.RawMessage, TaskContext) (json.RawMessage, error) {
		return json.RawMessage(`{}`), nil
	})
	reader := ItemReaderFunc(func(context.Context, string, string) ([]byte, error) { return data, nil })
	for _, withEvents := range []bool{false, true} {
		b.Run(fmt.Sprintf("events=%v", withEvents), func(b *testing.B) {
			opts := Options{Tasks: noop, ItemReader: reader}
			var events int
			if withEvents {
				opts.OnEvent = func(Event) { events++ }
			}
			eng := New(opts)
			input := json.RawMessage(`{"manifest": "m.json", "workflow": "wf-1"}`)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			b.ResetTimer()
			for b.Loop() {
				if _, err := eng.Execute(context.Background(), sm, "bench", input); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			runtime.ReadMemStats(&after)
			n := float64(b.N) * items
			b.ReportMetric(n/b.Elapsed().Seconds(), "items/s")
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/item")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/n, "B/item")
		})
	}
}
