package gitstore

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

func writeGCPid(t *testing.T, commonDir string, pid int, host string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(commonDir, "gc.pid"), []byte(fmt.Sprintf("%d %s", pid, host)), 0o666); err != nil {
		t.Fatal(err)
	}
}

// The moment git gc's last listing can miss a new .pack is between the
// .pack and its .idx being put in place. A gc that runs then (gc.pid names
// a live process of this host) would delete the .idx as garbage, so the
// writer puts no .idx in place and stores the transaction's objects loose;
// the commit is whole and the pack directory holds nothing of it.
func TestWritePack_GCRunningWhenThePackIsInPlace_ObjectsGoLoose(t *testing.T) {
	t.Cleanup(func() { testHookPackPlaced = nil })
	dir := gt.NewRepo(t)
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	host, _ := os.Hostname()
	hooked := 0
	testHookPackPlaced = func(base string) {
		hooked++
		writeGCPid(t, s.repo.CommonDir, os.Getpid(), host) // "git gc" starts now
	}
	h, err := s.Transact(context.Background(), "refs/ideate/t", func(tip Hash) (Hash, string, error) {
		b, err := s.WriteBlob([]byte("payload\n"))
		if err != nil {
			return ZeroHash, "", err
		}
		tree, err := s.WriteTree([]TreeEntry{{Mode: ModeFile, Name: "f", Hash: b}})
		return tree, "one\n", err
	})
	if err != nil {
		t.Fatal(err)
	}
	if hooked != 1 {
		t.Fatalf("the pack hook ran %d times, want 1", hooked)
	}
	ents, _ := os.ReadDir(filepath.Join(s.repo.CommonDir, "objects", "pack"))
	for _, e := range ents {
		t.Errorf("objects/pack holds %s; want nothing while git gc runs", e.Name())
	}
	for _, o := range []string{h.String(), h.String() + "^{tree}", h.String() + ":f"} {
		full := gt.Git(t, dir, "rev-parse", o)
		if _, err := os.Stat(filepath.Join(s.repo.CommonDir, "objects", full[:2], full[2:])); err != nil {
			t.Errorf("%s (%s) is not a loose object: %v", o, full, err)
		}
	}
	if got := gt.Git(t, dir, "cat-file", "-p", h.String()+":f"); got != "payload" {
		t.Errorf("cat-file: %q", got)
	}
	gt.Fsck(t, dir)

	// Once gc.pid is gone, the next transaction is one pack again.
	testHookPackPlaced = nil
	os.Remove(filepath.Join(s.repo.CommonDir, "gc.pid"))
	if _, err := s.Transact(context.Background(), "refs/ideate/t", func(tip Hash) (Hash, string, error) {
		b, err := s.WriteBlob([]byte("two\n"))
		if err != nil {
			return ZeroHash, "", err
		}
		tree, err := s.WriteTree([]TreeEntry{{Mode: ModeFile, Name: "f", Hash: b}})
		return tree, "two\n", err
	}); err != nil {
		t.Fatal(err)
	}
	idx, _ := filepath.Glob(filepath.Join(s.repo.CommonDir, "objects", "pack", "pack-*.idx"))
	keep, _ := filepath.Glob(filepath.Join(s.repo.CommonDir, "objects", "pack", "*.keep"))
	if len(idx) != 1 || len(keep) != 0 {
		t.Errorf("after gc: idx %v keep %v; want one pack, no keep", idx, keep)
	}
	gt.Fsck(t, dir)
}

// gc.pid is read as git reads it: absent, older than 12 hours, or naming a
// process of this host that has exited means no gc runs; a live process,
// or one on another host, means one does.
func TestGCRunning_ReadsGCPidAsGitDoes(t *testing.T) {
	dir := t.TempDir()
	host, _ := os.Hostname()
	if gcRunning(dir) {
		t.Error("no gc.pid: running")
	}
	writeGCPid(t, dir, os.Getpid(), host)
	if !gcRunning(dir) {
		t.Error("gc.pid of a live process of this host: not running")
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	writeGCPid(t, dir, dead.Process.Pid, host)
	if gcRunning(dir) {
		t.Errorf("gc.pid of exited process %d: running", dead.Process.Pid)
	}
	writeGCPid(t, dir, dead.Process.Pid, "another-host."+strings.Repeat("x", 8))
	if !gcRunning(dir) {
		t.Error("gc.pid of another host: not running (its processes cannot be checked from here)")
	}
	old := time.Now().Add(-13 * time.Hour)
	os.Chtimes(filepath.Join(dir, "gc.pid"), old, old)
	if gcRunning(dir) {
		t.Error("gc.pid 13 hours old: running")
	}
}

// A finished roll-up's merged packs are deleted only when no git gc runs
// and the pack it made is whole; a mark that does not name that pack
// deletes nothing.
func TestFinishRollUp_DeletesOnlyBesideAWholeNewPackAndNoGC(t *testing.T) {
	dir := gt.NewRepo(t)
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	gt.Git(t, dir, "repack", "-q", "-a", "-d")
	pdir := filepath.Join(s.repo.CommonDir, "objects", "pack")
	packs, _ := filepath.Glob(filepath.Join(pdir, "pack-*.pack"))
	if len(packs) != 1 {
		t.Fatalf("packs: %v", packs)
	}
	made := filepath.Base(packs[0]) // stands for the roll-up's new pack
	gt.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "two")
	gt.Git(t, dir, "repack", "-q") // a second pack: stands for a merged one
	packs, _ = filepath.Glob(filepath.Join(pdir, "pack-*.pack"))
	var merged string
	for _, p := range packs {
		if filepath.Base(p) != made {
			merged = filepath.Base(p)
		}
	}
	if merged == "" {
		t.Fatalf("packs: %v", packs)
	}
	state := s.repo.StateDir()
	os.MkdirAll(state, 0o777)
	mark := filepath.Join(state, "rolled-up")
	exists := func(name string) bool { _, err := os.Stat(filepath.Join(pdir, name)); return err == nil }
	put := func(body string) {
		if err := os.WriteFile(mark, []byte(body), 0o666); err != nil {
			t.Fatal(err)
		}
	}

	put(merged + "\n") // no "+" line: an older version's mark
	s.maint.finishRollUp()
	if !exists(merged) {
		t.Fatal("a mark without the new pack's name deleted a pack")
	}
	put(merged + "\n+pack-" + strings.Repeat("0", 40) + ".pack\n") // the new pack lost its index
	s.maint.finishRollUp()
	if !exists(merged) {
		t.Fatal("the merged pack went although the new one is not whole")
	}
	host, _ := os.Hostname()
	writeGCPid(t, s.repo.CommonDir, os.Getpid(), host)
	put(merged + "\n+" + made + "\n")
	s.maint.finishRollUp()
	if !exists(merged) {
		t.Fatal("the merged pack went while git gc runs")
	}
	if _, err := os.Stat(mark); err != nil {
		t.Fatal("the mark was taken while git gc runs; the next commit would not look again")
	}
	os.Remove(filepath.Join(s.repo.CommonDir, "gc.pid"))
	s.maint.finishRollUp()
	if exists(merged) || exists(strings.TrimSuffix(merged, ".pack")+".idx") {
		t.Fatal("the merged pack stayed beside a whole new pack, no gc running")
	}
	if !exists(made) {
		t.Fatal("the new pack went")
	}
	gt.Fsck(t, dir)
}
