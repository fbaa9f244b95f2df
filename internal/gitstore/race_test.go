package gitstore_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/proctest"
)

// TestMain lets the test binary act as a worker process: real OS processes
// race each other, not goroutines.
func TestMain(m *testing.M) { proctest.Main(m, helperMain) }

func helperMain(role string) int {
	dir := os.Getenv("GITSTORE_TEST_DIR")
	n, _ := strconv.Atoi(os.Getenv("GITSTORE_TEST_N"))
	r, err := gitstore.Discover(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	opt := gitstore.DefaultOptions()
	s := gitstore.OpenRepo(r, opt)
	defer s.Close()
	switch role {
	case "counter":
		ref := os.Getenv("GITSTORE_TEST_REF")
		for i := 0; i < n; i++ {
			_, err := s.Transact(context.Background(), ref, func(tip gitstore.Hash) (gitstore.Hash, string, error) {
				blob, err := s.WriteBlob([]byte(fmt.Sprintf("%d %d", os.Getpid(), i)))
				if err != nil {
					return gitstore.ZeroHash, "", err
				}
				tree, err := s.WriteTree([]gitstore.TreeEntry{{Mode: gitstore.ModeFile, Name: "n", Hash: blob}})
				return tree, fmt.Sprintf("pid %d seq %d\n", os.Getpid(), i), err
			})
			if err != nil {
				fmt.Fprintln(os.Stderr, "transact:", err)
				return 1
			}
		}
		return 0
	case "hold-delete":
		// A git deleting a packed ref, stopped between prepare and commit
		// (it holds packed-refs.lock), until this process is killed.
		cmd := gitstore.Command(context.Background(), "git", "--git-dir="+r.CommonDir, "update-ref", "--stdin")
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "start:", err)
			return 1
		}
		fmt.Fprintf(in, "start\ndelete %s\nprepare\n", os.Getenv("GITSTORE_TEST_REF"))
		sc := bufio.NewScanner(out)
		for sc.Scan() && sc.Text() != "prepare: ok" {
		}
		if sc.Text() != "prepare: ok" {
			fmt.Fprintln(os.Stderr, "git never said prepare: ok")
			return 1
		}
		fmt.Printf("git %d prepared\n", cmd.Process.Pid)
		time.Sleep(time.Hour)
		return 1
	case "loose":
		// One object outside any transaction: a loose object.
		if _, err := s.WriteBlob([]byte(fmt.Sprintf("loose %d", os.Getpid()))); err != nil {
			fmt.Fprintln(os.Stderr, "write:", err)
			return 1
		}
		return 0
	}
	return 2
}

func spawn(t *testing.T, role, dir string, env ...string) *proctest.Proc {
	t.Helper()
	return proctest.Start(t, proctest.Spec{Role: role, Env: append([]string{"GITSTORE_TEST_DIR=" + dir}, env...)})
}

// gitCLIWriter appends commits to ref with the git CLI's own CAS
// (`update-ref ref new old`), retrying on a lost race, and returns how many
// landed.
func gitCLIWriter(dir, ref string, n int) (int, error) {
	landed := 0
	for i := 0; i < n; i++ {
		for attempt := 0; ; attempt++ {
			tip, _ := gt.GitErr(dir, "rev-parse", "-q", "--verify", ref)
			args := []string{"commit-tree", "4b825dc642cb6eb9a060e54bf8d69288fbee4904", "-m", fmt.Sprintf("git-cli seq %d", i)}
			if tip != "" {
				args = append(args, "-p", tip)
			}
			c, err := gt.GitErr(dir, args...)
			if err != nil && strings.Contains(c, "unable to create temporary file") && attempt < 50 {
				// git against git: commit-tree writes a loose object into
				// objects/<xx>/, making the directory once when it is
				// missing, while the git gc of the loop below runs
				// prune-packed, which removes every objects/<xx>/ it
				// leaves empty. When that happens between the mkdir and
				// the create, commit-tree fails with ENOENT (seen in CI);
				// our writers are not in that race.
				continue
			}
			if err != nil {
				return landed, fmt.Errorf("commit-tree: %v %s", err, c)
			}
			old := tip
			if old == "" {
				old = strings.Repeat("0", 40)
			}
			if _, err := gt.GitErr(dir, "update-ref", ref, c, old); err == nil {
				landed++
				break
			}
			if attempt > 500 {
				return landed, fmt.Errorf("git update-ref kept failing")
			}
			time.Sleep(time.Millisecond)
		}
	}
	return landed, nil
}

