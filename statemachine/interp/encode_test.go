package interp

import (
	"encoding/json"
	"testing"
)

func TestMarshalMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	docs := []string{
		`null`, `true`, `0`, `-0.5`, `1e21`, `1e-7`, `123456789012`, `0.000001`, `1.5e300`,
		`"plain"`, `"quote\" back\\ <tag> & \u2028 \n tab\t é 日本"`,
		`{"b":[1,{"z":null,"a":"x"}],"a":{},"c":[]}`,
	}
	for _, d := range docs {
		var v any
		if err := json.Unmarshal([]byte(d), &v); err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := marshal(v)
		if err != nil {
			t.Fatalf("marshal(%s): %v", d, err)
		}
		if string(got) != string(want) {
			t.Errorf("marshal(%s) = %s, want %s", d, got, want)
		}
	}
}
