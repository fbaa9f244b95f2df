package gitstore_test

import (
	"bufio"
	"context"
	"errors"
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
	if d, err := time.ParseDuration(os.Getenv("GITSTORE_TEST_STALE")); err == nil {
		opt.Lock.StaleAfter = d
	}
	s := gitstore.OpenRepo(r, opt)
	defer s.Close()
	switch role {
	case "counter":
		ref := os.Getenv("GITSTORE_TEST_REF")
		for i := 0; i < n; i++ {
			h, err := s.Transact(context.Background(), ref, func(tip gitstore.Hash) (gitstore.Hash, string, error) {
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
			// What this writer saw land, for the parent to check.
			c, err := s.ReadCommit(h)
			if err != nil {
				fmt.Fprintln(os.Stderr, "read landed commit:", err)
				return 1
			}
			parent := ""
			if len(c.Parents) > 0 {
				parent = c.Parents[0].String()
			}
			fmt.Printf("landed %s %s %s\n", h, parent, time.Now().Format("15:04:05.000000"))
			if d, err := time.ParseDuration(os.Getenv("GITSTORE_TEST_PAUSE")); err == nil {
				time.Sleep(d)
			}
		}
		return 0
	case "hold-ref-lock":
		// A git-ideate writer that holds a ref's lock (just before it
		// moves the ref) until this process is killed.
		ref := os.Getenv("GITSTORE_TEST_REF")
		s.TransactGuarded(context.Background(), ref, func(tip gitstore.Hash) (gitstore.Hash, string, []gitstore.Guard, error) {
			tree, err := s.WriteTree(nil)
			return tree, "held\n", []gitstore.Guard{{Ref: ref, Check: func() error {
				fmt.Println("holding")
				time.Sleep(time.Hour)
				return nil
			}}}, err
		})
		return 1
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
	case "delete-ref":
		// Deletes a ref through the store, printing what UpdateRef said.
		old, _ := gitstore.ParseHash(os.Getenv("GITSTORE_TEST_OLD"))
		fmt.Println("deleted:", s.UpdateRef(context.Background(), os.Getenv("GITSTORE_TEST_REF"), gitstore.ZeroHash, old))
		return 0
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

// landing is a commit whose writer saw its compare-and-swap succeed, from
// parent.
type landing struct{ who, commit, parent, at string }

// gitCAS is how the git CLI moves ref from old to new here. It is told
// not to warn of refs named like the object names it is given: that
// check reads packed-refs as it parses its arguments, before it takes the
// ref's lock, and under the lock git 2.39 trusts that copy while a stat
// finds the file's inode, size and times (in seconds) unchanged. A
// `git pack-refs` rewrites packed-refs under a new name, but ext4 hands
// the same two inode numbers out in turn, so two rewrites within the
// second defeat the check, and git swaps from a value the ref no longer
// holds: its own lost update (TestGit_UpdateRefTrustsAnEarlyPackedRefs).
func gitCAS(ref, newH, old string) []string {
	return []string{"-c", "core.warnAmbiguousRefs=false", "update-ref", ref, newH, old}
}

// gitCLIWriter appends commits to ref with the git CLI's own CAS
// (gitCAS), retrying on a lost race, and returns those that landed.
func gitCLIWriter(dir, ref string, n int) ([]landing, error) {
	var landed []landing
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
			if _, err := gt.GitErr(dir, gitCAS(ref, c, old)...); err == nil {
				landed = append(landed, landing{"git-cli", c, tip, time.Now().Format("15:04:05.000000")})
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
// loop runs `git pack-refs --all` and `git gc --auto`: every commit a
// writer saw land is in the chain, the ref is never broken, fsck stays
// clean.
func TestStore_Transact_RaceWithGitProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("process race")
	}
	dir := gt.NewRepo(t)
	gt.Git(t, dir, "config", "gc.auto", "50")
	// git's own updates of the ref (the CLI's, and the locks gc's
	// reflog expiry takes) go to the reflog, printed on a failure.
	gt.Git(t, dir, "config", "core.logAllRefUpdates", "always")
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
		// A stale age of a millisecond: a git holding the ref's lock
		// longer (a starved pack-refs pruning it, the CLI's update-ref)
		// must still never have it broken.
		ps = append(ps, spawn(t, "counter", dir, "GITSTORE_TEST_REF="+ref, "GITSTORE_TEST_N="+strconv.Itoa(each), "GITSTORE_TEST_STALE=1ms"))
	}
	landed, cliErr := gitCLIWriter(dir, ref, cliN)
	for i, p := range ps {
		landed = append(landed, workerLandings(t, i, p)...)
	}
	close(stop)
	wg.Wait()
	if cliErr != nil {
		t.Error(cliErr)
	}
	if packErr != nil {
		t.Error(packErr)
	}
	checkLanded(t, dir, ref, landed)
	if t.Failed() {
		return
	}
	if out := gt.Git(t, dir, "for-each-ref", "--format=%(refname)", "refs/ideate/"); out != ref {
		t.Fatalf("refs after race: %q", out)
	}
	gt.Fsck(t, dir)
}

// workerLandings waits for worker i and returns the commits it saw land.
func workerLandings(t *testing.T, i int, p *proctest.Proc) []landing {
	t.Helper()
	if err := p.WaitErr(); err != nil {
		t.Errorf("worker %d: %v\n%s", i, err, p.Stderr())
	}
	var landed []landing
	for _, line := range p.Lines() {
		l := landing{who: fmt.Sprintf("worker %d", i)}
		if f := strings.Fields(line); len(f) == 4 && f[0] == "landed" {
			l.commit, l.parent, l.at = f[1], f[2], f[3]
		} else if len(f) == 3 && f[0] == "landed" { // the ref's first commit
			l.commit, l.at = f[1], f[2]
		} else {
			continue
		}
		landed = append(landed, l)
	}
	return landed
}

// checkLanded fails the test unless every commit in landed is in ref's
// chain and nothing else is. On a loss it names each lost commit, who
// made it, and what landed from the same parent instead (the two
// compare-and-swaps that both succeeded), with the reflog of git's own
// updates of the ref.
func checkLanded(t *testing.T, dir, ref string, landed []landing) {
	t.Helper()
	chain := map[string]bool{}
	for _, line := range strings.Split(gt.Git(t, dir, "rev-list", ref), "\n") {
		chain[line] = true
	}
	if len(chain) == len(landed) {
		return
	}
	byParent := map[string][]landing{}
	for _, l := range landed {
		byParent[l.parent] = append(byParent[l.parent], l)
	}
	var lost []string
	for _, l := range landed {
		if chain[l.commit] {
			continue
		}
		line := fmt.Sprintf("%s's %.12s from %.12s at %s;", l.who, l.commit, l.parent, l.at)
		also := ""
		for _, o := range byParent[l.parent] {
			if o.commit != l.commit {
				also += fmt.Sprintf(" %s's %.12s at %s (in the chain: %v)", o.who, o.commit, o.at, chain[o.commit])
			}
		}
		if also == "" {
			also = " nothing else landed from that parent (the ref went back past it)"
		} else {
			also = " from that parent also landed" + also
		}
		lost = append(lost, line+also)
	}
	reflog, _ := gt.GitErr(dir, "reflog", "show", "--date=iso", "--format=%h %gd %gs", ref)
	t.Fatalf("chain has %d commits, %d writers saw land (lost updates: %d); the ref's tip %.12s; lost:\n%s\nreflog (git's updates; ours write none):\n%s",
		len(chain), len(landed), len(lost), gt.Git(t, dir, "rev-parse", ref), strings.Join(lost, "\n"), reflog)
}

// A `git pack-refs` that holds a loose ref's lock past the stale age while
// it prunes it (a starved git; here its reference-transaction hook sleeps
// 1.5 s once the lock is taken): writers with the default lock policy wait
// for it, and every commit they saw land stays in the chain. Had they
// broken that lock, git would then delete the loose ref a writer had just
// moved, and the ref would fall back to its older packed value.
func TestStore_Transact_WaitsForASlowPackRefsPrune(t *testing.T) {
	if testing.Short() {
		t.Skip("process race")
	}
	dir := gt.NewRepo(t)
	const ref = "refs/ideate/counter"
	slept := filepath.Join(t.TempDir(), "slept")
	// Twice, so the test stays short.
	hook := "#!/bin/sh\n[ \"$1\" = prepared ] || exit 0\nwhile read old new name; do\n" +
		"  if [ \"$name\" = " + ref + " ] && [ \"$new\" = " + strings.Repeat("0", 40) + " ] && [ \"$(cat " + slept + " 2>/dev/null | wc -l)\" -lt 2 ]; then\n" +
		"    echo >> " + slept + "; sleep 1.5\n  fi\ndone\n"
	if err := os.WriteFile(filepath.Join(dir, ".git", "hooks", "reference-transaction"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	packed := make(chan error, 1)
	go func() {
		var err error
		for {
			select {
			case <-stop:
				packed <- err
				return
			default:
			}
			if out, e := gt.GitErr(dir, "pack-refs", "--all"); e != nil && !strings.Contains(out, "lock") {
				err = fmt.Errorf("git pack-refs: %v %s", e, out)
			}
		}
	}()
	const workers, each = 3, 12
	var ps []*proctest.Proc
	for i := 0; i < workers; i++ {
		// A pause between commits lets pack-refs find the ref still and
		// prune it.
		ps = append(ps, spawn(t, "counter", dir, "GITSTORE_TEST_REF="+ref, "GITSTORE_TEST_N="+strconv.Itoa(each), "GITSTORE_TEST_PAUSE=20ms"))
	}
	var landed []landing
	for i, p := range ps {
		landed = append(landed, workerLandings(t, i, p)...)
	}
	close(stop)
	if err := <-packed; err != nil {
		t.Error(err)
	}
	checkLanded(t, dir, ref, landed)
	if b, _ := os.ReadFile(slept); len(b) == 0 {
		t.Fatal("no pack-refs pruned the ref while the writers ran: the test shows nothing")
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

// gitHoldingLock starts `git update-ref --stdin` on dir with the commands
// in script and waits until git says "prepare: ok": from then on git holds
// the lock of every ref the script names (and its commit acts on what it
// checked under them) until commit is written to the returned pipe.
func gitHoldingLock(t *testing.T, dir, script string) (commit func() error) {
	t.Helper()
	cmd := gitstore.Command(t.Context(), "git", "-C", dir, "update-ref", "--stdin")
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	fmt.Fprintf(in, "start\n%sprepare\n", script)
	sc := bufio.NewScanner(out)
	for sc.Scan() && sc.Text() != "prepare: ok" {
	}
	if sc.Text() != "prepare: ok" {
		t.Fatalf("git never prepared: %s", stderr.String())
	}
	return func() error {
		fmt.Fprintf(in, "commit\n")
		in.Close()
		for sc.Scan() {
		}
		if err := cmd.Wait(); err != nil {
			return fmt.Errorf("git commit: %v %s", err, stderr.String())
		}
		return nil
	}
}

// A git process may hold a ref's lock as long as it likes (`git pack-refs`
// holds each loose ref's lock while it prunes it, a slow or stopped git
// longer), and git never breaks another's lock: an update that broke it
// would land, and git's commit would then undo it (here the delete, in
// pack-refs the unlink of the loose ref) while its writer believed it had
// succeeded. However old git's lock, the update waits for it and then
// loses its compare-and-swap to what git did.
func TestStore_UpdateRef_WaitsForALiveGitLock(t *testing.T) {
	dir := gt.NewRepo(t)
	s := open(t, dir)
	const ref = "refs/ideate/held"
	c1 := commit(t, s, "one", gitstore.ZeroHash)
	c2 := commit(t, s, "two", c1)
	if err := s.UpdateRef(t.Context(), ref, c1, gitstore.ZeroHash); err != nil {
		t.Fatal(err)
	}
	commitGit := gitHoldingLock(t, dir, fmt.Sprintf("delete %s %s\n", ref, c1))
	s = openWithLock(t, dir, gitstore.LockPolicy{Timeout: 20 * time.Second, StaleAfter: 50 * time.Millisecond})
	time.Sleep(200 * time.Millisecond) // git's lock is older than the stale age now
	errc := make(chan error, 1)
	go func() { errc <- s.UpdateRef(context.Background(), ref, c2, c1) }()
	time.Sleep(500 * time.Millisecond)
	if err := commitGit(); err != nil {
		t.Fatal(err)
	}
	err := <-errc
	got, _ := gt.GitErr(dir, "rev-parse", "-q", "--verify", ref)
	if err == nil {
		t.Fatalf("UpdateRef %s → %s reported success, and the ref holds %q: it broke git's live lock (a lost update)", c1, c2, got)
	}
	if !errors.Is(err, gitstore.ErrStale) {
		t.Fatalf("UpdateRef after git deleted the ref: %v, want a lost compare-and-swap (ErrStale)", err)
	}
	if got != "" {
		t.Fatalf("the ref holds %s after git deleted it", got)
	}
}

// git update-ref trusts a copy of packed-refs it read before it took the
// ref's lock while a stat finds the file unchanged (inode, size, and times
// in whole seconds); what reads it that early is the check that no ref is
// named like an object name among its arguments (core.warnAmbiguousRefs).
// With that check off it reads packed-refs under the lock, and its
// compare-and-swap holds. Here packed-refs changes in place keeping its
// stat, as two `git pack-refs` within one second on ext4 (which hands out
// two inode numbers in turn) leave it; the ref is packed only.
func TestGit_UpdateRefReadsPackedRefsUnderItsLock(t *testing.T) {
	dir := gt.NewRepo(t)
	a := gt.Git(t, dir, "rev-parse", "HEAD")
	b := gt.Git(t, dir, "commit-tree", "-p", a, "-m", "b", a+"^{tree}")
	c := gt.Git(t, dir, "commit-tree", "-p", a, "-m", "c", a+"^{tree}")
	const ref = "refs/ideate/packed"
	packed := filepath.Join(dir, ".git", "packed-refs")
	for _, warn := range []string{"true", "false"} {
		time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 20*time.Millisecond)))
		gt.Git(t, dir, "update-ref", ref, a)
		gt.Git(t, dir, "pack-refs", "--all")
		before, err := os.Stat(packed)
		if err != nil {
			t.Fatal(err)
		}
		cmd := gitstore.Command(t.Context(), "git", "-C", dir, "-c", "core.warnAmbiguousRefs="+warn, "update-ref", "--stdin")
		in, _ := cmd.StdinPipe()
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(in, "start\nupdate %s %s %s\n", ref, b, a)
		time.Sleep(100 * time.Millisecond) // git has parsed the update
		data, _ := os.ReadFile(packed)
		f, err := os.OpenFile(packed, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte(strings.Replace(string(data), a+" "+ref, c+" "+ref, 1)))
		f.Close()
		os.Chtimes(packed, before.ModTime(), before.ModTime())
		if now, _ := os.Stat(packed); !os.SameFile(before, now) || now.Size() != before.Size() || now.ModTime().Unix() != before.ModTime().Unix() {
			t.Fatal("packed-refs did not keep its stat")
		}
		if got := gt.Git(t, dir, "rev-parse", ref); got != c {
			t.Fatalf("the ref holds %s, want %s", got, c)
		}
		fmt.Fprintf(in, "prepare\ncommit\n")
		in.Close()
		err = cmd.Wait()
		got := gt.Git(t, dir, "rev-parse", ref)
		t.Logf("core.warnAmbiguousRefs=%s: git's swap %.7s → %.7s of a ref at %.7s: %v, the ref holds %.7s\n%s", warn, a, b, c, err, got, out.String())
		if warn == "false" && (err == nil || got != c) {
			t.Fatalf("git swapped from a value the ref no longer held (%v), the ref holds %s, want %s", err, got, c)
		}
	}
}
