package worktree_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/fsmonitor"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/worktree"
)

// monitorMain is the test binary serving a worktree's monitor, as the
// hidden `git ideate fsmonitor` does: --worktree and --base as Start
// appends them, or WORKTREE_TEST_DIR and WORKTREE_TEST_BASE;
// WORKTREE_TEST_QUEUE sets the test queue limit.
func monitorMain() int {
	fs := flag.NewFlagSet("monitor", flag.ContinueOnError)
	dir := fs.String("worktree", os.Getenv("WORKTREE_TEST_DIR"), "")
	base := fs.String("base", os.Getenv("WORKTREE_TEST_BASE"), "")
	var args []string
	for i, a := range os.Args[1:] {
		if strings.HasPrefix(a, "--") {
			args = os.Args[1+i:]
			break
		}
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	g, err := gitstore.Open(*dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "OPEN", err)
		return 2
	}
	defer g.Close()
	h, err := gitstore.ParseHash(*base)
	if err != nil {
		return 2
	}
	if q := os.Getenv("WORKTREE_TEST_QUEUE"); q != "" {
		n, _ := strconv.Atoi(q)
		worktree.MonitorTestHooks.QueueLimit = n
	}
	if d := os.Getenv("WORKTREE_TEST_EVENT_DELAY"); d != "" {
		worktree.MonitorTestHooks.EventDelay, _ = time.ParseDuration(d)
	}
	err = worktree.RunMonitor(context.Background(), g, *dir, h, time.Minute, nil)
	if errors.Is(err, fsmonitor.ErrRunning) {
		return 3
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "MONITOR", err)
		return 1
	}
	return 0
}

// monFixture is a repository with a linked worktree at base, and the
// worktree's monitor as a real process.
type monFixture struct {
	t    *testing.T
	main string
	wt   string
	base string
	h    gitstore.Hash
	g    *gitstore.Store
	mon  *exec.Cmd
	exit chan error
}

func newMonFixture(t *testing.T, files map[string]string, env ...string) *monFixture {
	t.Helper()
	dir, _ := newRepo(t, files)
	base := gt.Git(t, dir, "rev-parse", "HEAD")
	wt := filepath.Join(t.TempDir(), "wt")
	gt.Git(t, dir, "worktree", "add", "-q", "-b", "task", wt, base)
	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	h, _ := gitstore.ParseHash(base)
	f := &monFixture{t: t, main: dir, wt: wt, base: base, h: h, g: g}
	f.startMonitor(env...)
	return f
}

func (f *monFixture) stateDir() string {
	gd, err := gitstore.WorktreeGitDir(f.wt)
	if err != nil {
		f.t.Fatal(err)
	}
	return worktree.MonitorDir(gd)
}

// startMonitor runs the monitor process and waits until it answers.
func (f *monFixture) startMonitor(env ...string) {
	f.t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), "WORKTREE_TEST_ROLE=monitor", "WORKTREE_TEST_DIR="+f.wt, "WORKTREE_TEST_BASE="+f.base), env...)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	exit := make(chan error, 1)
	f.mon, f.exit = cmd, exit
	go func() { exit <- cmd.Wait() }()
	f.t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); <-exit })
	f.waitReady(cmd.Process.Pid)
}

