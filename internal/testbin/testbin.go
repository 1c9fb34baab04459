// Package testbin builds the docpipe binary for tests that run it as a
// child process (to kill it, or to measure it on its own).
//
// The binary is built with -race when the test binary is, so that
// it takes every package from the build cache the tests filled and costs
// a link, not a second compilation of the module. Every test package asks
// for it here, with the same command and flags: the builds of
// concurrently running test binaries take turns under a file lock, and
// the later ones find the binary up to date.
package testbin

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/docpipe/docpipe/internal/racebuild"
)

const docpipePkg = "github.com/docpipe/docpipe/cmd/docpipe"

var (
	once sync.Once
	bin  string
	err  error
)

// Docpipe returns the path of a docpipe binary built from this source
// tree, building it on the first call of the test binary.
func Docpipe(t testing.TB) string {
	t.Helper()
	once.Do(func() {
		bin, err = build()
		quietRaceExit()
	})
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// build builds docpipe into a directory of the temporary directory that
// belongs to this source tree (its path hashed), so that checkouts side by
// side never share a binary.
func build() (string, error) {
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("testbin: no source path")
	}
	root := filepath.Dir(filepath.Dir(filepath.Dir(self)))
	sum := sha256.Sum256([]byte(root))
	dir := filepath.Join(os.TempDir(), "docpipe-testbin-"+hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close() // closing releases the lock
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("testbin: lock %s: %w", lock.Name(), err)
	}
	out := filepath.Join(dir, "docpipe")
	args := []string{"build", "-o", out, "-ldflags=-w"} // no DWARF: a faster link
	if racebuild.Enabled {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, docpipePkg)...)
	cmd.Dir = root
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", docpipePkg, err, msg)
	}
	return out, nil
}

// quietRaceExit stops the race runtime of the docpipe children (they
// inherit this environment) from sleeping a second at exit, its default
// (atexit_sleep_ms), which would be most of a short run's time. A race in
// a child still prints its report and makes it exit with status 66.
func quietRaceExit() {
	v := os.Getenv("GORACE")
	if !racebuild.Enabled || strings.Contains(v, "atexit_sleep_ms") {
		return
	}
	os.Setenv("GORACE", strings.TrimSpace(v+" atexit_sleep_ms=0"))
}
