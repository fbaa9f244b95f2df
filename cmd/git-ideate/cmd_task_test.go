package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/execlog"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

type taskJSON struct {
	Task     string   `json:"task"`
	Path     string   `json:"path"`
	Base     string   `json:"base"`
	Item     string   `json:"item"`
	Token    int64    `json:"token"`
	Holder   string   `json:"holder"`
	Scope    []string `json:"scope"`
	Tests    []string `json:"tests"`
	Status   string   `json:"status"`
	Worktree string   `json:"worktree"`
	Reused   bool     `json:"reused"`
	Claim    string   `json:"claim"`
	Note     string   `json:"claim_note"`
	CNote    string   `json:"note"`
}

func parseTask(t *testing.T, out string) taskJSON {
	t.Helper()
	var tj taskJSON
	if err := json.Unmarshal([]byte(out), &tj); err != nil {
		t.Fatalf("not a task: %v\n%s", err, out)
	}
	return tj
}

func itemStatus(t *testing.T, dir, id string) string {
	t.Helper()
	var it struct {
		Status string `json:"status"`
	}
	json.Unmarshal([]byte(mustOK(t, bin(t, dir, "", "work", "get", "--id", id)).out), &it)
	return it.Status
}

func TestTask_CLI_StartScopeCompleteOnTheBoard(t *testing.T) {
	dir := gt.NewRepo(t)
	os.MkdirAll(filepath.Join(dir, "pkg"), 0o755)
	os.WriteFile(filepath.Join(dir, "pkg", "a.go"), []byte("package pkg\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "README"), []byte("r\n"), 0o644)
	gt.Git(t, dir, "add", "-A")
	gt.Git(t, dir, "commit", "-q", "-m", "base")
	item := itemID(t, mustOK(t, bin(t, dir, "", "work", "create", "--title", "T1", "--spec", "s", "--spec-format", "f", "--human", "h")).out)

	st := parseTask(t, mustOK(t, bin(t, dir, "", "task", "start", "S1-01/T1", "--item", item, "--human", "alice", "--agent", "w/1",
		"--role", "green-worker", "--scope", "pkg/**", "--test", "pkg::TestA", "--json")).out)
	if st.Item != item || st.Token < 1 || st.Holder != "alice (w/1)" || st.Reused || itemStatus(t, dir, item) != "in_progress" {
		t.Fatalf("start: %+v", st)
	}
	if _, err := os.Stat(filepath.Join(st.Path, "pkg", "a.go")); err != nil {
		t.Fatalf("worktree: %v", err)
	}
	// The holder again: the same claim and worktree.
	again := parseTask(t, mustOK(t, bin(t, dir, "", "task", "start", "S1-01/T1", "--item", item, "--human", "alice", "--agent", "w/1", "--json")).out)
	if !again.Reused || again.Token != st.Token {
		t.Errorf("restart: %+v", again)
	}
	// Anyone else: the claim refuses, and no worktree changes hands.
	if r := bin(t, dir, "", "task", "start", "S1-01/T1", "--item", item, "--human", "bob"); r.code != 1 || !strings.Contains(r.err, "NOT_CLAIMABLE") {
		t.Errorf("bob: %+v", r)
	}

	os.WriteFile(filepath.Join(st.Path, "pkg", "a.go"), []byte("package pkg\n// done\n"), 0o644)
	os.WriteFile(filepath.Join(st.Path, "README"), []byte("edited out of scope\n"), 0o644)
	var sc struct {
		Outside []string `json:"outside"`
		InScope bool     `json:"in_scope"`
		Changes []struct {
			Path   string `json:"path"`
			Status string `json:"status"`
		} `json:"changes"`
	}
	if err := json.Unmarshal([]byte(mustOK(t, bin(t, dir, "", "task", "scope", "S1-01/T1", "--json")).out), &sc); err != nil {
		t.Fatal(err)
	}
	if sc.InScope || strings.Join(sc.Outside, ",") != "README" || len(sc.Changes) != 2 {
		t.Errorf("scope: %+v", sc)
	}
	human := mustOK(t, bin(t, dir, "", "task", "scope", "S1-01/T1")).out
	if !strings.Contains(human, "! M README") || !strings.Contains(human, "1 of 2 changed paths are outside the scope") {
		t.Errorf("scope (human):\n%s", human)
	}

	var list struct {
		Tasks []taskJSON `json:"tasks"`
	}
	json.Unmarshal([]byte(mustOK(t, bin(t, dir, "", "task", "list", "--json")).out), &list)
	if len(list.Tasks) != 1 || list.Tasks[0].Claim != "held" || list.Tasks[0].Worktree != "ready" {
		t.Errorf("list: %+v", list)
	}

	// Completing with uncommitted work is refused, and the item stays
	// claimed.
	if r := bin(t, dir, "", "task", "complete", "S1-01/T1"); r.code != 1 || !strings.Contains(r.err, "DIRTY_WORKTREE") {
		t.Errorf("complete dirty: %+v", r)
	}
	if s := itemStatus(t, dir, item); s != "in_progress" {
		t.Errorf("after a refused completion the item is %s", s)
	}
	gt.Git(t, st.Path, "checkout", "--", "README")
	gt.Git(t, st.Path, "commit", "-qam", "work")
	// Committed but never passed a gate: refused, naming the gate to run.
	if r := bin(t, dir, "", "task", "complete", "S1-01/T1"); r.code != 1 || !strings.Contains(r.err, "NO_PASS") || !strings.Contains(r.err, "git ideate gate green --task S1-01/T1") {
		t.Errorf("complete without a GREEN PASS: %+v", r)
	}
	if s := itemStatus(t, dir, item); s != "in_progress" {
		t.Errorf("after a completion refused for want of a PASS the item is %s", s)
	}
	storeVerdict(t, dir, "S1-01/T1", "green", "FAIL", gt.Git(t, st.Path, "rev-parse", "HEAD"))
	if r := bin(t, dir, "", "task", "complete", "S1-01/T1"); r.code != 1 || !strings.Contains(r.err, "newest GREEN verdict is FAIL") {
		t.Errorf("complete after a GREEN FAIL: %+v", r)
	}
	storeVerdict(t, dir, "S1-01/T1", "green", "PASS", gt.Git(t, st.Path, "rev-parse", "HEAD"))
	done := parseTask(t, mustOK(t, bin(t, dir, "", "task", "complete", "S1-01/T1", "--note", "green", "--json")).out)
	if done.Status != "completed" || itemStatus(t, dir, item) != "done" {
		t.Errorf("complete: %+v, item %s", done, itemStatus(t, dir, item))
	}
	if _, err := os.Stat(st.Path); !os.IsNotExist(err) {
		t.Errorf("worktree still there: %v", err)
	}
	if out := mustOK(t, bin(t, dir, "", "task", "list")).out; !strings.Contains(out, "(no tasks)") {
		t.Errorf("list after completion:\n%s", out)
	}
	gt.Fsck(t, dir)
}

func TestTask_CLI_LostClaimAndAbandon(t *testing.T) {
	dir := gt.NewRepo(t)
	item := itemID(t, mustOK(t, bin(t, dir, "", "work", "create", "--title", "T", "--spec", "s", "--spec-format", "f", "--human", "h")).out)
	mustOK(t, bin(t, dir, "", "task", "start", "T1", "--item", item, "--human", "alice", "--lease-ms", "50"))
	time.Sleep(200 * time.Millisecond)
	out := mustOK(t, bin(t, dir, "", "task", "list")).out
	if !strings.Contains(out, "CLAIM LOST") {
		t.Errorf("an expired lease is not noticed:\n%s", out)
	}
	ab := mustOK(t, bin(t, dir, "", "task", "abandon", "T1", "--note", "stuck", "--json")).out
	if tj := parseTask(t, ab); tj.Status != "abandoned" {
		t.Errorf("abandon: %s", ab)
	}
	if r := bin(t, dir, "", "task", "abandon", "nope"); r.code != 1 || !strings.Contains(r.err, "NOT_FOUND") {
		t.Errorf("abandon unknown: %+v", r)
	}
	if r := bin(t, dir, "", "task", "start", "../x"); r.code != 1 || !strings.Contains(r.err, "SCHEMA") {
		t.Errorf("bad id: %+v", r)
	}
	// A fresh claim of the item starts the task again on its branch.
	item2 := itemID(t, mustOK(t, bin(t, dir, "", "work", "create", "--title", "T2", "--spec", "s", "--spec-format", "f", "--human", "h")).out)
	mustOK(t, bin(t, dir, "", "task", "start", "T2", "--item", item2, "--human", "carol"))
	mustOK(t, bin(t, dir, "", "task", "release", "T2"))
	if s := itemStatus(t, dir, item2); s != "open" {
		t.Errorf("released item is %s", s)
	}
}

// Four processes run `git ideate task start` on the same item at once: one
// claim wins and creates the worktree; the others are NOT_CLAIMABLE and
// leave nothing.
func TestTask_CLI_ProcessRace(t *testing.T) {
	dir := gt.NewRepo(t)
	for i := 0; i < 200; i++ {
		p := filepath.Join(dir, "d", strings.Repeat("x", i%7+1), "f"+string(rune('a'+i%26))+strings.Repeat("y", i/26)+".txt")
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(p), 0o644)
	}
	gt.Git(t, dir, "add", "-A")
	gt.Git(t, dir, "commit", "-q", "-m", "files")
	item := itemID(t, mustOK(t, bin(t, dir, "", "work", "create", "--title", "T", "--spec", "s", "--spec-format", "f", "--human", "h")).out)
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	for i := 0; i < 4; i++ {
		cmd := exec.Command("git", "ideate", "task", "start", "T1", "--item", item, "--human", "racer-"+string(rune('a'+i)))
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(binPath)+string(os.PathListSeparator)+os.Getenv("PATH"))
		var b strings.Builder
		cmd.Stdout, cmd.Stderr = &b, &b
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, &b)
	}
	won := 0
	for i, cmd := range cmds {
		if err := cmd.Wait(); err == nil {
			won++
		} else if !strings.Contains(outs[i].String(), "NOT_CLAIMABLE") {
			t.Errorf("racer %d: %v\n%s", i, err, outs[i])
		}
	}
	if won != 1 {
		t.Fatalf("%d racers won", won)
	}
	if n := strings.Count(gt.Git(t, dir, "worktree", "list"), "\n") + 1; n != 2 {
		t.Errorf("%d worktrees, want the main one and the winner's", n)
	}
	gt.Fsck(t, dir)
}

