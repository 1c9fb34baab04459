package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/docpipe/docpipe/internal/testbin"
)

// initBudget is the most a docpipe package may allocate while it is
// initialised. Every command, `docpipe --version` included, runs every
// linked package's initialisation before main: a regular expression, a
// word table or a parser built in a package-level variable is paid by all
// of them, so such state is built on first use (sync.OnceValue) by the
// package that owns it. A handful of small maps and error values fits.
const initBudget = 16 << 10

// initLine is one line of the runtime's GODEBUG=inittrace=1 report.
var initLine = regexp.MustCompile(`^init (\S+) @\S+ ms, \S+ ms clock, (\d+) bytes, (\d+) allocs$`)

// TestStartupInitStaysSmall runs the built binary with the runtime's init
// trace and checks that no docpipe package builds costly state at
// start-up. It counts the bytes each package's initialisation allocates,
// which the build fixes, rather than timing it, which the machine's load
// would blur. Third-party packages are not checked: Go runs the
// initialisation of every package linked into the binary, and only their
// owners can make it lazy.
func TestStartupInitStaysSmall(t *testing.T) {
	bin := testbin.Docpipe(t)
	cmd := exec.Command(bin, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG="+strings.Trim(os.Getenv("GODEBUG")+",inittrace=1", ","))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("docpipe --version: %v\n%s", err, stderr.Bytes())
	}
	own, over := checkInitTrace(t, stderr.Bytes())
	if own == 0 {
		t.Fatalf("the init trace names no docpipe package; its format may have changed:\n%s", stderr.Bytes())
	}
	for _, o := range over {
		t.Errorf("%s allocates %d bytes in %d allocations at start-up, over %d: build that state on first use", o.pkg, o.bytes, o.allocs, initBudget)
	}
}

type initCost struct {
	pkg           string
	bytes, allocs int
}

// checkInitTrace returns how many docpipe packages the trace names and
// those over initBudget.
func checkInitTrace(t *testing.T, trace []byte) (own int, over []initCost) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(trace))
	for sc.Scan() {
		m := initLine.FindStringSubmatch(sc.Text())
		if m == nil || !isDocpipePackage(m[1]) {
			continue
		}
		own++
		c := initCost{pkg: m[1], bytes: atoi(t, m[2]), allocs: atoi(t, m[3])}
		if c.bytes > initBudget {
			over = append(over, c)
		}
	}
	return own, over
}

func isDocpipePackage(pkg string) bool {
	return pkg == "main" || strings.HasPrefix(pkg, "github.com/docpipe/docpipe/")
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(fmt.Errorf("init trace: %w", err))
	}
	return n
}

// TestCheckInitTrace shows the check on a trace of known content: a
// docpipe package over the budget is named, one under it and third-party
// packages are not.
func TestCheckInitTrace(t *testing.T) {
	trace := []byte(`init github.com/aws/aws-sdk-go-v2/service/dynamodb/schemas @9.1 ms, 0.80 ms clock, 586696 bytes, 3151 allocs
init github.com/docpipe/docpipe/pipeline/analyze @10 ms, 0.28 ms clock, 161432 bytes, 551 allocs
init github.com/docpipe/docpipe/pipeline/extract/docx @11 ms, 0.050 ms clock, 9888 bytes, 140 allocs
init github.com/docpipe/docpipe/internal/cpus @11 ms, 0.007 ms clock, 0 bytes, 0 allocs
`)
	own, over := checkInitTrace(t, trace)
	if own != 3 {
		t.Errorf("docpipe packages seen = %d, want 3", own)
	}
	want := []initCost{{"github.com/docpipe/docpipe/pipeline/analyze", 161432, 551}}
	if fmt.Sprint(over) != fmt.Sprint(want) {
		t.Errorf("over budget = %v, want %v", over, want)
	}
}
