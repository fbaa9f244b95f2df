package transcripts

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
)

var ctx = context.Background()

const (
	ghToken = "ghp_abcdefghijklmnopqrstuvwxyz0123456789AB"
	pemKey  = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAvYq3xZ8qgf0p5pD0sQ9xZ8qgf0p5pD0sQ9xZ8qgf0p5pD0sQ9xZ8\nqgf0p5pD0sQ9xZ8qgf0p5pD0sQ9xZ8qgf0p5pD0sQ9xZ8qgf0p5pD0sQ9xZ8qgf0p5p\n-----END RSA PRIVATE KEY-----"
)

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func TestStore_Append_GlobalAndTask_Redacted(t *testing.T) {
	s := Open(t.TempDir())
	s.Now = func() time.Time { return time.Date(2026, 11, 30, 21, 0, 0, 0, time.UTC) }
	clean := json.RawMessage(`{"tool_name":"Read","tool_input":{"file_path":"/r/a.go"},"z":1.50}`)
	if _, err := s.Append(Event{Event: "PostToolUse", Session: "s1", Tool: "Read", Payload: clean}); err != nil {
		t.Fatal(err)
	}
	secret, _ := json.Marshal(map[string]any{"tool_name": "Bash", "tool_response": map[string]any{"stdout": pemKey + "\ntoken " + ghToken}})
	red, err := s.Append(Event{Event: "PostToolUse", Session: "s1", Agent: "a1", Task: "S1-01/T1", Tool: "Bash", Payload: secret})
	if err != nil {
		t.Fatal(err)
	}
	if len(red) != 2 {
		t.Errorf("redactions %v, want the PEM key and the token", red)
	}
	global := readLines(t, filepath.Join(s.Root, GlobalFile))
	if len(global) != 2 {
		t.Fatalf("global log has %d lines", len(global))
	}
	// A clean payload is kept byte for byte (numbers as written).
	if !strings.Contains(global[0], `"payload":{"tool_name":"Read","tool_input":{"file_path":"/r/a.go"},"z":1.50}`) ||
		!strings.HasPrefix(global[0], `{"at":"2026-11-30T21:00:00.000Z","event":"PostToolUse","session":"s1","tool":"Read"`) {
		t.Errorf("clean line %s", global[0])
	}
	task := readLines(t, filepath.Join(s.TaskDir("S1-01/T1"), EventsFile))
	if len(task) != 1 || task[0] != global[1] {
		t.Fatalf("task log %q, want the second global line", task)
	}
	for _, l := range global {
		if strings.Contains(l, "MIIEowIBAAKCAQEA") || strings.Contains(l, ghToken) {
			t.Fatalf("a secret reached the log: %s", l)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("line is not JSON: %v", err)
		}
	}
	if !strings.Contains(global[1], "[REDACTED:pem-private-key]") || !strings.Contains(global[1], "[REDACTED:github-token]") {
		t.Errorf("markers missing: %s", global[1])
	}
	if _, err := s.Append(Event{Event: "x", Task: "../escape", Payload: clean}); !apperr.Is(err, apperr.Schema) {
		t.Errorf("task ../escape: %v", err)
	}
}