// Eight worker processes and the git CLI append to one ref while another
// loop runs `git pack-refs --all` and `git gc --auto`: no update is lost,
// the ref is never broken, fsck stays clean.
func TestStore_Transact_RaceWithGitProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("process race")
	}
	dir := gt.NewRepo(t)
	gt.Git(t, dir, "config", "gc.auto", "50")
	const ref = "refs/ideate/counter"
	const workers, each, cliN = 8, 40, 30
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var packErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			args := []string{"pack-refs", "--all"}
			if i%5 == 4 {
				args = []string{"gc", "--auto", "--quiet"}
			}
			if out, err := gt.GitErr(dir, args...); err != nil && !strings.Contains(out, "lock") {
				packErr = fmt.Errorf("git %v: %v %s", args, err, out)
			}
		}
	}()
	var ps []*proctest.Proc
	for i := 0; i < workers; i++ {
		ps = append(ps, spawn(t, "counter", dir, "GITSTORE_TEST_REF="+ref, "GITSTORE_TEST_N="+strconv.Itoa(each)))
	}
	cliLanded, cliErr := gitCLIWriter(dir, ref, cliN)
	for _, p := range ps {
		if err := p.WaitErr(); err != nil {
			t.Errorf("worker: %v\n%s", err, p.Stderr())
		}
	}
	close(stop)
	wg.Wait()
	if cliErr != nil {
		t.Fatal(cliErr)
	}
	if packErr != nil {
		t.Fatal(packErr)
	}
	want := workers*each + cliLanded
	got, _ := strconv.Atoi(gt.Git(t, dir, "rev-list", "--count", ref))
	if got != want {
		// Who lost: each worker's commits carry its pid, the CLI's "git-cli".
		per := map[string]int{}
		for _, subj := range strings.Split(gt.Git(t, dir, "log", "--format=%s", ref), "\n") {
			f := strings.Fields(subj)
			per[strings.Join(f[:min(2, len(f))], " ")]++
		}
		t.Fatalf("chain has %d commits, want %d (lost updates); commits by writer %v, the CLI landed %d", got, want, per, cliLanded)
	}
	if out := gt.Git(t, dir, "for-each-ref", "--format=%(refname)", "refs/ideate/"); out != ref {
		t.Fatalf("refs after race: %q", out)
	}
	gt.Fsck(t, dir)
}

// A git child that changes refs dies with its parent so that it cleans
// up: killed outright (SIGKILL) in the middle of a ref deletion it would
// leave packed-refs.lock, and every later deletion in the repository
// would fail until someone removed it. Here the parent process is killed
// while its git holds the lock; the lock must be gone with the git.
func TestCommand_GitKilledWithItsParentLeavesNoLock(t *testing.T) {
	dir := gt.NewRepo(t)
	gt.Git(t, dir, "update-ref", "refs/ideate/x", "HEAD")
	gt.Git(t, dir, "pack-refs", "--all")
	p := spawn(t, "hold-delete", dir, "GITSTORE_TEST_REF=refs/ideate/x")
	lock := filepath.Join(dir, ".git", "packed-refs.lock")
	var git int
	for deadline := time.Now().Add(20 * time.Second); git == 0; time.Sleep(10 * time.Millisecond) {
		fmt.Sscanf(p.Output(), "git %d prepared", &git)
		if time.Now().After(deadline) {
			t.Fatalf("the helper's git never prepared: %s %s", p.Output(), p.Stderr())
		}
	}
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("git holds no packed-refs.lock while it deletes a packed ref: %v\n%s", err, p.Stderr())
	}
	p.Kill()
	for deadline := time.Now().Add(10 * time.Second); proctest.Alive(git); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the git child outlived its parent")
		}
	}
	if _, err := os.Stat(lock); err == nil {
		t.Fatal("the git child killed with its parent left packed-refs.lock")
	}
	if got := gt.Git(t, dir, "rev-parse", "-q", "--verify", "refs/ideate/x"); got == "" {
		t.Fatal("the deletion went through though it was never committed")
	}
}
