//go:build !race

package testbin

// Race says the docpipe that Docpipe builds is race-instrumented.
const Race = false

func quietRaceExit() {}
