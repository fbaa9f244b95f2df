package gitstore

import (
	"syscall"
	"testing"
)

// The recycled spares are bounded by a quarter of the open files the
// process may have, when that is lower than the bound asked for, and
// never below 64.
func TestRecycleBound_AQuarterOfTheOpenFileLimit(t *testing.T) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim) })
	for _, c := range []struct {
		soft uint64
		want int
	}{{lim.Cur, min(2048, max(64, int(lim.Cur/4)))}, {8192, 2048}, {4096, 1024}, {1024, 256}, {200, 64}} {
		if c.soft > lim.Max {
			continue
		}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: c.soft, Max: lim.Max}); err != nil {
			t.Fatal(err)
		}
		if got := recycleBound(2048); got != c.want {
			t.Fatalf("open file limit %d: bound %d, want %d", c.soft, got, c.want)
		}
	}
}
