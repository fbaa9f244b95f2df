package transcripts

import (
	"encoding/json"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A disk that fills mid-write (here: RLIMIT_FSIZE, which cuts a write
// short at the limit the way a full disk does) leaves whole lines only:
// the failed append and the failed copy are cut back off, and the next
// event and the next copy land on a line of their own.
func TestStore_WholeLinesWhenTheDiskFills(t *testing.T) {
	s := Open(t.TempDir())
	event := func(n int) Event {
		p, _ := json.Marshal(map[string]string{"text": strings.Repeat("x", n)})
		return Event{Event: "PostToolUse", Session: "s1", Payload: p}
	}
	if _, err := s.Append(event(10)); err != nil {
		t.Fatal(err)
	}
	global := filepath.Join(s.Root, GlobalFile)
	src := filepath.Join(t.TempDir(), "session.jsonl")
	line := `{"type":"user","message":{"content":"` + strings.Repeat("y", 300) + `"}}`
	writeFile(t, src, line+"\n"+line+"\n"+line+"\n", false)
	dest, _ := SessionCopy("s1", "")

	fi, _ := os.Stat(global)
	signal.Ignore(syscall.SIGXFSZ)
	defer signal.Reset(syscall.SIGXFSZ)
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Skip(err)
	}
	lim := old
	lim.Cur = uint64(fi.Size()) + 100
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Skip(err)
	}
	_, appendErr := s.Append(event(1000))
	_, copyErr := s.Copy(ctx, src, dest)
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	if appendErr == nil || copyErr == nil {
		t.Fatalf("writes past the limit succeeded: append %v, copy %v", appendErr, copyErr)
	}
	if fi2, _ := os.Stat(global); fi2.Size() != fi.Size() {
		t.Fatalf("the failed append left %d bytes behind", fi2.Size()-fi.Size())
	}
	if fi2, _ := os.Stat(filepath.Join(s.Root, dest)); fi2 != nil && fi2.Size() != 0 {
		t.Fatalf("the failed copy left %d bytes behind", fi2.Size())
	}
	if _, err := s.Append(event(20)); err != nil {
		t.Fatal(err)
	}
	if r, err := s.Copy(ctx, src, dest); err != nil || r.Lines != 3 {
		t.Fatalf("copy after the disk has room: %+v %v", r, err)
	}
	for _, p := range []string{global, filepath.Join(s.Root, dest)} {
		lines := readLines(t, p)
		for _, l := range lines {
			if !json.Valid([]byte(l)) {
				t.Fatalf("%s holds a broken line: %.80q", p, l)
			}
		}
		if want := map[string]int{global: 2, filepath.Join(s.Root, dest): 3}[p]; len(lines) != want {
			t.Fatalf("%s holds %d lines, want %d", p, len(lines), want)
		}
	}
}
