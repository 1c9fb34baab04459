package pipelinefile

import (
	"testing"
)

// FuzzParse: no input makes parsing or validating panic.
func FuzzParse(f *testing.F) {
	f.Add(defaultFile)
	f.Add([]byte(head + "  - name: a\n    needs: [b]\n    run: {builtin: graph_builder}\n  - name: b\n    needs: [a]\n    run: {command: [sh]}\n"))
	f.Add([]byte(`{"name": "j", "stages": [{"name": "x", "run": {"http": "http://127.0.0.1:1/x"}, "when": {"pages": {"min": 1}}}]}`))
	f.Add([]byte("a: &x [*x]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		def, err := Parse("f.yaml", data)
		if err != nil {
			return
		}
		_ = Validate(def, TargetAWS)
		_ = def.ContentHash()
		if _, err := def.TopoOrder(); err == nil {
			for _, st := range def.Stages {
				def.Dependents(st.Name)
			}
		}
	})
}
