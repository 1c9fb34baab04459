package contract

import (
	"context"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"pgregory.net/rapid"
)

// fakeStageEnv, set in docpipe's environment, makes this test binary act
// as the fake command stage when docpipe runs it.
const fakeStageEnv = "DOCPIPE_CONTRACT_FAKE_STAGE"

var cases = flag.Int("contract.n", 0, "generated cases to run (default 200, or $DOCPIPE_CONTRACT_N)")

func TestMain(m *testing.M) {
	if os.Getenv(fakeStageEnv) == "1" {
		os.Exit(RunCommand(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// caseCount is how many cases TestContract runs: the flag, else the
// environment, else 200.
func caseCount(t *testing.T) int {
	if *cases > 0 {
		return *cases
	}
	if v := os.Getenv("DOCPIPE_CONTRACT_N"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			t.Fatalf("DOCPIPE_CONTRACT_N=%q: want a positive number", v)
		}
		return n
	}
	return 200
}

// buildDocpipe builds the docpipe binary once for the test.
func buildDocpipe(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "docpipe")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/docpipe/docpipe/cmd/docpipe")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build docpipe: %v\n%s", err, out)
	}
	return bin
}

// TestContract runs generated pipelines with generated faults on the
// embedded engine and checks every surface against the oracle. A failure
// prints rapid's seed (rerun with -rapid.seed=N) and the case: pipeline
// file, documents and faults.
//
// The cases spend most of their time waiting for retries, so they run in
// lanes side by side, each a rapid check of its share of the cases; with
// -rapid.seed one lane runs, so that the seed reproduces one sequence.
func TestContract(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	svc := NewService()
	srv := httptest.NewServer(svc)
	// The lanes run after this function returns; the server outlives them.
	t.Cleanup(srv.Close)
	runner := Runner{Docpipe: buildDocpipe(t), Env: []string{fakeStageEnv + "=1"}}
	var seq atomic.Int64
	lanes := setChecks(t)
	only := onlyInvariants()
	prop := func(rt *rapid.T) {
		c := Generator(DefaultOptions()).Draw(rt, "case")
		id := fmt.Sprintf("case%d", seq.Add(1))
		dir, err := os.MkdirTemp("", "docpipe-contract-*")
		if err != nil {
			rt.Fatal(err)
		}
		if os.Getenv("DOCPIPE_CONTRACT_KEEP") == "" {
			defer os.RemoveAll(dir)
		}
		svc.Register(id, NewPlan(&c, filepath.Join(dir, "state")))
		defer svc.Forget(id)
		r := runner
		r.Endpoints = Endpoints{Command: []string{self}, CommandEnv: []string{fakeStageEnv}, HTTP: srv.URL + "/" + id}
		res := r.Run(context.Background(), &c, dir)
		var b strings.Builder
		for _, v := range res.Violations {
			if only == nil || only[v.Invariant] {
				fmt.Fprintf(&b, "  %s\n", v)
			}
		}
		if b.Len() == 0 {
			return
		}
		rt.Fatalf("the contract breaks:\n%s\ncase:\n%s\ndocpipe run (in %s):\n%s", b.String(), c.String(), dir, res.Output)
	}
	for lane := range lanes {
		t.Run(fmt.Sprintf("lane%d", lane+1), func(t *testing.T) {
			t.Parallel()
			rapid.Check(t, prop)
		})
	}
}

// contractLanes is how many rapid checks run side by side.
const contractLanes = 4

// setChecks tells rapid how many cases each lane runs, unless
// -rapid.checks says, and returns the number of lanes.
func setChecks(t *testing.T) int {
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	lanes := contractLanes
	if set["rapid.seed"] {
		lanes = 1
	}
	if !set["rapid.checks"] {
		n := (caseCount(t) + lanes - 1) / lanes
		if err := flag.Set("rapid.checks", strconv.Itoa(n)); err != nil {
			t.Fatal(err)
		}
	}
	return lanes
}

// onlyInvariants reads $DOCPIPE_CONTRACT_ONLY, a comma-separated list of
// invariant names, to look at one broken promise at a time; unset, every
// invariant counts.
func onlyInvariants() map[string]bool {
	v := os.Getenv("DOCPIPE_CONTRACT_ONLY")
	if v == "" {
		return nil
	}
	m := map[string]bool{}
	for _, name := range strings.Split(v, ",") {
		m[strings.TrimSpace(name)] = true
	}
	return m
}
