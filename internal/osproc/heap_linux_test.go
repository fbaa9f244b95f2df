package osproc

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// anonHuge is the process's AnonHugePages in kB (smaps_rollup).
func anonHuge(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/smaps_rollup")
	if err != nil {
		t.Skipf("no smaps_rollup: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "AnonHugePages:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	t.Skip("smaps_rollup has no AnonHugePages line")
	return 0
}

// In a process of its own (as a CLI call would), HugePageHeap turns the
// 2 MiB of heap it starts in into a huge page where a fault is slow, and
// the heap's content survives the copy.
func TestHugePageHeap_CollapsesTheStartOfTheHeap(t *testing.T) {
	if os.Getenv("OSPROC_HEAP_CHILD") == "1" {
		data := bytes.Repeat([]byte("ideate"), 100_000)
		m := map[int]string{}
		for i := range 1000 {
			m[i] = strconv.Itoa(i)
		}
		slow := faultIsSlow()
		before := anonHuge(t)
		HugePageHeap()
		after := anonHuge(t)
		runtime.GC()
		ok := bytes.Equal(data, bytes.Repeat([]byte("ideate"), 100_000))
		for i := range 1000 {
			ok = ok && m[i] == strconv.Itoa(i)
		}
		fmt.Printf("slow=%v before=%d after=%d intact=%v\n", slow, before, after, ok)
		return
	}
	thp, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || bytes.Contains(thp, []byte("[never]")) {
		t.Skipf("transparent huge pages are off here (%q, %v)", thp, err)
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestHugePageHeap_CollapsesTheStartOfTheHeap$")
	cmd.Env = append(os.Environ(), "OSPROC_HEAP_CHILD=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var slow, intact bool
	var before, after int
	line := string(out[:bytes.IndexByte(out, '\n')+1])
	if _, err := fmt.Sscanf(line, "slow=%t before=%d after=%d intact=%t\n", &slow, &before, &after, &intact); err != nil {
		t.Fatalf("child said %q: %v", out, err)
	}
	if !intact {
		t.Fatal("the heap's content changed across HugePageHeap")
	}
	if !slow {
		t.Skipf("a page fault is cheap here (under %v): HugePageHeap rightly did nothing (huge pages %d → %d kB)", slowFault, before, after)
	}
	if after-before < hugeSpan>>10 {
		t.Fatalf("AnonHugePages went from %d to %d kB: the start of the heap was not collapsed into a 2 MiB page", before, after)
	}
}

// faultIsSlow says what a timing of many fresh pages says, where that
// timing is clearly above or below the threshold.
func TestFaultIsSlow_AgreesWithATimingOfManyFaults(t *testing.T) {
	const pages = 256
	p, err := syscall.Mmap(-1, 0, pages*4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for i := 0; i < pages; i++ {
		p[i*4096] = 1
	}
	per := time.Since(start) / pages
	syscall.Munmap(p)
	votes := 0
	for range 9 {
		if faultIsSlow() {
			votes++
		}
	}
	t.Logf("%v per fault over %d pages; faultIsSlow %d of 9", per, pages, votes)
	switch {
	case per > 2*slowFault && votes < 7:
		t.Fatalf("faults cost %v each, yet faultIsSlow said slow only %d times of 9", per, votes)
	case per < slowFault/2 && votes > 2:
		t.Fatalf("faults cost %v each, yet faultIsSlow said slow %d times of 9", per, votes)
	case per >= slowFault/2 && per <= 2*slowFault:
		t.Skipf("faults cost %v each, near the %v threshold: either answer is right", per, slowFault)
	}
}
