package childproc_test

import (
	"bufio"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/docpipe/docpipe/internal/childproc"
)

// TestMain lets the test binary play docpipe: with CHILDPROC_PARENT set it
// starts a long sleep tied to itself, prints the sleep's pid and waits to
// be killed.
func TestMain(m *testing.M) {
	if os.Getenv("CHILDPROC_PARENT") == "1" {
		cmd := exec.Command("sleep", "60")
		childproc.Tie(cmd)
		if err := cmd.Start(); err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString(strconv.Itoa(cmd.Process.Pid) + "\n")
		_ = cmd.Wait()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// A program docpipe started dies when docpipe is SIGKILLed.
func TestChildDiesWithParent(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the parent-death signal is Linux's")
	}
	if _, err := exec.LookPath("sleep"); err != nil {
		t.Skip("no sleep program")
	}
	parent := exec.Command(os.Args[0], "-test.run=^$")
	parent.Env = append(os.Environ(), "CHILDPROC_PARENT=1")
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the child's pid: %v", err)
	}
	child, err := strconv.Atoi(line[:len(line)-1])
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for alive(child) {
		if time.Now().After(deadline) {
			syscall.Kill(child, syscall.SIGKILL)
			t.Fatalf("child %d still runs 10 s after its parent was killed", child)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive reports whether pid runs: a zombie (dead, not yet reaped by init)
// counts as gone.
func alive(pid int) bool {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name: "pid (sleep) S ...".
	for i := len(raw) - 1; i > 0; i-- {
		if raw[i] == ')' && i+2 < len(raw) {
			return raw[i+2] != 'Z'
		}
	}
	return true
}
