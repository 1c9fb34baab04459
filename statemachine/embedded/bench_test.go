package embedded_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/docpipe/docpipe/pipeline"
	"github.com/docpipe/docpipe/pipeline/driver/dirblob"
	"github.com/docpipe/docpipe/pipeline/pipelinefile"
	"github.com/docpipe/docpipe/pipeline/steps"
	"github.com/docpipe/docpipe/statemachine/embedded"
)

// BenchmarkOrchestration runs the generated local-mode state machine with
// no-op handlers over a 10,000-segment manifest: pure orchestration cost.
// batch=1 is the worst case (one child execution per segment); batch=100 is
// the default pipeline's batching.
func BenchmarkOrchestration(b *testing.B) {
	for _, size := range []int{1, pipelinefile.Default().BatchSize} {
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) { benchOrchestration(b, size) })
	}
}

func benchOrchestration(b *testing.B, batchSize int) {
	const segments = 10_000
	ctx := context.Background()
	blobs, err := dirblob.New(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	ref := pipeline.WorkflowRef{ProjectID: "p", DocumentID: "d", WorkflowID: "w"}
	manifest, _ := json.Marshal(steps.BuildManifest(segments, batchSize))
	key := pipeline.ManifestBlobKey(ref)
	if err := blobs.Put(ctx, key, bytesReader(manifest)); err != nil {
		b.Fatal(err)
	}
	reg := pipeline.NewRegistry()
	noop := pipeline.HandlerFunc(func(context.Context, []byte) ([]byte, error) { return []byte(`{}`), nil })
	for _, name := range pipelinefile.Default().StepNames() {
		reg.Register(name, noop)
	}
	eng, err := embedded.New(reg, blobs, embedded.Options{})
	if err != nil {
		b.Fatal(err)
	}
	in := pipeline.ExecutionInput{Workflow: ref, Bucket: "local", ManifestKey: key}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := eng.Run(ctx, pipelinefile.Default(), 0, in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(segments*b.N)/b.Elapsed().Seconds(), "segments/s")
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
