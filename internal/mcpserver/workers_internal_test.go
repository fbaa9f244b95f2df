package mcpserver

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The workers run every job handed to them, never more than workersMax
// at once and on no more than workersMax goroutines, reuse an idle one,
// and end when stopped.
func TestWorkers_RunEveryJobOnFewGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	w := &workers{jobs: make(chan func())}
	sem := make(chan struct{}, workersMax)
	var wg sync.WaitGroup
	var ran, running, most atomic.Int64
	for i := 0; i < 500; i++ {
		sem <- struct{}{}
		wg.Add(1)
		w.do(func() {
			defer func() { <-sem; wg.Done() }()
			n := running.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			if i%50 == 0 {
				time.Sleep(time.Millisecond) // a slow call: the others go on
			}
			running.Add(-1)
			ran.Add(1)
		})
	}
	wg.Wait()
	if ran.Load() != 500 {
		t.Fatalf("%d of 500 jobs ran", ran.Load())
	}
	if most.Load() > workersMax || w.n > workersMax || w.n < 1 {
		t.Fatalf("at most %d jobs at once on %d workers, want at most %d", most.Load(), w.n, workersMax)
	}
	// One call at a time, as a client that waits for each answer sends
	// them: the worker that ran the last one runs the next.
	w2 := &workers{jobs: make(chan func())}
	for i := 0; i < 100; i++ {
		done := make(chan struct{})
		w2.do(func() { close(done) })
		<-done
		time.Sleep(20 * time.Microsecond) // the worker is back at its channel
	}
	if w2.n > 2 {
		t.Fatalf("100 calls one after another started %d workers", w2.n)
	}
	w.stop()
	w2.stop()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines after stop, %d before", runtime.NumGoroutine(), before)
		}
		time.Sleep(time.Millisecond)
	}
}
