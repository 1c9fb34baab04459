package pipeline

import (
	"context"
	"testing"

	"github.com/docpipe/docpipe/pipeline/steperr"
)

func TestRegistryDispatchesOnStepName(t *testing.T) {
	reg := NewRegistry()
	reg.Register("a", HandlerFunc(func(ctx context.Context, p []byte) ([]byte, error) { return []byte(`"A"`), nil }))
	out, err := reg.Invoke(context.Background(), []byte(`{"step":"a"}`))
	if err != nil || string(out) != `"A"` {
		t.Fatalf("Invoke = %s, %v", out, err)
	}
	if _, err := reg.Invoke(context.Background(), []byte(`{"step":"b"}`)); steperr.Name(err) != steperr.NameInvalidInput {
		t.Errorf("unknown step: err = %v", err)
	}
	if _, err := reg.Invoke(context.Background(), []byte(`not json`)); steperr.Name(err) != steperr.NameInvalidInput {
		t.Errorf("bad payload: err = %v", err)
	}
}
