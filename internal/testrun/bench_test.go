package testrun

import (
	"bytes"
	"fmt"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// syntheticGoStream is a `go test -json` stream of n tests over pkgs
// packages, shaped like test2json's: run, two output lines, pass or fail
// (every 50th fails with a message, every 97th has a subtest).
func syntheticGoStream(n, pkgs int) []byte {
	var b bytes.Buffer
	per := (n + pkgs - 1) / pkgs
	for p := 0; p < pkgs; p++ {
		pkg := fmt.Sprintf("example.com/mod/pkg%02d", p)
		fmt.Fprintf(&b, `{"Time":"2026-11-30T15:14:05.065383313Z","Action":"start","Package":%q}`+"\n", pkg)
		for i := p * per; i < min((p+1)*per, n); i++ {
			name := fmt.Sprintf("TestCase%05d", i)
			ev := func(action, test, output string) {
				fmt.Fprintf(&b, `{"Time":"2026-11-30T15:14:05.075721132Z","Action":%q,"Package":%q,"Test":%q`, action, pkg, test)
				if output != "" {
					fmt.Fprintf(&b, `,"Output":%q`, output)
				}
				if action == "pass" || action == "fail" {
					b.WriteString(`,"Elapsed":0.01`)
				}
				b.WriteString("}\n")
			}
			ev("run", name, "")
			ev("output", name, "=== RUN   "+name+"\n")
			if i%97 == 0 {
				sub := name + "/case_one"
				ev("run", sub, "")
				ev("output", sub, "=== RUN   "+sub+"\n")
				ev("output", sub, "--- PASS: "+sub+" (0.00s)\n")
				ev("pass", sub, "")
			}
			if i%50 == 49 {
				ev("output", name, "    x_test.go:12: got 3, want 4\n")
				ev("output", name, "--- FAIL: "+name+" (0.01s)\n")
				ev("fail", name, "")
			} else {
				ev("output", name, "--- PASS: "+name+" (0.01s)\n")
				ev("pass", name, "")
			}
		}
		fmt.Fprintf(&b, `{"Time":"2026-11-30T15:14:05.077904581Z","Action":"output","Package":%q,"Output":"FAIL\t%s\t0.5s\n"}`+"\n", pkg, pkg)
		fmt.Fprintf(&b, `{"Time":"2026-11-30T15:14:05.078346649Z","Action":"fail","Package":%q,"Elapsed":0.5}`+"\n", pkg)
	}
	return b.Bytes()
}

// BenchmarkClassifyGoJSON10k classifies a 10k-test go test -json stream
// (target: ≤ 100 ms, ≤ 50 MiB). It reports the median time of its
// iterations, the process CPU time per iteration (all goroutines, GC
// included: robust to a loaded machine, where wall time is not), and the
// peak heap sampled every 200 µs against the heap before the loop (which
// holds the 5.4 MiB stream).
func BenchmarkClassifyGoJSON10k(b *testing.B) {
	stream := syntheticGoStream(10000, 20)
	declared := make([]string, 0, 200)
	for i := 0; i < 10000; i += 50 {
		declared = append(declared, fmt.Sprintf("example.com/mod/pkg%02d::TestCase%05d", i/500, i))
	}
	runtime.GC()
	base := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(base)
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Microsecond):
			}
		}
	}()
	times := make([]time.Duration, 0, b.N)
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		rep, err := Classify(bytes.NewReader(stream), Options{Format: GoJSON, Declared: declared})
		times = append(times, time.Since(t0))
		if err != nil || len(rep.Tests) != 10000+104 {
			b.Fatalf("classify: %v, %d tests", err, len(rep.Tests))
		}
	}
	b.StopTimer()
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	close(stop)
	<-done
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "median-ms")
	cpu := time.Duration(ru1.Utime.Nano()-ru0.Utime.Nano()+ru1.Stime.Nano()-ru0.Stime.Nano()) / time.Duration(b.N)
	b.ReportMetric(float64(cpu.Microseconds())/1000, "cpu-ms/op")
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(base[0].Value.Uint64())/(1<<20), "base-heap-MiB")
	b.ReportMetric(float64(len(stream))/(1<<20), "stream-MiB")
}
