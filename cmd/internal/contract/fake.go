package contract

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Plan is what the fake stages read: the faults, and the folder where
// they count attempts and log their calls.
type Plan struct {
	Faults   []PlannedFault `json:"faults"`
	StateDir string         `json:"state_dir"`
}

// PlannedFault is one entry of a Plan.
type PlannedFault struct {
	FaultKey
	Fault
}

// NewPlan lays out the case's faults for the fake stages.
func NewPlan(c *Case, stateDir string) Plan {
	p := Plan{StateDir: stateDir}
	for k, f := range c.Faults {
		p.Faults = append(p.Faults, PlannedFault{FaultKey: k, Fault: f})
	}
	return p
}

// Call is one call of a fake stage, as it logs it.
type Call struct {
	FaultKey
	// Variant is the stage's settings' variant, which its answer echoes.
	Variant int       `json:"variant,omitempty"`
	Attempt int       `json:"attempt"`
	Fault   FaultKind `json:"fault,omitempty"` // what the call did; empty: answered
}

// request is the part of the stage contract's request the fake reads.
type request struct {
	Stage    string `json:"stage"`
	Settings struct {
		Variant int `json:"variant"`
	} `json:"settings"`
	Scope    string `json:"scope"`
	Document struct {
		FileName string `json:"file_name"`
	} `json:"document"`
	Segment *struct {
		Index int `json:"index"`
	} `json:"segment"`
}

func (r request) key() FaultKey {
	k := FaultKey{Doc: r.Document.FileName, Stage: r.Stage}
	if r.Segment != nil {
		k.Segment = r.Segment.Index
	}
	return k
}

// Answer is what a fake stage answers when it does not fail: the contract
// test expects exactly this in `show --stage`.
func Answer(k FaultKey) json.RawMessage { return AnswerVariant(k, 0) }

// AnswerVariant is the answer of a stage whose settings name variant (see
// Stage.Variant): the answer changes with the settings, as a real stage's
// would, so that the stages after it see new inputs.
func AnswerVariant(k FaultKey, variant int) json.RawMessage {
	m := map[string]any{"doc": k.Doc, "stage": k.Stage, "segment": k.Segment}
	if variant != 0 {
		m["variant"] = variant
	}
	raw, _ := json.Marshal(m)
	return raw
}

// callFor counts and logs the call a request makes (call).
func (p Plan) callFor(raw []byte) (Call, error) {
	var req request
	if err := json.Unmarshal(raw, &req); err != nil {
		return Call{}, fmt.Errorf("request: %w", err)
	}
	return p.call(req.key(), req.Settings.Variant)
}

// call counts the attempt at k, decides what it does and logs it.
func (p Plan) call(k FaultKey, variant int) (Call, error) {
	c := Call{FaultKey: k, Variant: variant}
	dir := filepath.Join(p.StateDir, "attempts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return c, err
	}
	// A new folder per attempt: Mkdir is atomic, so concurrent calls never
	// count the same attempt twice.
	for c.Attempt = 1; ; c.Attempt++ {
		err := os.Mkdir(filepath.Join(dir, fmt.Sprintf("%s_%s_%d.%d", k.Doc, k.Stage, k.Segment, c.Attempt)), 0o755)
		if err == nil {
			break
		}
		if !errors.Is(err, os.ErrExist) {
			return c, err
		}
	}
	for _, f := range p.Faults {
		if f.FaultKey == k && (!f.Kind.Transient() || c.Attempt <= f.Times) {
			c.Fault = f.Kind
		}
	}
	line, err := json.Marshal(c)
	if err != nil {
		return c, err
	}
	log, err := os.OpenFile(filepath.Join(p.StateDir, "calls.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return c, err
	}
	defer log.Close()
	_, err = log.Write(append(line, '\n'))
	return c, err
}

// ReadCalls returns every call the fake stages logged under stateDir.
func ReadCalls(stateDir string) ([]Call, error) {
	f, err := os.Open(filepath.Join(stateDir, "calls.jsonl"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var calls []Call
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var c Call
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return nil, fmt.Errorf("calls log: %v", err)
		}
		calls = append(calls, c)
	}
	return calls, sc.Err()
}

func readPlan(path string) (Plan, error) {
	var p Plan
	raw, err := os.ReadFile(path)
	if err != nil {
		return p, err
	}
	return p, json.Unmarshal(raw, &p)
}

// FakeStageEnv=1 in a test binary's environment makes it the fake command
// stage: its TestMain hands the process to RunCommand. A test puts it in
// docpipe's environment and names it in the command stages' env: list.
const FakeStageEnv = "DOCPIPE_CONTRACT_FAKE_STAGE"

// batchArg, after the plan's path, makes the fake command a batch-mode
// stage: one request a line in, one answer a line out.
const batchArg = "--batch"

// RunCommand is the fake command stage: argv holds the plan's path (and
// batchArg in batch mode); the request comes on stdin. It returns the exit
// status.
func RunCommand(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) < 1 || len(args) > 2 || len(args) == 2 && args[1] != batchArg {
		fmt.Fprintln(stderr, "fake stage: want the plan's path, and "+batchArg+" in batch mode")
		return 2
	}
	plan, err := readPlan(args[0])
	if err != nil {
		fmt.Fprintln(stderr, "fake stage:", err)
		return 2
	}
	if len(args) == 2 {
		return plan.runBatch(stdin, stdout, stderr)
	}
	raw, err := io.ReadAll(stdin)
	if err != nil {
		fmt.Fprintln(stderr, "fake stage:", err)
		return 2
	}
	c, err := plan.callFor(raw)
	if err != nil {
		fmt.Fprintln(stderr, "fake stage:", err)
		return 2
	}
	switch c.Fault {
	case FaultExit:
		fmt.Fprintln(stderr, "boom")
		return 3
	case FaultKill:
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		time.Sleep(time.Minute)
		return 1
	case FaultMalformed:
		fmt.Fprint(stdout, `{"not json`)
		return 0
	case FaultEmpty:
		return 0
	case FaultTempExit:
		fmt.Fprintln(stderr, "try again")
		return 75
	case FaultTimeout:
		sleepWhileParentLives(time.Minute)
		return 1
	}
	_, _ = stdout.Write(AnswerVariant(c.FaultKey, c.Variant))
	return 0
}

