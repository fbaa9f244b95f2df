package hooks

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/gates"
)

// Who is at work besides the caller: a dispatch with a worktree until
// its agent claims it, a bound agent with a worktree until its stop
// passes, never the caller itself nor a reviewer (no worktree); finished
// agents, however many, leave nobody at work.
func TestOthersAtWork(t *testing.T) {
	state := t.TempDir()
	write := func(parts []string, v any) {
		t.Helper()
		p := dispatchPath(state, parts...)
		os.MkdirAll(filepath.Dir(p), 0o755)
		data := []byte("x")
		if v != nil {
			data, _ = json.Marshal(v)
		}
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	remove := func(parts ...string) { os.Remove(dispatchPath(state, parts...)) }
	want := func(what, self string, at bool) {
		t.Helper()
		if got := othersAtWork(state, self); got != at {
			t.Errorf("%s: others at work for %q = %v, want %v", what, self, got, at)
		}
	}
	want("nothing dispatched", "", false)
	for i := 0; i < 30; i++ {
		id, agent := fmt.Sprintf("toolu_done%d", i), fmt.Sprintf("adone%d", i)
		d := dispatchRec{ToolUseID: id, Task: "S1-01/T1", Role: "red-worker", Worktree: "/wt/T1"}
		write([]string{"pending", id + ".json"}, d)
		write([]string{"claims", id}, nil)
		write([]string{"agents", agent + ".json"}, bindingRec{dispatchRec: d, Agent: agent})
		write([]string{"stopped", agent}, nil)
	}
	want("thirty finished agents", "", false)

	d := dispatchRec{ToolUseID: "toolu_w", Task: "S1-01/T2", Role: "green-worker", Worktree: "/wt/T2"}
	write([]string{"pending", "toolu_w.json"}, d)
	want("a dispatch waiting for its agent", "awork", true)
	write([]string{"claims", "toolu_w"}, nil)
	want("the dispatch taken, its agent not bound yet", "awork", false)
	write([]string{"agents", "awork.json"}, bindingRec{dispatchRec: d, Agent: "awork"})
	want("a bound agent, for another", "", true)
	want("a bound agent, for itself", "awork", false)
	write([]string{"stopped", "awork"}, nil)
	want("its stop passed", "", false)
	remove("stopped", "awork")

	remove("agents", "awork.json")
	r := dispatchRec{ToolUseID: "toolu_r", Task: "S1-01/T2", Role: "structural-reviewer"}
	write([]string{"pending", "toolu_r.json"}, r)
	write([]string{"agents", "areview.json"}, bindingRec{dispatchRec: r, Agent: "areview"})
	want("a reviewer, waiting and bound (no worktree)", "", false)
}

// A Bash call's writes are logged only while another agent is at work:
// only the stops of agents at work then can read them.
func TestLogWrites_OnlyWhileAnotherIsAtWork(t *testing.T) {
	state, wt := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(wt, "a.go"), []byte("package a\n"), 0o644)
	written := writtenBy(state)
	abs := gates.Resolve("", filepath.Join(wt, "a.go"))
	if err := LogWrites(state, "ab", wt, []string{"a.go"}); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := written(abs); ok {
		t.Errorf("logged with nobody else at work")
	}
	p := dispatchPath(state, "pending", "toolu_o.json")
	os.MkdirAll(filepath.Dir(p), 0o755)
	data, _ := json.Marshal(dispatchRec{ToolUseID: "toolu_o", Task: "S1-01/T2", Role: "red-worker", Worktree: "/wt/T2"})
	os.WriteFile(p, data, 0o600)
	if err := LogWrites(state, "ab", wt, []string{"a.go"}); err != nil {
		t.Fatal(err)
	}
	if actor, hash, ok := written(abs); !ok || actor != "ab" || hash != gates.ContentHash(abs) {
		t.Errorf("beside another: %q %q %v", actor, hash, ok)
	}
	// A changed symlink is logged as itself, not as the file it leads to.
	os.Symlink("b.go", filepath.Join(wt, "l.go"))
	os.WriteFile(filepath.Join(wt, "b.go"), []byte("package a\n"), 0o644)
	if err := LogWrites(state, "ab", wt, []string{"l.go"}); err != nil {
		t.Fatal(err)
	}
	link := gates.EntryPath(filepath.Join(wt, "l.go"))
	if _, hash, ok := written(link); !ok || hash != gates.ContentHash(link) || !strings.HasPrefix(hash, "link:") {
		t.Errorf("the symlink: %q %v", hash, ok)
	}
	if _, _, ok := written(gates.EntryPath(filepath.Join(wt, "b.go"))); ok {
		t.Errorf("the symlink's target is logged")
	}
}
