package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/plan/plantest"
	"github.com/ideate/git-ideate/internal/teamsync/teamsynctest"
)

// teamSprintRepo is a bare remote holding a four-story sprint (one task
// each, one wave, a Go runner, `go vet ./...` as the gate matrix, a
// plan-ready.md per story), served over smart HTTP, with two clones that
// claim through it. It returns the clones.
func teamSprintRepo(t testing.TB) (bare, a, b string) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not installed")
	}
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	goEnv := strings.Split(strings.TrimSpace(string(out)), "\n")
	seed := gt.NewRepo(t)
	t.Setenv("GOCACHE", goEnv[0]) // NewRepo's empty HOME would make go build from nothing
	t.Setenv("GOMODCACHE", goEnv[1])
	t.Setenv("GOTOOLCHAIN", "local")
	if err := plantest.Generate(seed, plantest.Shape{Stories: 4, TasksPerStory: 1, TestsPerTask: 1, StoriesPerWave: 4}); err != nil {
		t.Fatal(err)
	}
	sprint := filepath.Join(seed, "docs", "agents", "sprint1")
	std := "---\ntype: standards\nsprint: 1\n---\n\n# Standards\n\n## Detected stack\n\n- Go — go.mod.\n\n## Active rules\n\n- Vet clean — CONTRIBUTING.md R2.\n\n## Gate matrix\n\n```sh\ngo vet ./...\n```\n" + goRunner
	os.WriteFile(filepath.Join(sprint, "standards.md"), []byte(std), 0o644)
	for i := 1; i <= 4; i++ {
		ready := fmt.Sprintf("---\ntype: plan-ready\nstory: S1-%02d\n---\n\n# S1-%02d plan-ready\n\n## T1 — Piece 1\n- [ ] `part%02d/piece1_test.go::TestPiece1_Case1` — FAIL: stub\n", i, i, i)
		os.WriteFile(filepath.Join(sprint, fmt.Sprintf("s1-%02d-part-%d", i, i), "plan-ready.md"), []byte(ready), 0o644)
		os.MkdirAll(filepath.Join(seed, fmt.Sprintf("part%02d", i)), 0o755)
		os.WriteFile(filepath.Join(seed, fmt.Sprintf("part%02d", i), "doc.go"), []byte(fmt.Sprintf("// Package part%02d is part %d.\npackage part%02d\n", i, i, i)), 0o644)
	}
	os.WriteFile(filepath.Join(seed, "go.mod"), []byte("module example.com/m\n\ngo 1.21\n"), 0o644)
	gt.Git(t, seed, "add", "-A")
	gt.Git(t, seed, "commit", "-q", "-m", "sprint 1 planned")
	mustOK(t, bin(t, seed, "", "plan", "check"))
	bare = filepath.Join(t.TempDir(), "remote.git")
	gt.Git(t, seed, "init", "-q", "--bare", bare)
	gt.Git(t, seed, "push", "-q", bare, "HEAD:refs/heads/main")
	url := teamsynctest.ServeBare(t, bare)
	for _, d := range []*string{&a, &b} {
		*d = filepath.Join(t.TempDir(), "clone")
		if out, err := exec.Command("git", "clone", "-q", url, *d).CombinedOutput(); err != nil {
			t.Fatalf("clone: %v\n%s", err, out)
		}
		gt.Git(t, *d, "config", "ideate.remote", "origin")
	}
	return bare, a, b
}

// worker is the CLI acting as one machine's worker.
type worker struct {
	t        testing.TB
	dir, who string
	did      []string // tasks this clone executed
	refused  int      // starts the remote refused: the other clone had the task
}

func (w *worker) run(args ...string) result {
	w.t.Helper()
	return mustOK(w.t, bin(w.t, w.dir, "", args...))
}

