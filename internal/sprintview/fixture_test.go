package sprintview_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/plan"
	"github.com/ideate/git-ideate/internal/record"
	"github.com/ideate/git-ideate/internal/revision"
	"github.com/ideate/git-ideate/internal/sprintview"
	"github.com/ideate/git-ideate/internal/worktree"
)

// demo is a repository holding a scripted two-wave sprint: S1-01/T1
// failed GREEN once and then passed, S1-01/T2 passed at once, S1-02/T1
// (wave 2) failed and was escalated. Its records include markup.
type demo struct {
	dir  string
	g    *gitstore.Store
	exec *execlog.Log
	deps sprintview.Deps
	// escalation is the class revision gave S1-02/T1's escalation.
	escalation string
}

const hostile = `<script>document.title="pwned"</script><img src=x onerror="document.title='pwned'">`

func newDemo(t *testing.T) *demo {
	t.Helper()
	dir := gt.NewRepo(t)
	src := filepath.Join("..", "plan", "testdata", "example")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	gt.Git(t, dir, "add", "-A")
	gt.Git(t, dir, "commit", "-qm", "plan")
	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	ctx := context.Background()
	x := execlog.Open(g)
	rec := record.Open(g)
	tasks := worktree.Open(g)
	load := func(ctx context.Context) (*plan.Sprint, error) {
		return plan.Load(ctx, os.DirFS(dir), plan.Options{Sprint: 1})
	}
	d := &demo{dir: dir, g: g, exec: x}
	d.deps = sprintview.Deps{
		Plan: load, Exec: x, Board: board.Open(g, rec), Record: rec,
		Revision: revision.Deps{Tasks: tasks, Exec: x, Plan: load},
		Refs:     sprintview.RefsOf(g),
	}
	head := gt.Git(t, dir, "rev-parse", "HEAD")
	for _, task := range []string{"S1-01/T1", "S1-01/T2", "S1-02/T1"} {
		if _, err := tasks.Start(ctx, worktree.StartInput{Task: task, Role: "red-worker", Holder: "planner", Token: 1}); err != nil {
			t.Fatalf("start %s: %v", task, err)
		}
		if err := tasks.PutAttemptFile(ctx, task, 1, "init.md", []byte("# init of "+task+"\nrole: red-worker\n"+hostile+"\n"), nil); err != nil {
			t.Fatal(err)
		}
		if err := tasks.PutAttemptFile(ctx, task, 1, "output.md", []byte("worker said "+hostile+"\n"), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := tasks.PutAttemptFile(ctx, "S1-01/T1", 2, "init.md", []byte("# attempt 2\nfeedback: fix Reverse for invalid UTF-8\n"), nil); err != nil {
		t.Fatal(err)
	}
	d.log(t, "S1-01/T1", 1, 1, "red", "PASS", "", head)
	d.log(t, "S1-01/T2", 1, 1, "red", "PASS", "", head)
	d.log(t, "S1-01/T1", 1, 1, "green", "FAIL", "assert_fail", head)
	d.log(t, "S1-01/T2", 1, 1, "green", "PASS", "", head)
	d.log(t, "S1-01/T1", 1, 2, "green", "PASS", "", head)
	d.log(t, "S1-02/T1", 2, 1, "red", "PASS", "", head)
	fail := d.log(t, "S1-02/T1", 2, 1, "green", "FAIL", "assert_fail", head)
	esc, err := d.deps.Revision.Escalate(ctx, "S1-02/T1", "the contract leaves the cap's trailing dash open "+hostile, &fail)
	if err != nil {
		t.Fatal(err)
	}
	d.escalation = esc.Class
	for _, c := range []string{"Keep the view read-only", hostile} {
		if _, err := rec.Append(ctx, record.AppendInput{Kind: "decision", Claim: c, Scope: "view", Content: "body " + hostile}); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func (d *demo) log(t *testing.T, task string, wave, attempt int, phase, result, class, commit string) execlog.Entry {
	t.Helper()
	e := execlog.Entry{Sprint: 1, Wave: wave, Task: task, Attempt: attempt, Phase: phase, Event: execlog.EventVerdict, Result: result, Commit: commit}
	if class != "" {
		e.Reasons = []execlog.Reason{{Class: class, Detail: "a declared test failed"}}
	}
	e, err := d.exec.Append(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