// storeVerdict appends a gate verdict for task at commit to the execution
// log, as a gate that judged it would.
func storeVerdict(t *testing.T, dir, task, phase, result, commit string) {
	t.Helper()
	env := &Env{Dir: dir, In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}
	defer env.Close()
	x, err := env.Exec()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.Append(t.Context(), execlog.Entry{Task: task, Attempt: 1, Phase: phase, Event: "verdict", Result: result, Commit: commit}); err != nil {
		t.Fatal(err)
	}
}

// Where there is a plan, task start refuses a task id it does not hold —
// another story's, an unknown task number, a bare T1 — and makes no
// worktree or branch for it; its own tasks start.
func TestTask_CLI_StartRefusesIDsThePlanDoesNotHold(t *testing.T) {
	dir := gt.NewRepo(t)
	src := filepath.Join("..", "..", "internal", "plan", "testdata", "example")
	if out, err := exec.Command("cp", "-r", filepath.Join(src, "docs"), dir).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	gt.Git(t, dir, "add", "-A")
	gt.Git(t, dir, "commit", "-q", "-m", "plan")
	for _, id := range []string{"S2-01/T9", "S1-01/T9", "T1"} {
		r := bin(t, dir, "", "task", "start", id)
		if r.code != 1 || !strings.Contains(r.err, "NOT_FOUND") || !strings.Contains(r.err, "has no task "+id) || !strings.Contains(r.err, "S1-01/T1, S1-01/T2, S1-02/T1") && !strings.Contains(r.err, "S1-01/T1 S1-01/T2 S1-02/T1") {
			t.Errorf("start %s: %+v", id, r)
		}
	}
	if b := gt.Git(t, dir, "branch", "--list"); strings.Count(b, "\n") > 0 || strings.Contains(b, "T9") {
		t.Errorf("branches after refused starts:\n%s", b)
	}
	if _, err := os.Stat(filepath.Join(dir, ".ideate", "worktrees")); err == nil {
		if es, _ := os.ReadDir(filepath.Join(dir, ".ideate", "worktrees")); len(es) > 0 {
			t.Errorf("worktrees after refused starts: %v", es)
		}
	}
	mustOK(t, bin(t, dir, "", "task", "start", "S1-02/T1"))
}

