//go:build !race

package docx

// raceEnabled: see race_test.go.
const raceEnabled = false
