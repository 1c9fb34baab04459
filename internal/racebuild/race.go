//go:build race

package racebuild

// Enabled: built with -race.
const Enabled = true
