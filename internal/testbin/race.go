//go:build race

package testbin

import (
	"os"
	"strings"
)

// Race says the docpipe that Docpipe builds is race-instrumented: it is
// when the test binary is, so that its packages come from the same build
// cache entries as the tests' own.
const Race = true

// quietRaceExit stops the race runtime of the docpipe children (they
// inherit this environment) from sleeping a second at exit, its default
// (atexit_sleep_ms), which would be most of a short run's time. A race in
// a child still prints its report and makes it exit with status 66.
func quietRaceExit() {
	v := os.Getenv("GORACE")
	if strings.Contains(v, "atexit_sleep_ms") {
		return
	}
	os.Setenv("GORACE", strings.TrimSpace(v+" atexit_sleep_ms=0"))
}
