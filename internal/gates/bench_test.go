package gates_test

import (
	"os"
	"slices"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/gates"
	"github.com/ideate/git-ideate/internal/plan"
)

// BenchmarkGreenGateOverhead times a GREEN gate (Judge: the run, the diff
// and scope checks, the comparisons with the RED commit and the base run,
// the recorded run, the verdict stored in the execution log with its note)
// whose runner is a trivial shell script, interleaved with the same test
// run alone (RunTask), and reports both medians and their difference: what
// the gate adds beyond running the tests. Run with -benchtime=31x or so.
func BenchmarkGreenGateOverhead(b *testing.B) {
	f := newFakeFixtureTB(b)
	wt := f.start(b, "S1-01/T1", declared)
	commit(b, wt, "red", map[string]string{"strutil/reverse.go": reverseShim, "strutil/reverse_test.go": reverseTest})
	if v := f.judge(b, "red", "S1-01/T1"); v.Result != gates.PASS {
		b.Fatalf("red: %s", v)
	}
	commit(b, wt, "green", map[string]string{"strutil/reverse.go": reverseImpl})
	if v := f.judge(b, "green", "S1-01/T1"); v.Result != gates.PASS {
		b.Fatalf("green: %s", v)
	}
	sp, err := plan.Load(ctx, os.DirFS(f.dir), plan.Options{Root: plan.DefaultRoot})
	if err != nil {
		b.Fatal(err)
	}
	var gate, run []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if v, err := gates.Judge(ctx, f.reg, f.log, "green", gates.Input{Task: "S1-01/T1"}); err != nil || v.Result != gates.PASS {
			b.Fatalf("green: %v %v", v, err)
		}
		t1 := time.Now()
		if res, err := gates.RunTask(ctx, sp.Standards, wt, []string{declared}, gates.RunOptions{Wide: true}); err != nil || res.Report.Verdict != "PASS" {
			b.Fatalf("run: %v %v", res, err)
		}
		gate, run = append(gate, t1.Sub(t0)), append(run, time.Since(t1))
	}
	b.StopTimer()
	mg, mr := median(gate), median(run)
	b.ReportMetric(float64(mg.Microseconds())/1000, "gate-ms")
	b.ReportMetric(float64(mr.Microseconds())/1000, "run-ms")
	b.ReportMetric(float64((mg-mr).Microseconds())/1000, "overhead-ms")
	b.Logf("n=%d median gate %v, median run alone %v, overhead %v", b.N, mg, mr, mg-mr)
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
