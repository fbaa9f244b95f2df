package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/gates"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// sleepyTest is a declared Go test that writes its pid and process group
// to $IDEATE_SLEEP_PIDFILE, then sleeps for 30 s: a run that takes as
// long as a real suite, whose processes the tests can look for.
const sleepyTest = `package strutil

import (
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"
)

func TestReverse(t *testing.T) {
	if f := os.Getenv("IDEATE_SLEEP_PIDFILE"); f != "" {
		pg, _ := syscall.Getpgid(0)
		os.WriteFile(f+".tmp", []byte(strconv.Itoa(os.Getpid())+" "+strconv.Itoa(pg)), 0o644)
		os.Rename(f+".tmp", f)
	}
	time.Sleep(30 * time.Second)
}
`

// sleepyProject is a Go project whose task S1-01/T1 declares sleepyTest,
// started; pidfile is where the running test writes its pid.
func sleepyProject(t *testing.T) (dir, pidfile string) {
	t.Helper()
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE").Output()
	if err != nil {
		t.Skip("go is not installed")
	}
	goEnv := strings.Fields(string(out))
	dir = goPlanRepo(t, goRunner)
	t.Setenv("GOCACHE", goEnv[0]) // NewRepo's empty HOME would make go vet build from nothing
	t.Setenv("GOMODCACHE", goEnv[1])
	t.Setenv("GOTOOLCHAIN", "local")
	os.WriteFile(filepath.Join(dir, "strutil", "reverse.go"), []byte("package strutil\n\nfunc Reverse(s string) string { return s }\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "strutil", "reverse_test.go"), []byte(sleepyTest), 0o644)
	gt.Git(t, dir, "add", "-A")
	gt.Git(t, dir, "commit", "-q", "-m", "base")
	mustOK(t, bin(t, dir, "", "task", "start", "S1-01/T1", "--role", "red-worker", "--test", "strutil/reverse_test.go::TestReverse", "--scope", "strutil/**"))
	return dir, filepath.Join(t.TempDir(), "pid")
}

// sleepWritable lets the sleeping test, which a gate's confined run
// starts, write its pid file beside the test's files.
func sleepWritable(pidfile string) string {
	return gates.WritableEnv + "=" + filepath.Dir(pidfile)
}

// waitPid waits for the sleeping test to write its pid and group.
func waitPid(t *testing.T, pidfile string) (pid, pgid int) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second) // the first run compiles
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(pidfile); err == nil {
			f := strings.Fields(string(b))
			pid, _ = strconv.Atoi(f[0])
			pgid, _ = strconv.Atoi(f[1])
			os.Remove(pidfile)
			return pid, pgid
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the test run never started its test")
	return 0, 0
}

// groupGone reports whether no process of the group pgid is left.
func groupGone(pgid int) bool {
	return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
}

// within returns how long the request line took to be answered (id).
func (r *rpc) timed(id int, line string) time.Duration {
	r.t.Helper()
	start := time.Now()
	r.send(line)
	r.wait(id)
	return time.Since(start)
}

// has reports whether id was answered.
func (r *rpc) has(id int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.got[id]
	return ok
}

// lines counts the stdout lines containing s.
func (r *rpc) lines(s string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, l := range r.out {
		if strings.Contains(l, s) {
			n++
		}
	}
	return n
}

// While a test_run of a 30 s test runs, the server answers a ping,
// tools/list and record_read each within a second and reports progress;
// a cancel at 5 s kills the run's whole process group (nothing of it is
// alive 2 s later), sends no answer for it and stores nothing; and
// stdin closed during a run leaves no process of it behind and the
// server exits with status 0. The run is cancelled long before its 30 s,
// so the test takes about 10 s after the first compile.
func TestMCP_LongCallBesideTheRest(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test against a sleeping test")
	}
	dir, pidfile := sleepyProject(t)
	r := startMCP(t, dir, "IDEATE_SLEEP_PIDFILE="+pidfile, sleepWritable(pidfile))
	before := refsState(t, dir)
	start := time.Now()
	r.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_run","arguments":{"task":"S1-01/T1","timeout_s":120},"_meta":{"progressToken":"run-1"}}}`)
	_, pgid := waitPid(t, pidfile)
	for id, line := range map[int]string{
		2: `{"jsonrpc":"2.0","id":2,"method":"ping"}`,
		3: `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
		4: `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"record_read","arguments":{}}}`,
	} {
		if d := r.timed(id, line); d > time.Second {
			t.Errorf("request %d answered after %v while test_run ran; want under 1 s", id, d)
		}
	}
	for deadline := time.Now().Add(3 * time.Second); r.lines(`"notifications/progress"`) == 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if r.lines(`"progressToken":"run-1"`) == 0 {
		t.Errorf("no progress notification for the run")
	}
	if r.has(1) {
		t.Fatalf("test_run answered before its test ended: %s", r.got[1])
	}
	time.Sleep(time.Until(start.Add(5 * time.Second)))
	r.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"test"}}`)
	time.Sleep(2 * time.Second)
	if !groupGone(pgid) {
		t.Errorf("2 s after the cancel, processes of the run's group %d are alive", pgid)
	}
	if d := r.timed(5, `{"jsonrpc":"2.0","id":5,"method":"ping"}`); d > time.Second {
		t.Errorf("ping after the cancel took %v", d)
	}
	if r.has(1) {
		t.Errorf("the cancelled test_run was answered: %s", r.got[1])
	}
	if after := refsState(t, dir); after != before {
		t.Errorf("a cancelled run stored something:\nbefore %s\nafter  %s", before, after)
	}

	// stdin closed during a run.
	r2 := startMCP(t, dir, "IDEATE_SLEEP_PIDFILE="+pidfile, sleepWritable(pidfile))
	r2.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_run","arguments":{"task":"S1-01/T1"}}}`)
	_, pgid = waitPid(t, pidfile)
	r2.in.Close()
	exited := make(chan error, 1)
	go func() { exited <- r2.cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("the server exited with %v after stdin closed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server is still running 10 s after stdin closed")
	}
	// A killed process is gone once its parent reaps it: the test
	// binary's parent was go test, killed with it, so init reaps it.
	for deadline := time.Now().Add(2 * time.Second); !groupGone(pgid) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if !groupGone(pgid) {
		out, _ := exec.Command("ps", "-o", "pid,pgid,stat,args", "-g", strconv.Itoa(pgid)).CombinedOutput()
		t.Errorf("stdin closed: processes of the run's group %d outlive the server by 2 s:\n%s", pgid, out)
	}
}

