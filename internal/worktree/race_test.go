package worktree_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/worktree"
)

// TestMain lets the test binary act as a process starting a task: the
// races are between real OS processes.
func TestMain(m *testing.M) {
	if role := os.Getenv("WORKTREE_TEST_ROLE"); role != "" {
		os.Exit(helperMain(role))
	}
	os.Exit(m.Run())
}

func helperMain(role string) int {
	g, err := gitstore.Open(os.Getenv("WORKTREE_TEST_DIR"))
	if err != nil {
		fmt.Println("OPEN", err)
		return 2
	}
	defer g.Close()
	m := worktree.Open(g)
	switch role {
	case "start":
		token, _ := strconv.ParseInt(os.Getenv("WORKTREE_TEST_TOKEN"), 10, 64)
		_, err := m.Start(context.Background(), worktree.StartInput{Task: os.Getenv("WORKTREE_TEST_TASK"),
			Holder: os.Getenv("WORKTREE_TEST_HOLDER"), Token: token, Role: "green-worker"})
		if err != nil {
			fmt.Println(apperr.CodeOf(err), apperr.Message(err))
			return 1
		}
		fmt.Println("OK")
		return 0
	}
	return 2
}

func spawnStart(t *testing.T, dir, task, holder string, token int64) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "WORKTREE_TEST_ROLE=start", "WORKTREE_TEST_DIR="+dir, "WORKTREE_TEST_TASK="+task,
		"WORKTREE_TEST_HOLDER="+holder, "WORKTREE_TEST_TOKEN="+strconv.FormatInt(token, 10))
	cmd.Stderr = os.Stderr
	return cmd
}

// background runs git gc and git worktree prune in loops until stop.
func background(t *testing.T, dir string) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for _, args := range [][]string{{"gc", "--quiet"}, {"worktree", "prune"}, {"pack-refs", "--all"}} {
		wg.Add(1)
		go func(args []string) {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				gt.GitErr(dir, args...) // a gc racing another may refuse; that is fine
				time.Sleep(5 * time.Millisecond)
			}
		}(args)
	}
	var once sync.Once
	return func() { once.Do(func() { close(done); wg.Wait() }) }
}

func bigRepo(t *testing.T, files int) (string, *worktree.Manager) {
	t.Helper()
	fs := map[string]string{}
	for i := 0; i < files; i++ {
		fs[fmt.Sprintf("d%02d/f%04d.txt", i%40, i)] = strings.Repeat(fmt.Sprintf("line %d\n", i), 20)
	}
	return newRepo(t, fs)
}

// Eight processes start the same task under different holders (no board:
// the same zero token) while git gc, git worktree prune and pack-refs run
// beside: exactly one wins, the others are TASK_TAKEN, and the worktree
// is whole.
func TestManager_Start_ProcessRace(t *testing.T) {
	dir, m := bigRepo(t, 400)
	for round := 0; round < 3; round++ {
		task := fmt.Sprintf("S1/T%d", round)
		stop := background(t, dir)
		var cmds []*exec.Cmd
		var outs []*strings.Builder
		for i := 0; i < 8; i++ {
			cmd := spawnStart(t, dir, task, fmt.Sprintf("worker-%d", i), 0)
			var b strings.Builder
			cmd.Stdout = &b
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			cmds, outs = append(cmds, cmd), append(outs, &b)
		}
		won, taken := 0, 0
		for i, cmd := range cmds {
			cmd.Wait()
			out := strings.TrimSpace(outs[i].String())
			switch {
			case out == "OK":
				won++
			case strings.HasPrefix(out, string(worktree.Taken)):
				taken++
			default:
				t.Errorf("round %d worker %d: %q", round, i, out)
			}
		}
		stop()
		if won != 1 || taken != 7 {
			t.Fatalf("round %d: %d won, %d taken; want 1 and 7", round, won, taken)
		}
		c, err := m.Contract(task)
		if err != nil || !strings.HasPrefix(c.Holder, "worker-") {
			t.Fatalf("contract %+v %v", c, err)
		}
		if st := gt.Git(t, c.Path, "status", "--porcelain"); st != "" {
			t.Errorf("round %d: the winner's worktree is not whole:\n%s", round, st)
		}
	}
	gt.Fsck(t, dir)
}

// A process starting a task is killed with SIGKILL at random points of the
// creation, beside git gc and git worktree prune. After each kill `git
// worktree prune` runs cleanly and the next Start repairs whatever was
// left: a whole worktree at the base, one contract, no lock left behind.
func TestManager_Start_KillNine(t *testing.T) {
	const files = 500
	dir, m := bigRepo(t, files)
	base := gt.Git(t, dir, "rev-parse", "HEAD")
	stop := background(t, dir)
	defer stop()
	rng := rand.New(rand.NewPCG(7, uint64(time.Now().UnixNano())))
	const rounds = 8
	// How long one uninterrupted start takes here, so the kills land
	// inside it however fast or loaded the machine is.
	t0 := time.Now()
	if out, err := spawnStart(t, dir, "timing", "victim", 0).Output(); err != nil {
		t.Fatalf("a start to time: %v\n%s", err, out)
	}
	whole := time.Since(t0)
	killedMidway, lockedLeft := 0, 0
	for round := 0; round < rounds; round++ {
		task := fmt.Sprintf("K%d", round)
		cmd := spawnStart(t, dir, task, "victim", 0)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		var out strings.Builder
		cmd.Stdout = &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Most kills land inside the start (process start-up included),
		// a few after it.
		time.Sleep(time.Duration(rng.Int64N(int64(whole) * 11 / 10)))
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		if strings.TrimSpace(out.String()) != "OK" {
			killedMidway++
		}
		if out, err := gt.GitErr(dir, "worktree", "prune"); err != nil {
			t.Fatalf("round %d: git worktree prune after the kill: %v\n%s", round, err, out)
		}
		if strings.Contains(gt.Git(t, dir, "worktree", "list", "--porcelain"), "initializing") {
			lockedLeft++
		}
		task2, err := m.Start(ctx, worktree.StartInput{Task: task, Holder: "victim", Role: "green-worker"})
		if err != nil {
			t.Fatalf("round %d: Start after the kill: %v", round, err)
		}
		if got := gt.Git(t, task2.Path, "rev-parse", "HEAD"); got != base {
			t.Errorf("round %d: HEAD %s, want %s", round, got, base)
		}
		if st := gt.Git(t, task2.Path, "status", "--porcelain"); st != "" {
			t.Fatalf("round %d: repaired worktree not whole:\n%s", round, st)
		}
		if _, err := os.Stat(filepath.Join(task2.Path, fmt.Sprintf("d%02d", (files-1)%40), fmt.Sprintf("f%04d.txt", files-1))); err != nil {
			t.Errorf("round %d: %v", round, err)
		}
		if l := gt.Git(t, dir, "worktree", "list", "--porcelain"); strings.Contains(l, "locked") {
			t.Errorf("round %d: a lock outlived the repair:\n%s", round, l)
		}
	}
	stop()
	t.Logf("%d of %d starts killed before they finished; %d left a worktree git's prune cannot clean (repaired by Start)", killedMidway, rounds, lockedLeft)
	if killedMidway == 0 {
		t.Error("no kill landed during a start; the test proves nothing")
	}
	gt.Fsck(t, dir)
}
