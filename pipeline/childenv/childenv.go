// Package childenv builds the environment of the programs users configure
// docpipe to run (command stages, the event command). They get what a
// program needs to run at all and what they are given by name, never the
// whole of docpipe's environment, which holds its credentials (AWS_*,
// DOCPIPE_TOKEN, DOCPIPE_WEBHOOK_SECRET, ...).
package childenv

import (
	"os"
	"regexp"
	"slices"
	"strings"
)

// Base are the variables every program gets when docpipe has them.
var Base = []string{"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "TZ"}

// namePattern is what a variable name given to Pass may look like.
var namePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ValidName reports whether name can name an environment variable.
func ValidName(name string) bool { return namePattern.MatchString(name) }

// Minimal returns the environment of a program: the Base variables and
// those named in pass, taken from docpipe's environment when set there,
// followed by own ("NAME=value", the variables docpipe sets for the
// program itself, which win over inherited ones).
func Minimal(pass []string, own ...string) []string {
	return build(os.Environ(), pass, own)
}

func build(environ, pass, own []string) []string {
	keep := func(name string) bool { return slices.Contains(Base, name) || slices.Contains(pass, name) }
	mine := func(name string) bool {
		return slices.ContainsFunc(own, func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
	}
	env := make([]string, 0, len(Base)+len(pass)+len(own))
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if ok && keep(name) && !mine(name) {
			env = append(env, kv)
		}
	}
	return append(env, own...)
}