// A string argument over its limit is refused with a SCHEMA error that
// names it and the limit, and writes nothing; a 70 MiB request line gets
// a JSON-RPC error; the same server, and a new one, go on answering.
func TestMCP_OversizedInputs(t *testing.T) {
	dir := gt.NewRepo(t)
	r := startMCP(t, dir)
	before := refsState(t, dir)
	big := strings.Repeat("x", 5<<20)
	res := r.call(1, "record_append", map[string]any{"kind": "finding", "claim": big, "content": "c"})
	if !res.IsError || res.Out["code"] != "SCHEMA" || !strings.Contains(res.Out["message"].(string), "/claim") || !strings.Contains(res.Out["message"].(string), "65536") {
		t.Fatalf("a 5 MiB claim: %+v", res.Out)
	}
	if after := refsState(t, dir); after != before {
		t.Fatalf("a refused argument wrote:\n%s\n%s", before, after)
	}
	// 70 MiB on one line: an error naming no id, and the server goes on.
	line := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"record_append","arguments":{"kind":"k","claim":"c","content":"` + strings.Repeat("y", 70<<20) + `"}}}`
	r.send(line)
	for deadline := time.Now().Add(20 * time.Second); r.lines(`"code":-32600`) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("no error for a 70 MiB line")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if ok := r.call(3, "record_append", map[string]any{"kind": "finding", "claim": "after", "content": "c"}); ok.IsError {
		t.Fatalf("after the oversized calls: %+v", ok.Out)
	}
	if rd := r.call(4, "record_read", map[string]any{}); rd.IsError || len(rd.Out["records"].([]any)) != 1 {
		t.Fatalf("record_read after the oversized calls: %+v", rd.Out)
	}
	r2 := startMCP(t, dir)
	if rd := r2.call(1, "record_read", map[string]any{}); rd.IsError || len(rd.Out["records"].([]any)) != 1 {
		t.Fatalf("a new session's record_read: %+v", rd.Out)
	}
}
