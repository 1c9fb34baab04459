package interp

import "github.com/docpipe/docpipe/internal/jsonvalue"

// marshal encodes a decoded JSON value exactly as encoding/json would (sorted
// object keys, the same number and string forms, HTML characters escaped)
// without reflection; task input is encoded once per task, so this is on
// the hot path.
func marshal(v any) ([]byte, error) {
	return jsonvalue.Append(make([]byte, 0, 128), v, true)
}
