package main

import (
	"fmt"
	"time"
)

// localTimeLayout is how people read times: local zone, to the second.
const localTimeLayout = "2006-01-02 15:04:05"

// parseStored reads a timestamp as the table stores it (RFC 3339, with or
// without fractional seconds).
func parseStored(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}

// localTime renders a stored timestamp in the local zone; what it cannot
// parse it shows as stored, so nothing is hidden.
func localTime(s string) string {
	t, ok := parseStored(s)
	if !ok {
		return s
	}
	return t.Local().Format(localTimeLayout)
}

// took is the duration between two stored timestamps, or "" when either
// is missing (a step not started or still running).
func took(start, end string) string {
	s, ok1 := parseStored(start)
	e, ok2 := parseStored(end)
	if !ok1 || !ok2 || e.Before(s) {
		return ""
	}
	return shortDuration(e.Sub(s))
}

// shortDuration renders d at the precision a person needs: 350ms, 1.2s,
// 3m04s, 2h05m.
func shortDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		d = d.Round(time.Second)
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	d = d.Round(time.Minute)
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}