func (f *monFixture) waitReady(pid int) {
	f.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, err := fsmonitor.Ping(ctx, f.stateDir(), time.Second)
		if err == nil {
			if pid != 0 && got != pid {
				f.t.Fatalf("the monitor answering is pid %d, not %d", got, pid)
			}
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("the monitor never answered: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitExit waits for the monitor process to end.
func (f *monFixture) waitExit(what string) {
	f.t.Helper()
	select {
	case <-f.exit:
		f.exit <- nil // for the cleanup
	case <-time.After(10 * time.Second):
		f.t.Fatalf("%s: the monitor is still running", what)
	}
}

func (f *monFixture) write(p, body string) {
	f.t.Helper()
	full := filepath.Join(f.wt, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *monFixture) rm(p string) {
	if err := os.RemoveAll(filepath.Join(f.wt, p)); err != nil {
		f.t.Fatal(err)
	}
}

// check computes the changes both ways and holds them equal (and to what `git add -A`
// would stage); watched says which way worktree.WorktreeChanges must have
// gone.
func (f *monFixture) check(what string, watched bool) *gitstore.Changes {
	f.t.Helper()
	full, err := f.g.WorktreeChanges(ctx, f.h, f.wt)
	if err != nil {
		f.t.Fatalf("%s: full scan: %v", what, err)
	}
	got, err := worktree.WorktreeChanges(ctx, f.g, f.h, f.wt)
	if err != nil {
		f.t.Fatalf("%s: WorktreeChanges: %v", what, err)
	}
	if got.Watched != watched {
		f.t.Errorf("%s: watched = %v, want %v", what, got.Watched, watched)
	}
	if a, b := fmt.Sprintf("%+v", got.List), fmt.Sprintf("%+v", full.List); a != b || got.Head != full.Head {
		f.t.Errorf("%s: the monitor's answer differs from the full scan\n got: %s\nwant: %s", what, a, b)
	}
	if a, b := strings.Join(nameStatus(got), "\n"), strings.Join(f.gitOracle(), "\n"); a != b {
		f.t.Errorf("%s: differs from git add -A; git diff-index --cached --name-status\n got: %q\nwant: %q", what, a, b)
	}
	return got
}

// nameStatus renders net changes as git diff --name-status --no-renames
// lines (a rename is a deletion and an addition; an undone change is none).
func nameStatus(c *gitstore.Changes) []string {
	var out []string
	for _, ch := range c.List {
		switch {
		case ch.Undone:
		case ch.Status == gitstore.Renamed:
			out = append(out, "D "+ch.From, "A "+ch.Path)
		default:
			out = append(out, ch.Status+" "+ch.Path)
		}
	}
	sort.Strings(out)
	return out
}

// gitOracle is what `git add -A` would stage against base, by git: the
// index is copied, `git add -A` runs on the copy, and `git diff-index
// --cached --name-status --no-renames BASE` lists it.
func (f *monFixture) gitOracle() []string {
	f.t.Helper()
	var lines []string
	recs := strings.Split(gt.StagedAgainst(f.t, f.wt, f.base, "--name-status"), "\x00")
	for i := 0; i+1 < len(recs); i += 2 {
		lines = append(lines, recs[i]+" "+recs[i+1])
	}
	sort.Strings(lines)
	return lines
}

var monFiles = map[string]string{
	"a.txt": "a", "b.txt": "b", "run.sh": "echo", "d/x.txt": "x", "d/e/y.txt": "y",
	"keep/z.txt": "z", "f": "file", "g/inside.txt": "dir", "mv/old.txt": "moved content",
	"link-target.txt": "t", ".gitignore": "*.log\n/build/\n!keep.log\n",
	"deep/er/still/file.txt": "deep",
}

// Every kind of change, each queried right after it is made: through the
// monitor and through the full scan, the same answer, and git's.
func TestWorktreeChanges_Monitor_EveryKindBothWays(t *testing.T) {
	f := newMonFixture(t, monFiles)
	if c := f.check("fresh", true); len(c.List) != 0 {
		t.Fatalf("a fresh worktree has changes: %+v", c.List)
	}
	f.write("a.txt", "a edited")
	f.check("edit", true)
	f.rm("b.txt")
	f.check("deletion", true)
	os.Chmod(filepath.Join(f.wt, "run.sh"), 0o755)
	f.check("mode change", true)
	f.write("d/e/new.txt", "new")
	f.check("untracked file in a tracked directory", true)
	f.rm("mv/old.txt")
	f.write("mv/new.txt", "moved content")
	f.check("exact rename", true)
	f.rm("f")
	f.write("f/now.txt", "inside")
	f.rm("g")
	f.write("g", "a file now")
	f.check("file ↔ directory", true)
	f.rm("link-target.txt")
	if err := os.Symlink("a.txt", filepath.Join(f.wt, "link-target.txt")); err != nil {
		t.Fatal(err)
	}
	f.check("file → symlink", true)
	f.write("trace.log", "ignored")
	f.write("keep.log", "re-included")
	f.write("build/out.bin", "in an ignored directory")
	f.check("ignored and re-included", true)
	if err := exec.Command("sh", "-c", "cd "+f.wt+" && mkdir -p a/b/c && echo > a/b/c/f").Run(); err != nil {
		t.Fatal(err)
	}
	f.check("mkdir -p a/b/c && echo > a/b/c/f", true)
	if err := os.Rename(filepath.Join(f.wt, "deep"), filepath.Join(f.wt, "moved-deep")); err != nil {
		t.Fatal(err)
	}
	f.check("a directory moved", true)
	f.write("moved-deep/er/still/later.txt", "after the move")
	f.check("a file in the moved directory", true)
	f.write(".gitignore", "*.log\n/keep/\n")
	f.check(".gitignore changed (the monitor seeds again)", true)
	gt.Git(t, f.wt, "rm", "-q", "--cached", "keep/z.txt")
	f.check("an ignored file untracked (the index only)", true)
	f.write(".gitignore", "*.log\n")
	f.check(".gitignore changed back", true)
	f.write("staged.txt", "staged")
	gt.Git(t, f.wt, "add", "staged.txt")
	f.check("staged", true)
	gt.Git(t, f.wt, "add", "-A")
	gt.Git(t, f.wt, "commit", "-q", "-m", "work")
	f.check("committed", true)
	f.write("a.txt", "a")
	f.write("keep/z.txt", "z edited")
	f.check("committed then undone, and one more edit", true)
	gt.Git(t, f.wt, "reset", "-q", "--hard", f.base)
	gt.Git(t, f.wt, "clean", "-q", "-fd")
	if c := f.check("reset to base", true); len(c.List) != 0 {
		t.Errorf("after reset: %+v", c.List)
	}
}

// A write followed at once by a query is in the answer: the query waits
// for its cookie's event, which comes after the write's.
func TestWorktreeChanges_Monitor_CookieSeesTheLastWrite(t *testing.T) {
	// Each batch of events is read 30ms late: without the cookie the
	// answer would come before the burst's events are in.
	f := newMonFixture(t, map[string]string{"a.txt": "a"}, "WORKTREE_TEST_EVENT_DELAY=30ms")
	for i := 0; i < 10; i++ {
		// A burst of 40 writes, the last one in a new directory: the
		// query comes at once after it.
		var p string
		for j := 0; j < 40; j++ {
			p = fmt.Sprintf("n/%d/f%d-%d.txt", i, i, j)
			if j == 39 {
				p = fmt.Sprintf("n/%d/new/dir/f%d-%d.txt", i, i, j)
			}
			f.write(p, "x")
		}
		c, err := worktree.WorktreeChanges(ctx, f.g, f.h, f.wt)
		if err != nil || !c.Watched {
			t.Fatalf("query %d: watched=%v err=%v", i, c != nil && c.Watched, err)
		}
		if ps := c.Paths(); len(ps) != 40*(i+1) || !strings.Contains(fmt.Sprint(ps), p) {
			t.Fatalf("query right after writing %s: %d paths, want %d: %v", p, len(ps), 40*(i+1), ps)
		}
	}
}

// A monitor killed with SIGKILL: the query falls back to the full scan,
// same answer; what it leaves, git worktree prune removes with the
// worktree.
func TestWorktreeChanges_Monitor_KillNineFallsBack(t *testing.T) {
	f := newMonFixture(t, monFiles)
	f.write("a.txt", "edited")
	f.rm("b.txt")
	f.check("served", true)
	syscall.Kill(-f.mon.Process.Pid, syscall.SIGKILL)
	f.waitExit("SIGKILL")
	f.write("new.txt", "after the kill")
	f.check("killed", false)
	gd, _ := gitstore.WorktreeGitDir(f.wt)
	if _, err := os.Stat(filepath.Join(f.stateDir(), fsmonitor.LockFile)); err != nil {
		t.Fatalf("no lock file left to prune: %v", err)
	}
	// A new monitor takes the lock a dead one left.
	f.startMonitor()
	f.check("restarted", true)
	syscall.Kill(-f.mon.Process.Pid, syscall.SIGKILL)
	f.waitExit("SIGKILL again")
	if err := os.RemoveAll(f.wt); err != nil {
		t.Fatal(err)
	}
	gt.Git(t, f.main, "worktree", "prune")
	if _, err := os.Stat(gd); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("git worktree prune left %s: %v", gd, err)
	}
}

// More events than the (test) queue holds: the monitor ends, the query
// falls back, same answer.
func TestWorktreeChanges_Monitor_OverflowFallsBack(t *testing.T) {
	f := newMonFixture(t, monFiles, "WORKTREE_TEST_QUEUE=20")
	// The burst goes into a directory the monitor already watches: into a
	// new one, the files written before the monitor adds its watch raise
	// no event of their own (its scan finds them), and on a loaded machine
	// that was the whole burst, so nothing overflowed (seen in CI).
	f.write("burst/f00.txt", "x")
	f.check("served", true)
	for i := 1; i < 30; i++ {
		f.write(fmt.Sprintf("burst/f%02d.txt", i), "x")
	}
	f.check("overflowed", false)
	f.waitExit("overflow")
}

// The monitor ends when its worktree is removed.
func TestWorktreeChanges_Monitor_ExitsOnWorktreeRemove(t *testing.T) {
	f := newMonFixture(t, monFiles)
	gt.Git(t, f.main, "worktree", "remove", "--force", f.wt)
	f.waitExit("git worktree remove")
}

// A second monitor of the same worktree ends at once; the first serves on.
func TestWorktreeChanges_Monitor_OnePerWorktree(t *testing.T) {
	f := newMonFixture(t, monFiles)
	first := f.mon.Process.Pid
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "WORKTREE_TEST_ROLE=monitor", "WORKTREE_TEST_DIR="+f.wt, "WORKTREE_TEST_BASE="+f.base)
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("a second monitor: %v, want exit 3 (already running)", err)
	}
	f.waitReady(first)
	// A query against another base is refused: the full scan answers.
	if _, err := fsmonitor.Query(ctx, f.stateDir(), f.wt, strings.Repeat("0", 40), time.Second); !errors.Is(err, fsmonitor.ErrUnavailable) {
		t.Errorf("a query against another base: %v", err)
	}
}

// task start runs the monitor (the command Start is given); a restart
// keeps the one running; abandon stops it.
func TestManager_Start_RunsMonitorAbandonStopsIt(t *testing.T) {
	dir, m := newRepo(t, monFiles)
	t.Setenv("WORKTREE_TEST_ROLE", "monitor") // for the spawned test binary
	m.MonitorCommand = []string{os.Args[0]}
	task := start(t, m, worktree.StartInput{Task: "S1-01/T1", Holder: "h"})
	gd, err := gitstore.WorktreeGitDir(task.Path)
	if err != nil {
		t.Fatal(err)
	}
	f := &monFixture{t: t, main: dir, wt: task.Path, base: task.Base}
	f.waitReady(0)
	pid, err := fsmonitor.Ping(ctx, worktree.MonitorDir(gd), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	start(t, m, worktree.StartInput{Task: "S1-01/T1", Holder: "h"}) // reuse
	time.Sleep(200 * time.Millisecond)                              // the second monitor's try
	if again, err := fsmonitor.Ping(ctx, worktree.MonitorDir(gd), time.Second); err != nil || again != pid {
		t.Fatalf("after a restart the monitor is %d (%v), want %d", again, err, pid)
	}
	if err := os.WriteFile(filepath.Join(task.Path, "a.txt"), []byte("edited"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, _, err := m.Changes(ctx, "S1-01/T1")
	if err != nil || len(c.Path) == 0 {
		t.Fatal(err)
	}
	if _, err := m.Close(ctx, worktree.CloseInput{Task: "S1-01/T1", Status: worktree.StatusAbandoned}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("the monitor %d still runs after abandon", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Random edits, moves, mode changes, stages, commits, checkouts and
// directory moves, queried after each round: the monitor's answer equals
// the full scan's and git's.
func TestWorktreeChanges_Monitor_RandomEditsBothWays(t *testing.T) {
	files := map[string]string{".gitignore": "*.tmp\n"}
	for i := 0; i < 60; i++ {
		files[fmt.Sprintf("d%d/s%d/f%d.txt", i%4, i%3, i)] = fmt.Sprintf("body %d", i)
	}
	f := newMonFixture(t, files)
	rng := rand.New(rand.NewPCG(3, 4))
	paths := func() []string {
		var ps []string
		filepath.Walk(f.wt, func(p string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() && !strings.Contains(p, "/.git") {
				rel, _ := filepath.Rel(f.wt, p)
				ps = append(ps, filepath.ToSlash(rel))
			}
			return nil
		})
		return ps
	}
	for round := 0; round < 30; round++ {
		for op := 0; op < 1+rng.IntN(6); op++ {
			ps := paths()
			p := ps[rng.IntN(len(ps))]
			switch rng.IntN(10) {
			case 0:
				f.write(p, fmt.Sprintf("edit %d", rng.IntN(1000)))
			case 1:
				f.rm(p)
			case 2:
				f.write(fmt.Sprintf("d%d/n%d/x%d.txt", rng.IntN(5), rng.IntN(3), rng.IntN(50)), "new")
			case 3:
				os.Chmod(filepath.Join(f.wt, p), os.FileMode(0o644|0o111*rng.IntN(2)))
			case 4:
				b, _ := os.ReadFile(filepath.Join(f.wt, p))
				f.rm(p)
				f.write("moved/"+filepath.Base(p), string(b))
			case 5:
				gt.Git(t, f.wt, "add", "-A")
			case 6:
				gt.Git(t, f.wt, "add", "-A")
				gt.Git(t, f.wt, "commit", "-q", "--allow-empty", "-m", "r")
			case 7:
				f.write(fmt.Sprintf("x%d.tmp", rng.IntN(9)), "ignored")
			case 8:
				gt.Git(t, f.wt, "checkout", "-q", f.base, "--", ".")
			case 9:
				d := filepath.Dir(p)
				if d != "." {
					os.Rename(filepath.Join(f.wt, d), filepath.Join(f.wt, fmt.Sprintf("mv%d", rng.IntN(4))))
				}
			}
		}
		f.check(fmt.Sprintf("round %d", round), true)
	}
}

// A file ignored through info/exclude when the monitor seeded, then
// un-ignored by an edit of info/exclude: the monitor seeds again.
func TestWorktreeChanges_Monitor_InfoExcludeSeedsAgain(t *testing.T) {
	f := newMonFixture(t, monFiles)
	exclude := filepath.Join(f.main, ".git", "info", "exclude")
	if err := os.WriteFile(exclude, []byte("secret.txt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(-f.mon.Process.Pid, syscall.SIGKILL)
	f.waitExit("SIGKILL")
	f.write("secret.txt", "was ignored")
	f.startMonitor()
	f.check("ignored through info/exclude", true)
	if err := os.WriteFile(exclude, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if c := f.check("info/exclude emptied", true); !strings.Contains(fmt.Sprint(c.Paths()), "secret.txt") {
		t.Errorf("secret.txt is not added: %v", c.Paths())
	}
}
