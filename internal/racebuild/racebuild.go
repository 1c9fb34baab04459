// Package racebuild says whether this binary was built with the race
// detector (go build -race, go test -race).
package racebuild