// Without --scope or --test, the task's Files: and declared tests come
// from the sprint's plan.
func TestTask_CLI_ScopeAndTestsFromThePlan(t *testing.T) {
	dir := gt.NewRepo(t)
	src := filepath.Join("..", "..", "internal", "plan", "testdata", "example")
	if out, err := exec.Command("cp", "-r", filepath.Join(src, "docs"), dir).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	gt.Git(t, dir, "add", "-A")
	gt.Git(t, dir, "commit", "-q", "-m", "plan")
	st := parseTask(t, mustOK(t, bin(t, dir, "", "task", "start", "S1-01/T1", "--json")).out)
	if strings.Join(st.Scope, " ") != "strutil/reverse.go strutil/reverse_test.go strutil/imports_test.go" {
		t.Errorf("scope from the plan: %v", st.Scope)
	}
	if len(st.Tests) == 0 || !strings.Contains(strings.Join(st.Tests, " "), "::") {
		t.Errorf("tests from the plan: %v", st.Tests)
	}
}

// A task started again after work was merged on HEAD starts from HEAD:
// HEAD is merged into its branch, so the merged work (its dependencies)
// is in the worktree and the branch only moves forward; a branch with no
// commit of its own just moves. Where the commits conflict with HEAD it continues from its
// old base and says exactly why, naming the file; asked for that base by
// --base, it refuses (BASE_MISMATCH) and leaves no worktree.
func TestTask_CLI_RestartStartsFromTheCurrentBase(t *testing.T) {
	dir := gt.NewRepo(t)
	os.WriteFile(filepath.Join(dir, "shared.go"), []byte("package a\n"), 0o644)
	gt.Git(t, dir, "add", "-A")
	gt.Git(t, dir, "commit", "-qm", "base")
	work := func(task, file, text string) taskJSON {
		st := parseTask(t, mustOK(t, bin(t, dir, "", "task", "start", task, "--scope", "**", "--json")).out)
		os.MkdirAll(filepath.Dir(filepath.Join(st.Path, file)), 0o755)
		os.WriteFile(filepath.Join(st.Path, file), []byte(text), 0o644)
		gt.Git(t, st.Path, "add", "-A")
		gt.Git(t, st.Path, "commit", "-qm", task+" work")
		mustOK(t, bin(t, dir, "", "task", "release", task))
		return st
	}
	clean := work("S1-02/T1", "b/b.go", "package b\n")
	cleanTip := strings.TrimSpace(gt.Git(t, dir, "rev-parse", "ideate/task/S1-02+T1"))
	conflicting := work("S1-02/T2", "shared.go", "package a // T2\n")
	idle := parseTask(t, mustOK(t, bin(t, dir, "", "task", "start", "S1-02/T3", "--json")).out)
	mustOK(t, bin(t, dir, "", "task", "release", "S1-02/T3"))
	// Wave 1 merged on HEAD.
	os.WriteFile(filepath.Join(dir, "shared.go"), []byte("package a // merged\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n"), 0o644)
	gt.Git(t, dir, "add", "-A")
	gt.Git(t, dir, "commit", "-qm", "S1-01 merged")
	head := strings.TrimSpace(gt.Git(t, dir, "rev-parse", "HEAD"))

	r := mustOK(t, bin(t, dir, "", "task", "start", "S1-02/T1", "--json"))
	st := parseTask(t, r.out)
	if st.Base != head || !strings.Contains(st.CNote, "starts from the current base "+head[:12]) {
		t.Fatalf("restart after the merge: base %s (HEAD %s), note %q", st.Base, head, st.CNote)
	}
	for _, f := range []string{"a.go", "b/b.go"} {
		if _, err := os.Stat(filepath.Join(st.Path, f)); err != nil {
			t.Errorf("the restarted worktree lacks %s: %v", f, err)
		}
	}
	if mb := strings.TrimSpace(gt.Git(t, st.Path, "merge-base", "HEAD", head)); mb != head {
		t.Errorf("the branch does not descend from HEAD: merge base %s", mb)
	}
	// Merged, not rebased: the branch only moves forward (other clones
	// may have synced it), keeping its own commit.
	if err := exec.Command("git", "-C", st.Path, "merge-base", "--is-ancestor", cleanTip, "HEAD").Run(); err != nil {
		t.Errorf("the branch did not move forward from %s: %v", cleanTip, err)
	}

	st = parseTask(t, mustOK(t, bin(t, dir, "", "task", "start", "S1-02/T3", "--json")).out)
	if st.Base != head || st.Base == idle.Base || !strings.Contains(st.CNote, "had no commit the base lacks") {
		t.Errorf("a branch with no commits of its own: base %s, note %q", st.Base, st.CNote)
	}

	tipBefore := strings.TrimSpace(gt.Git(t, dir, "rev-parse", "ideate/task/S1-02+T2"))
	st = parseTask(t, mustOK(t, bin(t, dir, "", "task", "start", "S1-02/T2", "--json")).out)
	if st.Base != conflicting.Base || !strings.Contains(st.CNote, "conflict with the current base in shared.go") || !strings.Contains(st.CNote, "git merge "+head[:12]) {
		t.Fatalf("a conflicting restart: base %s, note %q", st.Base, st.CNote)
	}
	if tip := strings.TrimSpace(gt.Git(t, st.Path, "rev-parse", "HEAD")); tip != tipBefore {
		t.Errorf("the conflicting branch moved: %s, was %s", tip, tipBefore)
	}
	if s := strings.TrimSpace(gt.Git(t, st.Path, "status", "--porcelain")); s != "" {
		t.Errorf("the worktree is left mid-rebase: %q", s)
	}
	mustOK(t, bin(t, dir, "", "task", "release", "S1-02/T2"))
	r = bin(t, dir, "", "task", "start", "S1-02/T2", "--base", head)
	if r.code == 0 || !strings.Contains(r.err, "BASE_MISMATCH") || !strings.Contains(r.err, "shared.go") {
		t.Fatalf("--base that conflicts: %d %q", r.code, r.err)
	}
	if _, err := os.Stat(conflicting.Path); !os.IsNotExist(err) {
		t.Errorf("a refused start left its worktree: %v", err)
	}
	_ = clean
}