// runBatch is the fake stage in batch mode. Its faults keep to the
// segments they are planned for, so the oracle's per-segment outcomes
// hold: it answers the faultless segments first, then fails the faulted
// ones as the fault says — an error answer for exit, and for the faults
// that end the process (kill, a malformed line, no answer) by ending it
// with only those segments unanswered. A transient fault on any segment
// (exit 75, a timeout) fails the whole batch, which is retried.
func (p Plan) runBatch(stdin io.Reader, stdout, stderr io.Writer) int {
	var calls []Call
	sc := bufio.NewScanner(stdin)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		c, err := p.callFor(sc.Bytes())
		if err != nil {
			fmt.Fprintln(stderr, "fake stage:", err)
			return 2
		}
		calls = append(calls, c)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(stderr, "fake stage:", err)
		return 2
	}
	answer := func(c Call, extra map[string]any) {
		m := map[string]any{}
		_ = json.Unmarshal(AnswerVariant(c.FaultKey, c.Variant), &m)
		if extra != nil {
			m = extra
		}
		m["index"] = c.Segment
		line, _ := json.Marshal(m)
		_, _ = stdout.Write(append(line, '\n'))
	}
	var ending []FaultKind
	for _, c := range calls {
		switch c.Fault {
		case FaultTempExit:
			fmt.Fprintln(stderr, "try again")
			return 75
		case FaultTimeout:
			sleepWhileParentLives(time.Minute)
			return 1
		}
	}
	for _, c := range calls {
		switch c.Fault {
		case "":
			answer(c, nil)
		case FaultExit:
			answer(c, map[string]any{"error": "boom"})
		default:
			ending = append(ending, c.Fault)
		}
	}
	if len(ending) == 0 {
		return 0
	}
	switch ending[0] {
	case FaultKill:
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		time.Sleep(time.Minute)
		return 1
	case FaultMalformed:
		fmt.Fprintln(stdout, `{"not json`)
		return 0
	}
	return 0 // FaultEmpty: exit without answering the rest
}

// sleepWhileParentLives is a hang: the stage runner's SIGTERM ends it past
// the stage's timeout. A docpipe killed with SIGKILL sends nothing, and a
// command runs in its own process group, so the hang also ends when its
// parent is gone rather than outliving the case.
func sleepWhileParentLives(d time.Duration) {
	parent := os.Getppid()
	for end := time.Now().Add(d); time.Now().Before(end) && os.Getppid() == parent; {
		time.Sleep(50 * time.Millisecond)
	}
}

// Service is the fake HTTP stage: one server for many cases, each under
// its own path prefix (/CASE/STAGE).
type Service struct {
	mu    sync.Mutex
	plans map[string]Plan
}

// NewService returns a service without cases.
func NewService() *Service { return &Service{plans: map[string]Plan{}} }

// Register serves plan's faults under /id/.
func (s *Service) Register(id string, plan Plan) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.plans[id] = plan
}

// Forget stops serving id.
func (s *Service) Forget(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.plans, id)
}

func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	s.mu.Lock()
	plan, ok := s.plans[id]
	s.mu.Unlock()
	if !ok {
		http.Error(w, "no such case", http.StatusNotFound)
		return
	}
	var req request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, "request: "+err.Error(), http.StatusBadRequest)
		return
	}
	c, err := plan.call(req.key(), req.Settings.Variant)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch c.Fault {
	case FaultHTTP400:
		http.Error(w, `{"error": "boom"}`, http.StatusBadRequest)
	case FaultMalformed:
		_, _ = io.WriteString(w, `{"not json`)
	case FaultEmpty:
	case FaultHTTP500:
		http.Error(w, `{"error": "try again"}`, http.StatusInternalServerError)
	case FaultHTTP429:
		http.Error(w, `{"error": "slow down"}`, http.StatusTooManyRequests)
	case FaultTimeout:
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	default:
		_, _ = w.Write(AnswerVariant(c.FaultKey, c.Variant))
	}
}
