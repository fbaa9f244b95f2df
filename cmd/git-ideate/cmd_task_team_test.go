package main

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/teamsync/teamsynctest"
)

// teamRemote is a bare remote with one commit on main, reached as url
// (the path itself, or a smart-HTTP URL), and two clones of it that claim
// through it (ideate.remote).
func teamRemote(t testing.TB, overHTTP bool) (bare, a, b string) {
	t.Helper()
	seed := gt.NewRepo(t)
	bare = filepath.Join(t.TempDir(), "remote.git")
	gt.Git(t, seed, "init", "-q", "--bare", bare)
	gt.Git(t, seed, "push", "-q", bare, "HEAD:refs/heads/main")
	url := bare
	if overHTTP {
		url = teamsynctest.ServeBare(t, bare)
	}
	for _, d := range []*string{&a, &b} {
		*d = filepath.Join(t.TempDir(), "clone")
		if out, err := exec.Command("git", "clone", "-q", url, *d).CombinedOutput(); err != nil {
			t.Fatalf("clone: %v\n%s", err, out)
		}
		gt.Git(t, *d, "config", "ideate.remote", "origin")
	}
	return bare, a, b
}

// ideateCmd is `git ideate args…` in dir as a process of its own group.
func ideateCmd(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("git", append([]string{"ideate"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(binPath)+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// leftBehind lists what a task start left in clone dir for task: its
// contract ref, branch, worktree, start intent.
func leftBehind(t *testing.T, dir, task string) []string {
	t.Helper()
	s := strings.ReplaceAll(task, "/", "+")
	var got []string
	for _, ref := range []string{"refs/ideate/tasks/" + s, "refs/heads/ideate/task/" + s} {
		if _, err := gt.GitErr(dir, "rev-parse", "-q", "--verify", ref); err == nil {
			got = append(got, ref)
		}
	}
	for _, p := range []string{filepath.Join(dir, ".ideate", "worktrees", s), filepath.Join(dir, ".git", "ideate", "starting", s+".json")} {
		if _, err := os.Stat(p); err == nil {
			got = append(got, p)
		}
	}
	return got
}

// teamItems creates n items in a and brings them to the remote and to b.
func teamItems(t testing.TB, a, b string, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = itemID(t, mustOK(t, bin(t, a, "", "work", "create", "--title", "task", "--spec", "s", "--spec-format", "f", "--human", "h")).out)
	}
	mustOK(t, bin(t, a, "", "sync"))
	mustOK(t, bin(t, b, "", "sync"))
	return ids
}

// raceTaskStarts: two clones start the same task on the same item at
// once, rounds times; exactly one wins each round, the loser is told
// NOT_CLAIMABLE naming the winner and keeps nothing of the task.
func raceTaskStarts(t *testing.T, overHTTP bool, rounds int) {
	bare, a, b := teamRemote(t, overHTTP)
	ids := teamItems(t, a, b, rounds)
	for i, id := range ids {
		task := "S1-01/T" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		var cmds [2]*exec.Cmd
		var outs, errs [2]bytes.Buffer
		for k, who := range []string{"alice", "bob"} {
			dir := []string{a, b}[k]
			cmds[k] = ideateCmd(dir, "task", "start", task, "--item", id, "--human", who, "--scope", "x/**", "--json")
			cmds[k].Stdout, cmds[k].Stderr = &outs[k], &errs[k]
		}
		// Start both, then wait for both: the two pushes meet at the remote.
		for _, c := range cmds {
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
		}
		var codes [2]int
		for k, c := range cmds {
			c.Wait()
			codes[k] = c.ProcessState.ExitCode()
		}
		win := -1
		switch {
		case codes[0] == 0 && codes[1] != 0:
			win = 0
		case codes[1] == 0 && codes[0] != 0:
			win = 1
		default:
			t.Fatalf("round %d: exit codes %v, want exactly one winner\nalice: %s%s\nbob: %s%s", i, codes, outs[0].String(), errs[0].String(), outs[1].String(), errs[1].String())
		}
		lose := 1 - win
		winner := []string{"alice", "bob"}[win]
		if e := errs[lose].String(); !strings.Contains(e, "NOT_CLAIMABLE") || !strings.Contains(e, winner) {
			t.Fatalf("round %d: the loser was told %q, want NOT_CLAIMABLE naming %s", i, e, winner)
		}
		loser := []string{a, b}[lose]
		if left := leftBehind(t, loser, task); len(left) > 0 {
			t.Fatalf("round %d: the loser left %v", i, left)
		}
		// The loser's copy of the item is the remote's: the winner's claim.
		if mine, theirs := gt.Git(t, loser, "rev-parse", "refs/ideate/board/items/"+id), gt.Git(t, bare, "rev-parse", "refs/ideate/board/items/"+id); mine != theirs {
			t.Fatalf("round %d: the loser's item ref %s is not the remote's %s", i, mine, theirs)
		}
		if st := parseTask(t, outs[win].String()); st.Holder != winner {
			t.Fatalf("round %d: the winner's task is held by %q", i, st.Holder)
		}
	}
	gt.Fsck(t, bare)
}

func TestTaskStart_RaceThroughBareRemote(t *testing.T)       { raceTaskStarts(t, false, 20) }
func TestTaskStart_RaceThroughSmartHTTP(t *testing.T)        { raceTaskStarts(t, true, 20) }
func TestTaskStart_KilledResumesAtOnceBare(t *testing.T)     { killTaskStarts(t, false, 10) }
func TestTaskStart_KilledResumesAtOnceOverHTTP(t *testing.T) { killTaskStarts(t, true, 30) }

// killTaskStarts kills a task start (kill -9 of its whole process group)
// at a random point of its run, rounds times; each time the same actor's
// next start succeeds at once (the lease is 4 h: waiting it out is not
// possible here), and a release then frees the item for the next round.
// Every third round the kill is followed by `task release` instead, which
// must free the item at once too.
func killTaskStarts(t *testing.T, overHTTP bool, rounds int) {
	bare, a, b := teamRemote(t, overHTTP)
	id := teamItems(t, a, b, 1)[0]
	const task = "S1-01/T1"
	start := func() *exec.Cmd {
		return ideateCmd(a, "task", "start", task, "--item", id, "--human", "alice", "--scope", "x/**", "--json")
	}
	// How long a whole start takes here (the fastest of three, so a cold
	// first run does not stretch it): the kills land inside it.
	whole := time.Hour
	for range 3 {
		t0 := time.Now()
		mustOK(t, runProcess(t, start(), ""))
		whole = min(whole, time.Since(t0))
		mustOK(t, bin(t, a, "", "task", "release", task))
	}
	t.Logf("a whole task start takes %v", whole)
	killed, tookUp := 0, 0
	for i := 0; i < rounds; i++ {
		c := start()
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rand.Int64N(int64(whole))))
		syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		c.Wait()
		if ws, ok := c.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			killed++ // it had not finished
		}
		if i%3 == 2 {
			r := bin(t, a, "", "task", "release", task)
			if r.code != 0 && !strings.Contains(r.err, "NOT_FOUND") {
				t.Fatalf("round %d: release after the kill: %+v", i, r)
			}
			// Nothing is held now: the other clone can take the item at once.
			if st := itemStatusRemote(t, b, id); st != "open" {
				t.Fatalf("round %d: after the release the item is %s at the remote\nrelease: %+v\nitem in a: %s", i, st, r, bin(t, a, "", "work", "get", "--id", id).out)
			}
			continue
		}
		r := bin(t, a, "", "task", "start", task, "--item", id, "--human", "alice", "--scope", "x/**", "--json")
		if r.code != 0 {
			intent, _ := os.ReadFile(filepath.Join(a, ".git", "ideate", "starting", "S1-01+T1.json"))
			t.Fatalf("round %d: the start after a kill failed: %+v\nleft: %v\nintent: %s\nitem: %s\ntask: %s", i, r, leftBehind(t, a, task), intent,
				bin(t, a, "", "work", "get", "--id", id).out, bin(t, a, "", "task", "list", "--all").out)
		}
		if strings.Contains(r.out, "did not finish") {
			tookUp++
		}
		mustOK(t, bin(t, a, "", "task", "release", task))
	}
	t.Logf("%d of %d starts were killed while running; %d later starts took up a claim the killed one left", killed, rounds, tookUp)
	if rounds >= 30 && tookUp == 0 {
		t.Fatal("no kill landed between a claim and its contract: the test did not test recovery")
	}
	gt.Fsck(t, a)
	gt.Fsck(t, bare)
}

