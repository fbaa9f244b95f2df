package hooks

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func pendingRunOf(dir, id string) (pendingRun, bool) {
	var r pendingRun
	ok := pendingOf(dir, id, &r)
	return r, ok
}

func pendingLine(t *testing.T, id, command string) []byte {
	t.Helper()
	data, err := json.Marshal(pendingRun{ID: id, Task: "S1-01/T1", Key: "sha256:k", Command: command, Fingerprint: "sha256:f"})
	if err != nil {
		t.Fatal(err)
	}
	return append(data, '\n')
}

// The pending log: a call's line is found by its id, the newest of two;
// the append that crosses the cap moves the log aside, where the lines
// before it are still found; a half-written line does not hide the next;
// a line over the cap is refused; lines appended at once (each its own
// open file, as processes have) are all found whole.
func TestPendingLog_AppendAndFind(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "runs-pending")
	if _, ok := pendingRunOf(dir, "toolu_none"); ok {
		t.Fatal("a pending run found in a missing log")
	}
	if err := appendPending(dir, pendingLine(t, "toolu_a", "go test ./a/")); err != nil {
		t.Fatal(err)
	}
	if err := appendPending(dir, pendingLine(t, "toolu_a", "go test ./newer/")); err != nil {
		t.Fatal(err)
	}
	if r, ok := pendingRunOf(dir, "toolu_a"); !ok || r.Command != "go test ./newer/" || r.Task != "S1-01/T1" {
		t.Fatalf("toolu_a: %+v %v", r, ok)
	}
	// A command holding what a line starts with is a JSON string: escaped.
	if err := appendPending(dir, pendingLine(t, "toolu_q", `echo '{"id":"toolu_a",'`)); err != nil {
		t.Fatal(err)
	}
	if r, ok := pendingRunOf(dir, "toolu_a"); !ok || r.Command != "go test ./newer/" {
		t.Fatalf("toolu_a after a quoting command: %+v %v", r, ok)
	}

	// Past the cap: the log moves aside once, and both files are read.
	filler := strings.Repeat("x", 1000)
	n := 0
	for ; ; n++ {
		if err := appendPending(dir, pendingLine(t, fmt.Sprintf("toolu_f%d", n), filler)); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, pendingOld)); err == nil {
			break
		}
		if n > 2*PendingLogCap/1000 {
			t.Fatal("the log was never moved aside")
		}
	}
	if _, err := os.Stat(filepath.Join(dir, pendingLog)); err == nil {
		t.Fatal("the log that crossed the cap is still in place")
	}
	if err := appendPending(dir, pendingLine(t, "toolu_after", "go test ./after/")); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"toolu_a", "toolu_f0", fmt.Sprintf("toolu_f%d", n), "toolu_after"} {
		if _, ok := pendingRunOf(dir, id); !ok {
			t.Errorf("%s is not found after the move", id)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, pendingLog)); err != nil || fi.Size() > 1000 {
		t.Fatalf("the new log: %v %v", fi, err)
	}

	// A half line (a write a full disk cut short), then a whole one.
	f, err := os.OpenFile(filepath.Join(dir, pendingLog), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	half := pendingLine(t, "toolu_half", "go test ./half/")
	f.Write(half[:len(half)/2])
	f.Close()
	if err := appendPending(dir, pendingLine(t, "toolu_next", "go test ./next/")); err != nil {
		t.Fatal(err)
	}
	if r, ok := pendingRunOf(dir, "toolu_next"); !ok || r.Command != "go test ./next/" {
		t.Fatalf("the line after a half line: %+v %v", r, ok)
	}
	if _, ok := pendingRunOf(dir, "toolu_half"); ok {
		t.Fatal("a half line was read as a pending run")
	}

	if err := appendPending(dir, pendingLine(t, "toolu_big", strings.Repeat("y", PendingLogCap))); err == nil {
		t.Fatal("a line over the cap was appended")
	}

	// Appenders at once, each with its own open file.
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 40; i++ {
				if err := appendPending(dir, pendingLine(t, fmt.Sprintf("toolu_g%d_%d", g, i), filler)); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	for g := 0; g < 8; g++ {
		for i := 0; i < 40; i++ {
			if r, ok := pendingRunOf(dir, fmt.Sprintf("toolu_g%d_%d", g, i)); !ok || r.Command != filler {
				t.Fatalf("toolu_g%d_%d is not found whole", g, i)
			}
		}
	}
}
