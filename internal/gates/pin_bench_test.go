package gates_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/gates"
	"github.com/ideate/git-ideate/internal/plan"
)

const queue5Impl = queueImpl + "\n// Pop removes the first item.\nfunc (q *Queue) Pop() int {\n\tv := q.Peek()\n\tif len(q.items) > 0 {\n\t\tq.items = q.items[1:]\n\t}\n\treturn v\n}\n\n// Clear empties the queue and says how many items went.\nfunc (q *Queue) Clear() int {\n\tn := len(q.items)\n\tq.items = nil\n\treturn n\n}\n"

const queue5Shim = queueShim + "\nfunc (q *Queue) Pop() int { return -1 }\n\nfunc (q *Queue) Clear() int { return -1 }\n"

const queue5Test = "package strutil\n\nimport \"testing\"\n\nfunc TestQueue_All(t *testing.T) {\n\tvar q Queue\n\tq.Push(3)\n\tq.Push(4)\n\tif q.Len() != 2 || q.Peek() != 3 {\n\t\tt.Fatal(\"after two pushes\")\n\t}\n\tif q.Pop() != 3 || q.Len() != 1 {\n\t\tt.Fatal(\"pop\")\n\t}\n\tif q.Clear() != 1 || q.Len() != 0 {\n\t\tt.Fatal(\"clear\")\n\t}\n}\n"

// BenchmarkGreenGatePinning times the GREEN gate of a Go task that
// declares five symbols (its pinning check: five mutants, the schema's
// test binary built once and run once per mutant) against the bare test run (the
// gate's own run of the task's regression set, RunTask), interleaved in
// one run, and reports the medians and their ratio, with the mutants run
// one at a time and one per CPU. Run with -benchtime=11x or so.
func BenchmarkGreenGatePinning(b *testing.B) {
	for _, par := range []int{1, 0} {
		name := "parallel=cpus"
		if par == 1 {
			name = "parallel=1"
		}
		b.Run(name, func(b *testing.B) {
			defer gates.SetPinParallel(par)()
			f := newQueueFixture(b, false)
			tasks := strings.Replace(queueTasks(false), "`strutil.Queue.Len`", "`strutil.Queue.Len`, `strutil.Queue.Pop`, `strutil.Queue.Clear`", 1)
			writeFiles(b, f.dir, map[string]string{"docs/agents/sprint1/s1-01-rune-helpers/tasks.md": strings.SplitN(tasks, "\n@@S1-02@@", 2)[0]})
			const id = "strutil/queue_test.go::TestQueue_All"
			wt := f.start(b, "S1-01/T1", id)
			commit(b, wt, "red", map[string]string{"strutil/queue.go": queue5Shim, "strutil/queue_test.go": queue5Test})
			if v := f.judge(b, "red", "S1-01/T1"); v.Result != gates.PASS {
				b.Fatalf("red: %s", v)
			}
			commit(b, wt, "green", map[string]string{"strutil/queue.go": queue5Impl})
			if v := f.judge(b, "green", "S1-01/T1"); v.Result != gates.PASS || len(withoutCost(v.Reasons)) != 0 {
				b.Fatalf("green: %s", v)
			}
			sp, err := f.planLoader()(ctx)
			if err != nil {
				b.Fatal(err)
			}
			var gate, run []time.Duration
			cost := ""
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				v, err := gates.Judge(ctx, f.reg, f.log, "green", gates.Input{Task: "S1-01/T1"})
				if err != nil || v.Result != gates.PASS {
					b.Fatalf("green: %v %v", v, err)
				}
				if r := reasonOf(v, gates.ClassPinCost); r != nil {
					cost = r.Detail
				}
				t1 := time.Now()
				if res, err := gates.RunTask(ctx, sp.Standards, wt, []string{id}, gates.RunOptions{Wide: true}); err != nil || res.Report.Verdict != "PASS" {
					b.Fatalf("run: %v %v", res, err)
				}
				gate, run = append(gate, t1.Sub(t0)), append(run, time.Since(t1))
			}
			b.StopTimer()
			mg, mr := median(gate), median(run)
			b.ReportMetric(float64(mg.Microseconds())/1000, "gate-ms")
			b.ReportMetric(float64(mr.Microseconds())/1000, "run-ms")
			b.ReportMetric(float64(mg)/float64(mr), "gate/run")
			b.Logf("%s n=%d median gate %v, median bare run %v, ratio %s; the last verdict's %s", name, b.N, mg, mr, fmt.Sprintf("%.2f", float64(mg)/float64(mr)), cost)
			_ = plan.DefaultRoot
		})
	}
}