// itemStatusRemote is the item's status as the remote has it, read in
// clone dir after a sync.
func itemStatusRemote(t *testing.T, dir, id string) string {
	t.Helper()
	mustOK(t, bin(t, dir, "", "sync"))
	var it struct {
		Status string `json:"status"`
	}
	json.Unmarshal([]byte(mustOK(t, bin(t, dir, "", "work", "get", "--id", id)).out), &it)
	return it.Status
}

// boardItems is every item of clone dir's board: id → title.
func boardItems(t *testing.T, dir string) map[string]string {
	t.Helper()
	var page struct {
		Items []struct {
			ID    string `json:"id"`
			Title string `json:"title"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(mustOK(t, bin(t, dir, "", "work", "list", "--json", "--limit", "500")).out), &page); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, it := range page.Items {
		out[it.ID] = it.Title
	}
	return out
}

// The same plan imported on two clones before they sync is one board
// after the sync (through smart HTTP): one item per story and task, no
// transition lost, and importing again is a no-op on either clone.
func TestPlanImport_TwoClonesOneBoard(t *testing.T) {
	_, a, b := teamRemote(t, true)
	for _, d := range []string{a, b} {
		copyExample(t, d)
		gt.Git(t, d, "add", "-A")
		gt.Git(t, d, "commit", "-q", "-m", "plan")
	}
	for _, d := range []string{a, b} {
		if out := mustOK(t, bin(t, d, "", "plan", "import", "--human", filepath.Base(filepath.Dir(d)))).out; !strings.Contains(out, "5 created") {
			t.Fatalf("import in %s: %s", d, out)
		}
	}
	for _, d := range []string{a, b, a} {
		var sum struct {
			Lost []any `json:"lost"`
		}
		json.Unmarshal([]byte(mustOK(t, bin(t, d, "", "sync", "--json")).out), &sum)
		if len(sum.Lost) != 0 {
			t.Fatalf("the sync lost transitions: %+v", sum.Lost)
		}
	}
	ia, ib := boardItems(t, a), boardItems(t, b)
	if len(ia) != 5 || len(ib) != 5 {
		t.Fatalf("after the sync: %d items in a, %d in b, want 5 each (2 stories, 3 tasks)\na: %v\nb: %v", len(ia), len(ib), ia, ib)
	}
	for id, title := range ia {
		if ib[id] != title {
			t.Fatalf("item %s is %q in a, %q in b", id, title, ib[id])
		}
	}
	for _, d := range []string{a, b} {
		if out := mustOK(t, bin(t, d, "", "plan", "import", "--human", "again")).out; !strings.Contains(out, "0 created, 0 updated, 0 cancelled, 5 unchanged") {
			t.Fatalf("re-import after the sync: %s", out)
		}
	}
	gt.Fsck(t, a)
}