// take starts the first ready task it can claim through the remote:
// a task another clone claimed first is refused (NOT_CLAIMABLE) and the
// next one tried. It returns the task, or "" when nothing is left.
func (w *worker) take() (task, item string) {
	w.t.Helper()
	var ready struct {
		Items []struct {
			ID    string `json:"id"`
			Title string `json:"title"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(w.run("work", "ready", "--json").out), &ready); err != nil {
		w.t.Fatal(err)
	}
	for _, it := range ready.Items {
		task, _, _ := strings.Cut(it.Title, " ")
		if !strings.Contains(task, "/") {
			continue // a story: claimable once its tasks are done
		}
		r := bin(w.t, w.dir, "", "task", "start", task, "--item", it.ID, "--human", w.who, "--json")
		if r.code == 0 {
			return task, it.ID
		}
		if !strings.Contains(r.err, "NOT_CLAIMABLE") {
			w.t.Fatalf("%s: task start %s: %+v", w.who, task, r)
		}
		w.refused++
	}
	return "", ""
}

// execute does the task: a failing test on a stub (RED), the body
// (GREEN), completion. The final gate judges the sprint: it runs once
// every task is GREEN.
func (w *worker) execute(task string) {
	w.t.Helper()
	story, _, _ := strings.Cut(task, "/")
	pkg := "part" + strings.TrimPrefix(story, "S1-")
	wt := filepath.Join(w.dir, ".ideate", "worktrees", strings.ReplaceAll(task, "/", "+"))
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(wt, pkg, name), []byte(body), 0o644); err != nil {
			w.t.Fatal(err)
		}
	}
	write("piece1.go", "package "+pkg+"\n\n// Piece1 is piece one. agentic:shim\nfunc Piece1() int { return 0 }\n")
	write("piece1_test.go", "package "+pkg+"\n\nimport \"testing\"\n\nfunc TestPiece1_Case1(t *testing.T) {\n\tif Piece1() != 1 {\n\t\tt.Fatal(\"want 1\")\n\t}\n}\n")
	gt.Git(w.t, wt, "add", "-A")
	gt.Git(w.t, wt, "commit", "-q", "-m", task+": red")
	w.run("gate", "red", "--task", task)
	write("piece1.go", "package "+pkg+"\n\n// Piece1 is piece one.\nfunc Piece1() int { return 1 }\n")
	gt.Git(w.t, wt, "commit", "-q", "-am", task+": green")
	w.run("gate", "green", "--task", task)
	w.run("task", "complete", task)
	w.did = append(w.did, task)
}

// Two supervisors on two clones execute one sprint through one remote
// (smart HTTP, fsck on), taking ready tasks from the same board and
// syncing between steps: every task is executed once, both execution logs
// are equal after a final sync, and the final gate passes every task on
// both clones (the other clone's tasks judged at their synced branches).
func TestTeamSprint_TwoClonesExecuteOneSprint(t *testing.T) {
	bare, a, b := teamSprintRepo(t)
	wa, wb := &worker{t: t, dir: a, who: "alice"}, &worker{t: t, dir: b, who: "bob"}
	wa.run("plan", "import", "--human", "alice")
	wa.run("sync")
	wb.run("sync")
	// Both look at the board before either claims: they want the same
	// first task; the remote gives it to one.
	for round := 0; ; round++ {
		ta, _ := wa.take()
		tb, _ := wb.take()
		if ta == "" && tb == "" {
			break
		}
		if ta != "" && ta == tb {
			t.Fatalf("round %d: both clones started %s", round, ta)
		}
		if ta != "" {
			wa.execute(ta)
		}
		if tb != "" {
			wb.execute(tb)
		}
		wa.run("sync")
		wb.run("sync")
		if round > 4 {
			t.Fatal("the sprint does not end")
		}
	}
	done := append(append([]string{}, wa.did...), wb.did...)
	seen := map[string]bool{}
	for _, task := range done {
		if seen[task] {
			t.Fatalf("task %s executed twice: alice %v, bob %v", task, wa.did, wb.did)
		}
		seen[task] = true
	}
	if len(done) != 4 || len(wa.did) == 0 || len(wb.did) == 0 {
		t.Fatalf("executed: alice %v, bob %v; want the 4 tasks shared by both", wa.did, wb.did)
	}
	wa.run("sync")
	for _, w := range []*worker{wa, wb} {
		for i := 1; i <= 4; i++ {
			task := fmt.Sprintf("S1-%02d/T1", i)
			if r := bin(t, w.dir, "", "gate", "final", "--task", task); r.code != 0 {
				t.Fatalf("%s: gate final --task %s: %+v", w.who, task, r)
			}
		}
	}
	wa.run("sync")
	wb.run("sync")
	wa.run("sync")
	la, lb := wa.run("exec", "log").out, wb.run("exec", "log").out
	if la != lb {
		t.Fatalf("the execution logs differ after a sync:\n--- alice\n%s--- bob\n%s", la, lb)
	}
	for i := 1; i <= 4; i++ {
		for _, phase := range []string{"red", "green"} {
			if n := strings.Count(la, fmt.Sprintf("%s S1-%02d verdict task=T1 attempt=1 result=PASS", phase, i)); n != 1 {
				t.Fatalf("the exec log holds %d %s verdicts of S1-%02d/T1, want 1:\n%s", n, phase, i, la)
			}
		}
		// One on each clone after the sprint.
		if n := strings.Count(la, fmt.Sprintf("gate S1-%02d verdict phase=final task=T1 attempt=1 result=PASS", i)); n != 2 {
			t.Fatalf("the exec log holds %d final PASS verdicts of S1-%02d/T1, want 2:\n%s", n, i, la)
		}
	}
	for _, w := range []*worker{wa, wb} {
		var page struct {
			Items []struct{ Status string } `json:"items"`
		}
		json.Unmarshal([]byte(w.run("work", "list", "--json", "--status", "done").out), &page)
		if len(page.Items) != 4 {
			t.Fatalf("%s's board has %d done items, want the 4 tasks", w.who, len(page.Items))
		}
	}
	// Without the branch a GREEN verdict names, the final gate cannot
	// judge, and says what is missing.
	task := wa.did[0]
	slug := strings.ReplaceAll(task, "/", "+")
	gt.Git(t, b, "update-ref", "-d", "refs/heads/ideate/task/"+slug)
	gt.Git(t, b, "update-ref", "-d", "refs/ideate/branches/"+slug)
	if r := bin(t, b, "", "gate", "final", "--task", task); r.code != 4 || !strings.Contains(r.out, "branch ideate/task/"+slug+" is not in this clone") {
		t.Fatalf("final without the task's branch: %+v", r)
	}
	// The finished sprint folded into the archive: the done task items,
	// the closed task refs and their branches' mirrors leave the live
	// refs, here and at the remote; both clones still list them as done,
	// and a final gate of a task the other clone executed still judges it,
	// from the archive when this clone never had the task's branch.
	gt.Git(t, a, "config", "ideate.archiveAfter", "0")
	wa.run("sync")
	wb.run("sync")
	for _, w := range []*worker{wa, wb} {
		var page struct {
			Items []struct{ Status string } `json:"items"`
		}
		json.Unmarshal([]byte(w.run("work", "list", "--json", "--status", "done").out), &page)
		if len(page.Items) != 4 {
			t.Fatalf("%s's board lists %d done items after the archive, want the 4 tasks", w.who, len(page.Items))
		}
		if live := gt.Git(t, w.dir, "for-each-ref", "refs/ideate/tasks/"); live != "" {
			t.Fatalf("%s still has live task refs after the archive:\n%s", w.who, live)
		}
	}
	for _, dir := range []string{bare, a, b} {
		if live := gt.Git(t, dir, "for-each-ref", "refs/ideate/tasks/", "refs/ideate/branches/"); live != "" {
			t.Fatalf("%s still has live task refs or branch mirrors after the archive:\n%s", dir, live)
		}
	}
	if r := bin(t, b, "", "gate", "final", "--task", task); r.code != 0 || !strings.Contains(r.out, "judged at its branch") {
		t.Fatalf("gate final --task %s from the archived branch (this clone never had it): %+v", task, r)
	}
	wa.run("sync")
	if live := gt.Git(t, bare, "for-each-ref", "refs/ideate/branches/"); live != "" {
		t.Fatalf("a sync put archived branch mirrors back at the remote:\n%s", live)
	}
	if len(wb.did) > 0 {
		if r := bin(t, a, "", "gate", "final", "--task", wb.did[0]); r.code != 0 {
			t.Fatalf("gate final --task %s after the archive: %+v", wb.did[0], r)
		}
	}
	t.Logf("alice executed %v, bob %v; the remote refused %d start(s) of a task the other clone had", wa.did, wb.did, wa.refused+wb.refused)
	if wa.refused+wb.refused == 0 {
		t.Fatal("the clones never wanted the same task: the claim through the remote was not tested")
	}
	gt.Fsck(t, bare)
}
