package testrun

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/proctest"
)

func TestCapture_KeepsHeadAndTail(t *testing.T) {
	c := NewCapture(10)
	for i := 0; i < 100; i++ {
		fmt.Fprintf(c, "%d", i%10)
	}
	s := c.String()
	if !c.Cut() || c.Total() != 100 {
		t.Fatalf("cut %v total %d", c.Cut(), c.Total())
	}
	if !strings.HasPrefix(s, "01234") || !strings.HasSuffix(s, "56789") || !strings.Contains(s, "[90 bytes cut]") {
		t.Fatalf("capture %q", s)
	}
	small := NewCapture(100)
	small.Write([]byte("hello"))
	if small.Cut() || small.String() != "hello" {
		t.Fatalf("small capture %q cut %v", small.String(), small.Cut())
	}
	// One write larger than the tail, then small ones: the tail stays the
	// last bytes in order.
	big := NewCapture(8)
	big.Write([]byte("abcdefghijklmnop"))
	big.Write([]byte("XY"))
	if s := big.String(); !strings.HasPrefix(s, "abcd") || !strings.HasSuffix(s, "opXY") {
		t.Fatalf("capture %q", s)
	}
}

// Every byte through Capture matches a plain buffer's head and tail.
func FuzzCapture(f *testing.F) {
	f.Add(7, []byte("hello world, this is a longer text"), 3)
	f.Fuzz(func(t *testing.T, capn int, data []byte, chunk int) {
		if capn < 2 || capn > 1<<12 || chunk <= 0 || chunk > 64 {
			return
		}
		c := NewCapture(capn)
		for i := 0; i < len(data); i += chunk {
			c.Write(data[i:min(i+chunk, len(data))])
		}
		half := capn / 2
		s := c.String()
		if len(data) <= 2*half {
			if s != string(data) {
				t.Fatalf("uncut capture %q, want %q", s, data)
			}
			return
		}
		wantS := string(data[:half]) + fmt.Sprintf("\n… [%d bytes cut] …\n", len(data)-2*half) + string(data[len(data)-half:])
		if s != wantS {
			t.Fatalf("capture %q, want %q", s, wantS)
		}
	})
}

// The runner's whole process group dies at the deadline, grandchildren
// included, and the run returns promptly.
func TestRun_TimeoutKillsTheProcessGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "grandchild.pid")
	script := `sleep 300 & echo $! > ` + pidFile + `; echo '{"Action":"run","Package":"p","Test":"TestHang"}'; wait`
	start := time.Now()
	res, err := Run(context.Background(), Spec{
		Argv: []string{"sh", "-c", script}, Dir: dir, Format: GoJSON, Timeout: 3 * time.Second,
		Declared: []string{"p::TestHang", "p::TestLater"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Fatalf("the run took %s", el)
	}
	if !res.TimedOut {
		t.Fatal("not reported as timed out")
	}
	want(t, res.Report, map[string]Outcome{"p::TestHang": Timeout, "p::TestLater": Timeout})
	assertDead(t, pidFile)
}

// Cancelling ctx kills the group too, and Run says it was cancelled.
func TestRun_CancelKillsTheProcessGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "grandchild.pid")
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for i := 0; i < 100; i++ {
			if b, err := os.ReadFile(pidFile); err == nil && bytes.HasSuffix(b, []byte("\n")) {
				break // the shell has written the whole pid
			}
			time.Sleep(50 * time.Millisecond)
		}
		cancel()
	}()
	start := time.Now()
	_, err := Run(ctx, Spec{Argv: []string{"sh", "-c", `sleep 300 & echo $! > ` + pidFile + `; wait`}, Dir: dir, Format: GoJSON})
	if err == nil || !apperr.Is(err, Canceled) {
		t.Fatalf("error %v, want CANCELED", err)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Fatalf("the run took %s", el)
	}
	assertDead(t, pidFile)
}

