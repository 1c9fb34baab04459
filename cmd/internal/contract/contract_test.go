package contract

import (
	"context"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/docpipe/docpipe/internal/testbin"
)

var cases = flag.Int("contract.n", 0, "generated cases to run (default 160, 48 with -short, or $DOCPIPE_CONTRACT_N); one in ten checks the stage cache, and one in four of the others also runs killed and resumed")

func TestMain(m *testing.M) {
	if os.Getenv(FakeStageEnv) == "1" {
		os.Exit(RunCommand(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// caseCount is how many cases TestContract runs: the flag, else the
// environment, else 160 (with some 40 of them also killed and resumed, about
// as long as 200 cases without kills, and some 16 checking the stage cache
// instead), or 48 with -short: eight a lane, a dozen of them killed, some
// five checking the cache.
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
	if testing.Short() {
		return 48
	}
	return 160
}

// TestContract runs generated pipelines with generated faults on the
// embedded engine and checks every surface against the oracle. One case
// in killShare is then run again, with docpipe run killed by SIGKILL at
// random points of the first run's duration and resumed, and checked
// against what the oracle still knows after a kill (ExpectAfterKill). A
// failure prints rapid's seed (rerun with -rapid.seed=N) and the case:
// pipeline file, documents, faults and the kills.
//
// The cases spend most of their time waiting for retries, so they run in
// lanes side by side, each a rapid check of its share of the cases; with
// -rapid.seed one lane runs, so that the seed reproduces one sequence.
// The moments of the kills are drawn as shares of a measured duration, so
// a seed reproduces them only roughly.
func TestContract(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	svc := NewService()
	srv := httptest.NewServer(svc)
	// The lanes run after this function returns; the server outlives them.
	t.Cleanup(srv.Close)
	l := &lab{
		runner:  Runner{Docpipe: testbin.Docpipe(t), Env: []string{FakeStageEnv + "=1"}},
		self:    self,
		service: svc,
		url:     srv.URL,
		only:    onlyInvariants(),
	}
	lanes := setChecks(t)
	t.Cleanup(func() {
		t.Logf("%d cases, %d of them also killed and resumed, %d backfilled onto a changed stage; %d kills landed", l.seq.Load()-l.killed.Load(), l.killed.Load(), l.cached.Load(), l.landed.Load())
	})
	prop := func(rt *rapid.T) {
		if rapid.IntRange(1, cacheShare).Draw(rt, "cache?") == 1 {
			c := Generator(CacheOptions()).Draw(rt, "case")
			if users := c.UserStages(); len(users) > 0 {
				l.runCached(rt, &c, rapid.SampledFrom(users).Draw(rt, "change"))
				return
			}
			l.run(rt, &c, nil)
			return
		}
		c := Generator(DefaultOptions()).Draw(rt, "case")
		ref := l.run(rt, &c, nil)
		if rapid.IntRange(1, killShare).Draw(rt, "kill?") != 1 {
			return
		}
		k := Kill{Resume: rapid.SampledFrom([]string{ResumeRun, ResumeWork}).Draw(rt, "resume")}
		for range rapid.IntRange(1, 2).Draw(rt, "kills") {
			permille := rapid.IntRange(0, 1000).Draw(rt, "kill_at_permille")
			k.After = append(k.After, ref.Elapsed*time.Duration(permille)/1000)
		}
		l.run(rt, &c, &k)
	}
	for lane := range lanes {
		t.Run(fmt.Sprintf("lane%d", lane+1), func(t *testing.T) {
			t.Parallel()
			rapid.Check(t, prop)
		})
	}
}

// killShare: one case in killShare is also run killed and resumed.
const killShare = 4

// cacheShare: one case in cacheShare checks the stage cache instead
// (RunCached), on a smaller case without transient faults.
const cacheShare = 10

// lab runs cases against one docpipe binary and one fake HTTP service.
type lab struct {
	runner  Runner
	self    string // this test binary, the fake command stage
	service *Service
	url     string
	only    map[string]bool
	seq     atomic.Int64
	// killed counts the cases run killed, landed the kills that ended a
	// run (a kill drawn past the run's end does not).
	killed, landed atomic.Int64
	// cached counts the cases that checked the stage cache.
	cached atomic.Int64
}

// run runs c in a directory of its own, killed as k says when k is not
// nil, and fails rt with the case on a broken invariant.
func (l *lab) run(rt *rapid.T, c *Case, k *Kill) Result {
	how := ""
	return l.within(rt, c, &how, func(r Runner, dir string) Result {
		if k == nil {
			return r.Run(context.Background(), c, dir)
		}
		kr := r.RunKilled(context.Background(), c, dir, *k)
		l.killed.Add(1)
		l.landed.Add(int64(kr.Killed))
		how = fmt.Sprintf("\n%s; %d kills landed:\n%s", k, kr.Killed, kr.Log)
		return kr.Result
	})
}

// runCached runs c, then backfills it onto the version where the stage at
// index change has other settings (RunCached).
func (l *lab) runCached(rt *rapid.T, c *Case, change int) {
	how := fmt.Sprintf("\nthen backfilled onto the next version, which changes %s's settings", c.Stages[change].Name)
	l.cached.Add(1)
	l.within(rt, c, &how, func(r Runner, dir string) Result {
		return r.RunCached(context.Background(), c, change, dir)
	})
}

// within runs c with do in a directory of its own and fails rt with the
// case, and how it ran, on a broken invariant.
func (l *lab) within(rt *rapid.T, c *Case, how *string, do func(r Runner, dir string) Result) Result {
	id := fmt.Sprintf("case%d", l.seq.Add(1))
	dir, err := os.MkdirTemp("", "docpipe-contract-*")
	if err != nil {
		rt.Fatal(err)
	}
	if os.Getenv("DOCPIPE_CONTRACT_KEEP") == "" {
		defer os.RemoveAll(dir)
	}
	l.service.Register(id, NewPlan(c, filepath.Join(dir, "state")))
	defer l.service.Forget(id)
	r := l.runner
	r.Endpoints = Endpoints{Command: []string{l.self}, CommandEnv: []string{FakeStageEnv}, HTTP: l.url + "/" + id}
	res := do(r, dir)
	var b strings.Builder
	for _, v := range res.Violations {
		if l.only == nil || l.only[v.Invariant] {
			fmt.Fprintf(&b, "  %s\n", v)
		}
	}
	if b.Len() > 0 {
		rt.Fatalf("the contract breaks:\n%s\ncase:\n%s%s\ndocpipe run (in %s):\n%s", b.String(), c.String(), *how, dir, res.Output)
	}
	return res
}

// contractLanes is how many rapid checks run side by side.
const contractLanes = 6

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