func TestStore_Append_ConcurrentWritersKeepWholeLines(t *testing.T) {
	s := Open(t.TempDir())
	big := strings.Repeat("x", 100<<10)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				p, _ := json.Marshal(map[string]any{"g": g, "i": i, "out": big})
				if _, err := s.Append(Event{Event: "PostToolUse", Task: "T", Payload: p}); err != nil {
					t.Error(err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	for _, f := range []string{filepath.Join(s.Root, GlobalFile), filepath.Join(s.TaskDir("T"), EventsFile)} {
		lines := readLines(t, f)
		if len(lines) != 200 {
			t.Fatalf("%s: %d lines, want 200", f, len(lines))
		}
		for _, l := range lines {
			if !json.Valid([]byte(l)) {
				t.Fatalf("%s: interleaved line", f)
			}
		}
	}
}

func writeFile(t *testing.T, path, text string, appendTo bool) {
	t.Helper()
	flag := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if appendTo {
		flag = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	}
	f, err := os.OpenFile(path, flag, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(text)
	f.Close()
}

func TestStore_Copy_IncrementalWholeLinesRedacted(t *testing.T) {
	s := Open(t.TempDir())
	src := filepath.Join(t.TempDir(), "session.jsonl")
	l1 := `{"type":"user","message":{"content":"hello"}}`
	l2, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"content": []any{map[string]any{"type": "tool_result", "content": "cat key\n" + pemKey}}}})
	writeFile(t, src, l1+"\n"+string(l2)+"\n"+`{"type":"assist`, false) // the last line is being written
	dest, err := SessionCopy("s1", "")
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Copy(ctx, src, dest)
	if err != nil {
		t.Fatal(err)
	}
	if r.Lines != 2 || len(r.Redactions) != 1 {
		t.Fatalf("first copy %+v", r)
	}
	got := readLines(t, filepath.Join(s.Root, dest))
	if len(got) != 2 || got[0] != l1 || strings.Contains(got[1], "MIIEow") || !strings.Contains(got[1], "[REDACTED:pem-private-key]") {
		t.Fatalf("copy %q", got)
	}
	// The host finishes the line and writes another: only those come.
	writeFile(t, src, `ant","token":"`+ghToken+`"}`+"\n"+l1+"\n", true)
	r, err = s.Copy(ctx, src, dest)
	if err != nil || r.Lines != 2 {
		t.Fatalf("second copy %+v %v", r, err)
	}
	got = readLines(t, filepath.Join(s.Root, dest))
	if len(got) != 4 || got[2] != `{"token":"[REDACTED:github-token]","type":"assistant"}` || got[3] != l1 {
		t.Fatalf("after the second copy %q", got)
	}
	// Nothing new: nothing written.
	if r, _ := s.Copy(ctx, src, dest); r.Lines != 0 || r.Bytes != 0 {
		t.Fatalf("idle copy %+v", r)
	}
	// A replaced (shorter) source is copied again from its start.
	writeFile(t, src, l1+"\n", false)
	if r, _ := s.Copy(ctx, src, dest); !r.Restarted || r.Lines != 1 {
		t.Fatalf("restart %+v", r)
	}
	if _, err := s.Copy(ctx, filepath.Join(t.TempDir(), "none.jsonl"), dest); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("missing source: %v", err)
	}
}

func TestStore_Copy_LongLinesStreamedAndRedacted(t *testing.T) {
	s := Open(t.TempDir())
	src := filepath.Join(t.TempDir(), "agent.jsonl")
	// A 3.5 MiB line (over LineBuffer) with a token in its middle, then
	// a short one; then a long line still being written.
	pad := strings.Repeat("word ", (LineBuffer/5)+1000)
	long := `{"type":"user","content":"` + pad + ghToken + " " + pad + pad + `"}`
	writeFile(t, src, long+"\n"+`{"n":1}`+"\n"+`{"type":"user","content":"`+pad+pad, false)
	dest, _ := TaskCopy("S1-01/T1", "agent-a1")
	r, err := s.Copy(ctx, src, dest)
	if err != nil {
		t.Fatal(err)
	}
	if r.Lines != 2 || len(r.Redactions) != 1 {
		t.Fatalf("copy %+v", r)
	}
	got := readLines(t, filepath.Join(s.Root, dest))
	if len(got) != 2 || got[1] != `{"n":1}` || strings.Contains(got[0], ghToken) || !json.Valid([]byte(got[0])) ||
		len(got[0]) != len(long)-len(ghToken)+len("[REDACTED:github-token]") {
		t.Fatalf("long line copied wrong (%d lines)", len(got))
	}
	off, _ := os.ReadFile(filepath.Join(s.Root, dest) + offsetExt)
	if want := strconv.Itoa(len(long) + 1 + len(`{"n":1}`) + 1); strings.TrimSpace(string(off)) != want {
		t.Errorf("offset %s, want %s (the unfinished line unread)", off, want)
	}
}