// A grandchild left behind by a runner that exits normally is killed too.
func TestRun_NoGrandchildOutlivesTheRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "grandchild.pid")
	// The grandchild's output is not the pipe's: Wait need not wait for it.
	script := `sleep 300 >/dev/null 2>&1 & echo $! > ` + pidFile + `; echo '{"Action":"pass","Package":"p"}'`
	if _, err := Run(context.Background(), Spec{Argv: []string{"sh", "-c", script}, Dir: dir, Format: GoJSON}); err != nil {
		t.Fatal(err)
	}
	assertDead(t, pidFile)
}

func assertDead(t *testing.T, pidFile string) {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("no grandchild pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if !proctest.Alive(pid) { // a zombie not yet reaped by init counts as ended
			return
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("grandchild %d outlived the run", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The capture is bounded, but the report streams past it whole: 20k
// events through a 4 KiB capture still classify every test.
func TestRun_OutputCapBoundsCaptureNotTheReport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	stream := syntheticGoStream(5000, 2)
	if err := os.WriteFile(filepath.Join(dir, "out.jsonl"), stream, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Spec{Argv: []string{"cat", "out.jsonl"}, Dir: dir, Format: GoJSON, OutputCap: 4096})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OutputCut || len(res.Output) > 4096+64 || res.OutputBytes != int64(len(stream)) {
		t.Fatalf("cut %v, kept %d of %d bytes", res.OutputCut, len(res.Output), res.OutputBytes)
	}
	if !strings.Contains(res.Output, "bytes cut]") {
		t.Fatal("the capture does not say it was cut")
	}
	if n := len(res.Report.Tests); n != 5000+52 {
		t.Fatalf("%d tests classified, want 5000 and 52 subtests", n)
	}
}

func TestRun_BadSpec(t *testing.T) {
	if _, err := Run(context.Background(), Spec{Format: GoJSON}); !apperr.Is(err, apperr.Schema) {
		t.Errorf("empty argv: %v", err)
	}
	if _, err := Run(context.Background(), Spec{Argv: []string{"/nonexistent/runner"}, Format: GoJSON}); !apperr.Is(err, RunnerFailed) {
		t.Errorf("missing runner: %v", err)
	}
	res, err := Run(context.Background(), Spec{Argv: []string{"true"}, Format: JUnitXML})
	if !apperr.Is(err, Unverifiable) || res.Report.Verdict != VerdictUnverifiable {
		t.Errorf("junit without dialect: %v", err)
	}
	// A runner that writes no report is UNVERIFIABLE, not a pass.
	res, err = Run(context.Background(), Spec{Argv: []string{"true"}, Dir: t.TempDir(), Format: JUnitXML, Dialect: DialectPytest, ReportFile: "r.xml"})
	if !apperr.Is(err, Unverifiable) || res.Report.Verdict != VerdictUnverifiable {
		t.Errorf("no report file: %v", err)
	}
}

func TestGoSelector(t *testing.T) {
	for in, out := range map[string]string{
		"TestX":             "^TestX$",
		"TestX/sub_case":    "^TestX$/^sub_case$",
		"TestX/a.b[1]":      `^TestX$/^a\.b\[1\]$`,
		"TestMain(fake)+go": `^TestMain\(fake\)\+go$`,
	} {
		if got := GoSelector(in); got != out {
			t.Errorf("GoSelector(%q) = %q, want %q", in, got, out)
		}
	}
	argv := GoIsolate("-timeout=30s")("example.com/p::TestX/sub")
	if strings.Join(argv, " ") != "go test -json -count=1 -timeout=30s -run ^TestX$/^sub$ example.com/p" {
		t.Errorf("GoIsolate: %q", argv)
	}
	if GoIsolate()("TestX") != nil {
		t.Error("GoIsolate of a bare name")
	}
}

// A run leaves nothing in the temporary directory: go's build directory
// (GOTMPDIR) and the runner's own files go under the run's directory,
// removed when it ends — also when the run is killed at its deadline — and
// one a killed gate left behind is removed by the next run.
func TestRun_LeavesNoTemporaryFiles(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not installed")
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	stale := filepath.Join(tmp, "ideate-testrun-999999999-x")
	if err := os.MkdirAll(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"go.mod":           "module example.com/lt\n\ngo 1.21\n",
		"lt/lt_test.go":    "package lt\n\nimport (\n\t\"os\"\n\t\"testing\"\n\t\"time\"\n)\n\nfunc TestSlow(t *testing.T) {\n\tf, _ := os.CreateTemp(\"\", \"mine-\")\n\tf.Close()\n\ttime.Sleep(time.Minute)\n}\n",
		"lt/other_test.go": "package lt\n\nimport \"testing\"\n\nfunc TestFast(t *testing.T) {}\n",
	})
	for _, timeout := range []time.Duration{2 * time.Minute, 20 * time.Second} {
		run := "^TestFast$"
		if timeout < time.Minute {
			run = "^TestSlow$"
		}
		res, err := Run(context.Background(), Spec{
			Argv:     []string{"go", "test", "-json", "-count=1", "-run", run, "./lt"},
			Dir:      dir,
			Env:      []string{"GOTOOLCHAIN=local", "GOFLAGS="},
			Format:   GoJSON,
			Declared: []string{"example.com/lt/lt::" + run[1:len(run)-1]},
			Timeout:  timeout,
		})
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if timeout < time.Minute && !res.TimedOut {
			t.Fatalf("the slow run was not killed: %s", res.Output)
		}
		left, _ := os.ReadDir(tmp)
		if len(left) != 0 {
			var names []string
			for _, e := range left {
				names = append(names, e.Name())
			}
			t.Fatalf("after a run (timeout %s) the temporary directory holds %v", timeout, names)
		}
	}
}

// A gate killed while its run goes on (SIGKILL, nothing of it runs again)
// leaves its run's directory behind only until the next run: the runner's
// whole group died with it, and the next run removes the directory of a
// process that is gone. A run cancelled through its ctx removes its own.
func TestRun_KilledOrCancelledLeavesNoTemporaryFiles(t *testing.T) {
	if os.Getenv("IDEATE_TESTRUN_CHILD") == "1" {
		// The child: a run whose runner makes a temporary file and waits.
		_, _ = Run(context.Background(), Spec{Argv: []string{"sh", "-c", "mktemp >/dev/null; sleep 120"}, Format: GoJSON, Declared: []string{"x::TestX"}})
		return
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	child := exec.Command(os.Args[0], "-test.run=^TestRun_KilledOrCancelledLeavesNoTemporaryFiles$")
	child.Env = append(os.Environ(), "IDEATE_TESTRUN_CHILD=1")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	prefix := filepath.Join(tmp, fmt.Sprintf("ideate-testrun-%d-", child.Process.Pid))
	deadline := time.Now().Add(time.Minute)
	for {
		m, _ := filepath.Glob(prefix + "*/tmp.*")
		if len(m) > 0 {
			break
		}
		if time.Now().After(deadline) {
			child.Process.Kill()
			t.Fatal("the child's run never made its temporary file")
		}
		time.Sleep(50 * time.Millisecond)
	}
	child.Process.Kill()
	child.Wait()
	// The next run, cancelled after a moment.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := Run(ctx, Spec{Argv: []string{"sh", "-c", "mktemp >/dev/null; sleep 120"}, Format: GoJSON, Declared: []string{"x::TestX"}}); err == nil {
		t.Fatal("a cancelled run returned no error")
	}
	deadline = time.Now().Add(10 * time.Second)
	for {
		left, _ := os.ReadDir(tmp)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			var names []string
			for _, e := range left {
				names = append(names, e.Name())
			}
			t.Fatalf("after a killed run and a cancelled one the temporary directory holds %v", names)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
