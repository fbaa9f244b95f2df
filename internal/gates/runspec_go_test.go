package gates_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/gates"
	"github.com/ideate/git-ideate/internal/plan"
	"github.com/ideate/git-ideate/internal/testrun"
)

// A gate's Go run runs the tests each time, even under a runner template
// without -count=1: go test would otherwise answer the second run from
// its result cache, which the tests' own code can write. The test calls a
// listener here each time it really runs.
func TestRunTask_GoTestResultIsNeverCached(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skip("no loopback listener:", err)
	}
	defer l.Close()
	var runs atomic.Int64
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			runs.Add(1)
			c.Close()
		}
	}()
	dir := t.TempDir()
	for name, body := range map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.26\n",
		"calc/calc_test.go": fmt.Sprintf("package calc\n\nimport (\n\t\"net\"\n\t\"testing\"\n)\n\nfunc TestOne(t *testing.T) {\n\tc, err := net.Dial(\"tcp\", %q)\n\tif err != nil {\n\t\tt.Fatal(err)\n\t}\n\tc.Close()\n}\n",
			l.Addr().String()),
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644)
	}
	st := &plan.Standards{Runners: []*plan.Runner{{Language: "go", Extensions: []string{".go"},
		Run: "go test -json {packages}", Format: string(testrun.GoJSON)}}}
	for i := 1; i <= 2; i++ {
		res, err := gates.RunTask(context.Background(), st, dir, []string{"calc/calc_test.go::TestOne"}, gates.RunOptions{Timeout: 2 * time.Minute})
		if err != nil || res.Report.Verdict != "PASS" {
			t.Fatalf("run %d: %v, verdict %v\n%s", i, err, res.Report.Verdict, res.Output)
		}
		for deadline := time.Now().Add(5 * time.Second); runs.Load() < int64(i) && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		if got := runs.Load(); got != int64(i) {
			t.Fatalf("after gate run %d the test ran %d times: a cached result stood for a run", i, got)
		}
	}
}