// The 100 MB transcript is copied by a child process whose peak resident
// memory must stay far below the file's size.
func TestStore_Copy_100MB_BoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 100 MB")
	}
	if os.Getenv("TRANSCRIPTS_COPY_CHILD") != "" {
		copyChild(t)
		return
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "big.jsonl")
	f, err := os.Create(src)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var size int64
	for i := 0; size < 100<<20; i++ {
		var line string
		switch i % 50 {
		case 0:
			line = fmt.Sprintf(`{"type":"user","n":%d,"message":{"content":"key %s"}}`, i, ghToken)
		case 1:
			line = `{"type":"user","content":"` + strings.Repeat("long output ", 200<<10) + `"}` // 2.4 MB
		default:
			line = fmt.Sprintf(`{"type":"assistant","n":%d,"message":{"content":[{"type":"text","text":"%s"}]}}`, i, strings.Repeat("some text ", 300))
		}
		n, _ := w.WriteString(line + "\n")
		size += int64(n)
	}
	w.Flush()
	f.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestStore_Copy_100MB_BoundedMemory$", "-test.count=1")
	cmd.Env = append(os.Environ(), "TRANSCRIPTS_COPY_CHILD=1", "TRANSCRIPTS_SRC="+src, "TRANSCRIPTS_STATE="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	// The child's own high-water mark (/proc/self/status VmHWM): rusage's
	// maxrss carries the parent's across the fork and exec.
	var peak int64
	if _, err := fmt.Sscanf(string(out[bytes.Index(out, []byte("VmHWM:")):]), "VmHWM: %d kB", &peak); err != nil {
		t.Fatalf("child's VmHWM: %v\n%s", err, out)
	}
	peak <<= 10
	dest := filepath.Join(dir, Dir, "sessions", "big.jsonl")
	fi, err := os.Stat(dest)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("copied %d MB into %d MB; child peak RSS %d MiB", size>>20, fi.Size()>>20, peak>>20)
	if fi.Size() < size-size/100 {
		t.Errorf("copy is %d bytes of %d", fi.Size(), size)
	}
	if peak > 64<<20 {
		t.Errorf("peak RSS %d MiB for a %d MB transcript: memory is not bounded", peak>>20, size>>20)
	}
	b, _ := os.ReadFile(dest)
	if bytes.Contains(b, []byte(ghToken)) {
		t.Error("a token survived the copy")
	}
}

func copyChild(t *testing.T) {
	s := Open(os.Getenv("TRANSCRIPTS_STATE"))
	dest, _ := SessionCopy("big", "")
	r, err := s.Copy(ctx, os.Getenv("TRANSCRIPTS_SRC"), dest)
	if err != nil {
		t.Fatal(err)
	}
	if r.Lines == 0 {
		t.Fatal("nothing copied")
	}
	st, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, l := range strings.Split(string(st), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			fmt.Println(strings.Join(strings.Fields(l), " "))
		}
	}
}

func TestStore_StageUnstage_TaskSliceOnlyReadOnly(t *testing.T) {
	s := Open(t.TempDir())
	p := json.RawMessage(`{"x":1}`)
	s.Append(Event{Event: "PostToolUse", Task: "S1-01/T1", Payload: p})
	s.Append(Event{Event: "PostToolUse", Task: "S1-01/T2", Payload: p})
	src := filepath.Join(t.TempDir(), "a.jsonl")
	writeFile(t, src, `{"a":1}`+"\n", false)
	dest, _ := TaskCopy("S1-01/T1", "agent-a1")
	if _, err := s.Copy(ctx, src, dest); err != nil {
		t.Fatal(err)
	}
	wt := t.TempDir()
	files, err := s.Stage(ctx, "S1-01/T1", wt)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(files, ",") != "agent-a1.jsonl,events.jsonl" {
		t.Fatalf("staged %v", files)
	}
	dir := filepath.Join(wt, StageDir)
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		fi, _ := e.Info()
		if fi.Mode().Perm()&0o222 != 0 {
			t.Errorf("%s is writable: %v", e.Name(), fi.Mode())
		}
		if e.Name() == GlobalFile || strings.HasSuffix(e.Name(), offsetExt) {
			t.Errorf("%s staged", e.Name())
		}
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm()&0o222 != 0 {
		t.Errorf("stage directory is writable: %v", fi.Mode())
	}
	if len(ents) != 3 { // two files and the .gitignore
		t.Errorf("stage holds %d entries", len(ents))
	}
	// Staging again replaces the stage.
	if _, err := s.Stage(ctx, "S1-01/T1", wt); err != nil {
		t.Fatal(err)
	}
	if err := Unstage(wt); err != nil {
		t.Fatal(err)
	}
	if Staged(wt) {
		t.Fatal("stage left after Unstage")
	}
	if err := Unstage(wt); err != nil {
		t.Fatalf("second Unstage: %v", err)
	}
}

