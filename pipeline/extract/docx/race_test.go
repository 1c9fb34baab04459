//go:build race

package docx

// raceEnabled skips the 64 MB memory test under the race detector: its
// instrumentation makes the test take minutes, and the small tests already
// run the spill path at thresholds of a few bytes.
const raceEnabled = true
