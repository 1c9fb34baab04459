package asl

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// ParseTimestamp parses an ASL timestamp (RFC 3339, upper-case T and Z).
func ParseTimestamp(s string) (time.Time, error) {
	if strings.ContainsAny(s, "tz") {
		return time.Time{}, fmt.Errorf("timestamp %q must use upper-case T and Z", s)
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("timestamp %q is not RFC 3339", s)
	}
	return t, nil
}

// Timestamp is a timestamp field (Wait Timestamp, a Timestamp* comparison
// operand). A malformed one keeps its text; Validate reports it.
type Timestamp struct {
	Raw  string
	Time time.Time
	err  error
}

// NewTimestamp parses s; a malformed timestamp is kept and reported by
// Validate.
func NewTimestamp(s string) Timestamp {
	t, err := ParseTimestamp(s)
	return Timestamp{Raw: s, Time: t, err: err}
}

// UnmarshalJSON reads a timestamp string.
func (t *Timestamp) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("timestamp must be a string")
	}
	*t = NewTimestamp(s)
	return nil
}

// MarshalJSON writes the source text.
func (t Timestamp) MarshalJSON() ([]byte, error) { return json.Marshal(t.Raw) }