func TestStore_UsageAndPrune(t *testing.T) {
	s := Open(t.TempDir())
	at := func(d int) string { return fmt.Sprintf("2026-11-%02dT10:00:00.000Z", d) }
	p := json.RawMessage(`{"x":1}`)
	for d := 1; d <= 4; d++ {
		s.Append(Event{At: at(d), Event: "PostToolUse", Task: "S1-01/T1", Payload: p})
		s.Append(Event{At: at(d), Event: "UserPromptSubmit", Payload: p})
	}
	src := filepath.Join(t.TempDir(), "a.jsonl")
	writeFile(t, src, `{"a":1}`+"\n", false)
	old, _ := SessionCopy("old", "")
	s.Copy(ctx, src, old)
	past := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	os.Chtimes(filepath.Join(s.Root, old), past, past)
	fresh, _ := SessionCopy("fresh", "")
	s.Copy(ctx, src, fresh)
	u, err := s.Usage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range u.Areas {
		names = append(names, fmt.Sprintf("%s:%d", a.Name, a.Files))
	}
	if strings.Join(names, " ") != "global:1 sessions:4 task S1-01/T1:1" || u.Bytes == 0 {
		t.Fatalf("usage %v (%d bytes)", names, u.Bytes)
	}
	if _, err := s.Prune(ctx, PruneOptions{}); !apperr.Is(err, apperr.Schema) {
		t.Errorf("prune with nothing said: %v", err)
	}
	cut := time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC)
	dry, err := s.Prune(ctx, PruneOptions{Before: cut, DryRun: true})
	if err != nil || dry.LinesCut != 6 || len(dry.Files) != 1 {
		t.Fatalf("dry run %+v %v", dry, err)
	}
	if len(readLines(t, filepath.Join(s.Root, GlobalFile))) != 8 {
		t.Fatal("a dry run cut the log")
	}
	res, err := s.Prune(ctx, PruneOptions{Before: cut})
	if err != nil || res.LinesCut != 6 || strings.Join(res.Files, ",") != "sessions/old.jsonl" {
		t.Fatalf("prune %+v %v", res, err)
	}
	g := readLines(t, filepath.Join(s.Root, GlobalFile))
	if len(g) != 4 || !strings.Contains(g[0], at(3)) {
		t.Fatalf("global after the cut: %q", g)
	}
	if _, err := os.Stat(filepath.Join(s.Root, fresh)); err != nil {
		t.Error("a fresh copy was pruned")
	}
	// An append after the cut lands in the new file.
	s.Append(Event{At: at(5), Event: "x", Payload: p})
	if g := readLines(t, filepath.Join(s.Root, GlobalFile)); len(g) != 5 {
		t.Fatalf("append after prune: %d lines", len(g))
	}
	res, err = s.Prune(ctx, PruneOptions{Task: "S1-01/T1"})
	if err != nil || len(res.Files) != 1 {
		t.Fatalf("prune task %+v %v", res, err)
	}
	if _, err := os.Stat(s.TaskDir("S1-01/T1")); !os.IsNotExist(err) {
		t.Error("the task's slice is still there")
	}
}
