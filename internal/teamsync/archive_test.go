package teamsync_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/proctest"
	"github.com/ideate/git-ideate/internal/teamsync"
)

// archivingClone clones url with ideate.archiveAfter set to age before
// the store is opened.
func archivingClone(t *testing.T, url, age string) *clone {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "clone")
	if out, err := exec.Command("git", "clone", "-q", url, dir).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	gt.Git(t, dir, "config", "ideate.archiveAfter", age)
	c, err := open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.g.Close() })
	return c
}

// finish claims and completes (or cancels) item id in c.
func (c *clone) finish(t *testing.T, id string, cancel bool) {
	t.Helper()
	who := board.Actor{Human: "worker"}
	if cancel {
		if _, err := c.b.Cancel(t.Context(), id, who); err != nil {
			t.Fatal(err)
		}
		return
	}
	it, err := c.b.Claim(t.Context(), id, who, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.b.Complete(t.Context(), id, it.Claim.ClaimToken, "done"); err != nil {
		t.Fatal(err)
	}
}

// remoteItems is the item refs the bare remote holds.
func remoteItems(t *testing.T, bare string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, l := range strings.Split(gt.Git(t, bare, "for-each-ref", "--format=%(objectname) %(refname)", board.ItemsPrefix), "\n") {
		if h, ref, ok := strings.Cut(l, " "); ok {
			out[strings.TrimPrefix(ref, board.ItemsPrefix)] = h
		}
	}
	return out
}

// archivedAtRemote is the tip the remote's archive holds item id at ("" none).
func archivedAtRemote(t *testing.T, bare, id string) string {
	t.Helper()
	p := board.ArchivePath(id)
	out, err := gt.GitErr(bare, "cat-file", "blob", board.ArchiveRef+":"+strings.Join(p, "/"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

func archiveRemotes(t *testing.T, body func(t *testing.T, bare, url string)) {
	t.Run("bare", func(t *testing.T) {
		bare := newRemote(t)
		body(t, bare, bare)
	})
	t.Run("smart-http", func(t *testing.T) {
		bare := newRemote(t)
		gt.Git(t, bare, "config", "http.receivepack", "true")
		gt.Git(t, bare, "config", "receive.fsckObjects", "true")
		body(t, bare, startHTTP(t, filepath.Dir(bare))+filepath.Base(bare))
	})
}

// TestArchive_SyncFoldsFinishedItemsAndTheyStayReadable: a sync with
// ideate.archiveAfter 0 takes the done and cancelled items (and the closed
// task's ref) off the live refs, here and at the remote, in one push; the
// items stay readable (get, events, list --status done) on this clone and
// on a fresh clone, every object passes git fsck --strict, and a stale
// clone that still holds the old refs drops them at its sync instead of
// putting them back.
func TestArchive_SyncFoldsFinishedItemsAndTheyStayReadable(t *testing.T) {
	archiveRemotes(t, func(t *testing.T, bare, url string) {
		a := archivingClone(t, url, "off")
		stale := archivingClone(t, url, "off")
		open := a.create(t, "still open")
		done := a.create(t, "done")
		gone := a.create(t, "cancelled")
		dep := a.create(t, "depends on done")
		if _, err := a.b.UpdateMeta(t.Context(), dep, board.UpdateInput{ExpectedVersion: 1, DependsOn: &[]string{done}, Actor: board.Actor{Human: "x"}}); err != nil {
			t.Fatal(err)
		}
		a.finish(t, done, false)
		a.finish(t, gone, true)
		task := closedTask(t, a, "S1-01+T1")
		gt.Git(t, a.dir, "branch", "ideate/task/S1-01+T1") // the task's branch, mirrored by the sync
		branch := gt.Git(t, a.dir, "rev-parse", "ideate/task/S1-01+T1")
		a.sync(t)
		if remoteRef(t, bare, teamsync.BranchesPrefix+"S1-01+T1") != branch {
			t.Fatal("the task's branch was not mirrored to the remote")
		}
		stale.sync(t) // holds the finished items as live refs
		if mustRef(t, stale, board.RefName(done)) == gitstore.ZeroHash {
			t.Fatal("the stale clone did not get the done item")
		}
		arch := archivingClone(t, url, "0")
		sum := arch.sync(t)
		if sum.Archived != 4 {
			t.Fatalf("archived %d refs, want 4 (two items, the task and its branch's mirror): %+v", sum.Archived, sum)
		}
		if remoteRef(t, bare, teamsync.BranchesPrefix+"S1-01+T1") != "" {
			t.Fatal("the finished task's branch mirror is still live at the remote")
		}
		if got := strings.TrimSpace(gt.Git(t, bare, "cat-file", "blob", board.ArchiveRef+":branches/S1-01+T1")); got != branch {
			t.Fatalf("the archive holds the task's branch at %q, want %s", got, branch)
		}
		if got := remoteItems(t, bare); len(got) != 2 || got[open] == "" || got[dep] == "" {
			t.Fatalf("the remote's live items are %v, want only %s and %s", got, open, dep)
		}
		if remoteRef(t, bare, "refs/ideate/tasks/S1-01+T1") != "" {
			t.Fatal("the closed task's ref is still live at the remote")
		}
		for _, id := range []string{done, gone} {
			if archivedAtRemote(t, bare, id) == "" {
				t.Fatalf("item %s is not in the remote's archive", id)
			}
			if mustRef(t, arch, board.RefName(id)) != gitstore.ZeroHash {
				t.Fatalf("item %s is still a live ref here", id)
			}
			if mustRef(t, arch, gitstore.TrackingRef("origin", board.RefName(id))) != gitstore.ZeroHash {
				t.Fatalf("the tracking copy of %s was left", id)
			}
		}
		if got := strings.TrimSpace(gt.Git(t, bare, "cat-file", "blob", board.ArchiveRef+":tasks/S1-01+T1")); got != task {
			t.Fatalf("the archive holds the task at %q, want %s", got, task)
		}
		if again := arch.sync(t); again.RefsPushed != 0 || again.Archived != 0 {
			t.Fatalf("a second sync did %+v", again)
		}
		fresh := archivingClone(t, url, "off")
		fresh.sync(t)
		for _, c := range []*clone{arch, fresh} {
			v, err := c.b.Get(t.Context(), done)
			if err != nil || v == nil || v.Item.Status != board.StatusDone {
				t.Fatalf("get of the archived item in %s: %+v %v", c.dir, v, err)
			}
			evs, err := c.b.Events(t.Context(), done)
			if err != nil || len(evs) != 3 {
				t.Fatalf("events of the archived item in %s: %d %v", c.dir, len(evs), err)
			}
			for status, want := range map[string]string{board.StatusDone: done, board.StatusCancelled: gone} {
				page, err := c.b.List(t.Context(), board.ListRequest{Filter: board.ListFilter{Status: status}})
				if err != nil || len(page.Items) != 1 || page.Items[0].ID != want {
					t.Fatalf("list --status %s in %s: %+v %v", status, c.dir, page, err)
				}
			}
			page, err := c.b.List(t.Context(), board.ListRequest{})
			if err != nil || len(page.Items) != 2 {
				t.Fatalf("list in %s: %d items %v, want the two live ones", c.dir, len(page.Items), err)
			}
			page, err = c.b.List(t.Context(), board.ListRequest{Archived: true})
			if err != nil || len(page.Items) != 4 {
				t.Fatalf("list in %s: %d items %v", c.dir, len(page.Items), err)
			}
			// A dependency in the archive is done: the dependent is ready.
			rows, err := c.b.Ready(t.Context(), "")
			if err != nil {
				t.Fatal(err)
			}
			ready := map[string]bool{}
			for _, r := range rows {
				ready[r.ID] = true
			}
			if !ready[dep] || !ready[open] {
				t.Fatalf("ready in %s: %v, want %s and %s", c.dir, ready, open, dep)
			}
		}
		// The stale clones drop their copies and put nothing back.
		for _, c := range []*clone{stale, a} {
			ss := c.sync(t)
			if ss.Unarchived != 4 {
				t.Fatalf("%s dropped %d refs, want 4: %+v", c.dir, ss.Unarchived, ss)
			}
			if got := remoteItems(t, bare); len(got) != 2 {
				t.Fatalf("a stale clone's sync put items back: %v", got)
			}
			// Its task branch stays a branch here, and is not mirrored
			// again while the archive holds it.
			if again := c.sync(t); again.RefsPushed != 0 || remoteRef(t, bare, teamsync.BranchesPrefix+"S1-01+T1") != "" {
				t.Fatalf("%s's next sync pushed %d refs; the branch mirror at the remote: %q", c.dir, again.RefsPushed, remoteRef(t, bare, teamsync.BranchesPrefix+"S1-01+T1"))
			}
			if gt.Git(t, c.dir, "rev-parse", "ideate/task/S1-01+T1") != branch {
				t.Fatalf("%s lost its task branch", c.dir)
			}
			if mustRef(t, c, board.RefName(done)) != gitstore.ZeroHash {
				t.Fatal("a stale clone kept the archived item live")
			}
		}
		if _, err := fresh.b.Claim(t.Context(), dep, board.Actor{Human: "f"}, nil); err != nil {
			t.Fatalf("claim of an item whose dependency is archived: %v", err)
		}
		// An archived item can still be named: as a dependency, as a
		// parent (held absent while the child appears), by a record.
		o, err := fresh.b.Create(t.Context(), board.CreateInput{Title: "follow-up", Spec: "s", SpecFormat: "f",
			CreatedBy: board.Actor{Human: "f"}, DependsOn: []string{done}, ParentID: done})
		if err != nil {
			t.Fatalf("create naming an archived item as dependency and parent: %v", err)
		}
		if _, err := fresh.b.Claim(t.Context(), o.Item.ID, board.Actor{Human: "f"}, nil); err != nil {
			t.Fatalf("claim of the follow-up: %v", err)
		}
		if ok, err := board.Known(fresh.g, gone); err != nil || !ok {
			t.Fatalf("board.Known of an archived item: %v %v", ok, err)
		}
		if mustRef(t, fresh, board.RefName(done)) != gitstore.ZeroHash {
			t.Fatal("naming an archived item gave it its ref back")
		}
		gt.Fsck(t, bare)
		gt.Fsck(t, arch.dir)
		gt.Fsck(t, fresh.dir)
	})
}

// closedTask writes a task ref holding a completed contract.
func closedTask(t *testing.T, c *clone, name string) string {
	t.Helper()
	format := strings.TrimSpace(gt.GitStdin(t, c.dir, "ideate-task 1\n", "hash-object", "-w", "--stdin"))
	contract := strings.TrimSpace(gt.GitStdin(t, c.dir, `{"task":"S1-01/T1","status":"completed","updated_at":"2026-01-01T00:00:00.000Z"}`+"\n", "hash-object", "-w", "--stdin"))
	tree := strings.TrimSpace(gt.GitStdin(t, c.dir, "100644 blob "+contract+"\tcontract.json\n100644 blob "+format+"\tideate-format\n", "mktree"))
	h := gt.Git(t, c.dir, "commit-tree", tree, "-m", "task "+name+": completed")
	gt.Git(t, c.dir, "update-ref", "refs/ideate/tasks/"+name, h)
	return h
}

// TestArchive_ReopenOfAnArchivedItem: an item another clone archived is
// reopened through the remote authority; it is live again everywhere,
// once, with its whole history, and archived again once done.
func TestArchive_ReopenOfAnArchivedItem(t *testing.T) {
	archiveRemotes(t, func(t *testing.T, bare, url string) {
		a := archivingClone(t, url, "0")
		b := archivingClone(t, url, "off")
		id := a.create(t, "reopen me")
		a.finish(t, id, false)
		a.sync(t)
		if archivedAtRemote(t, bare, id) == "" {
			t.Fatal("not archived")
		}
		b.sync(t)
		b.authoritative()
		it, err := b.b.Reopen(t.Context(), id, board.Actor{Human: "bob"})
		if err != nil || it.Status != board.StatusOpen {
			t.Fatalf("reopen of an archived item: %+v %v", it, err)
		}
		if remoteItems(t, bare)[id] == "" {
			t.Fatal("the reopened item is not live at the remote")
		}
		a.sync(t)
		v, err := a.b.Get(t.Context(), id)
		if err != nil || v.Item.Status != board.StatusOpen {
			t.Fatalf("a sees %+v %v, want open", v, err)
		}
		evs, _ := a.b.Events(t.Context(), id)
		if len(evs) != 4 {
			t.Fatalf("%d events after the reopen, want 4", len(evs))
		}
		page, err := a.b.List(t.Context(), board.ListRequest{})
		if err != nil || len(page.Items) != 1 {
			t.Fatalf("list after the reopen: %d items (%v), want the item once", len(page.Items), err)
		}
		a.finish(t, id, false)
		last := mustRef(t, a, board.RefName(id)).String()
		a.sync(t)
		if remoteItems(t, bare)[id] != "" || archivedAtRemote(t, bare, id) != last {
			t.Fatalf("not archived again at %s: live %v, archived at %s", last, remoteItems(t, bare), archivedAtRemote(t, bare, id))
		}
		evs, _ = a.b.Events(t.Context(), id)
		if len(evs) != 6 {
			t.Fatalf("%d events after the second archive, want 6", len(evs))
		}
		b.sync(t)
		if v, _ := b.b.Get(t.Context(), id); v == nil || v.Item.Status != board.StatusDone {
			t.Fatalf("b sees %+v, want done", v)
		}
		gt.Fsck(t, bare)
	})
}

// archiveWorkMain is the "archive-work" client role: SYNC_TEST_N rounds
// of create, claim, complete and sync (its clone archives at once), and,
// every third round, a reopen through the remote of an item SYNC_TEST_IDS
// names (one another clone archives). Prints "made <id>", "reopened <id>"
// and "ok <i>" or "FAIL <i> <error>".
func archiveWorkMain(c *clone) int {
	who := os.Getenv("SYNC_TEST_WHO")
	n, _ := strconv.Atoi(os.Getenv("SYNC_TEST_N"))
	ids := strings.Split(os.Getenv("SYNC_TEST_IDS"), ",")
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	ctx := context.Background()
	y := &teamsync.Syncer{Git: c.g, Record: c.rec, Board: c.b, Remote: "origin"}
	auth := &teamsync.Authority{Git: c.g, Board: c.b, Remote: "origin"}
	for i := 0; i < n; i++ {
		o, err := c.b.Create(ctx, board.CreateInput{Title: fmt.Sprintf("%s %d", who, i), Spec: "s", SpecFormat: "f", CreatedBy: board.Actor{Human: who}})
		if err != nil {
			fmt.Fprintf(out, "FAIL %d create: %v\n", i, err)
			continue
		}
		fmt.Fprintf(out, "made %s\n", o.Item.ID)
		it, err := c.b.Claim(ctx, o.Item.ID, board.Actor{Human: who}, nil)
		if err == nil {
			_, err = c.b.Complete(ctx, o.Item.ID, it.Claim.ClaimToken, "done")
		}
		if err != nil {
			fmt.Fprintf(out, "FAIL %d finish: %v\n", i, err)
			continue
		}
		if i%3 == 1 && i/3 < len(ids) && ids[i/3] != "" {
			c.b.Authority = auth
			_, err := c.b.Reopen(ctx, ids[i/3], board.Actor{Human: who})
			c.b.Authority = nil
			switch {
			case err == nil:
				fmt.Fprintf(out, "reopened %s\n", ids[i/3])
			case apperr.Is(err, board.InvalidTransition):
				// another clone reopened it first
			default:
				fmt.Fprintf(out, "FAIL %d reopen: %v\n", i, err)
			}
		}
		if _, err := y.Sync(ctx); err != nil {
			fmt.Fprintf(out, "FAIL %d sync: %s\n", i, strings.ReplaceAll(err.Error(), "\n", " "))
			continue
		}
		fmt.Fprintf(out, "ok %d\n", i)
		out.Flush()
	}
	return 0
}

// TestArchive_ConcurrentSyncsArchivingLoseNothing: three clones, each an
// OS process, create, finish and sync 12 items at once, each clone
// archiving at every sync, while reopening items the seed archived. After
// levelling: every item exists exactly once (a live ref or an archive
// entry, never a live ref the archive already holds), every reopened item
// is live and open, nothing resurrected, and git fsck --strict passes.
func TestArchive_ConcurrentSyncsArchivingLoseNothing(t *testing.T) {
	archiveRemotes(t, func(t *testing.T, bare, url string) {
		const rounds = 12
		seed := archivingClone(t, url, "0")
		var old []string
		for i := 0; i < 4; i++ {
			id := seed.create(t, fmt.Sprintf("old %d", i))
			seed.finish(t, id, false)
			old = append(old, id)
		}
		seed.sync(t)
		names := []string{"ann", "ben", "cat"}
		var clones []*clone
		for range names {
			c := archivingClone(t, url, "0")
			c.sync(t)
			clones = append(clones, c)
		}
		bar := proctest.NewBarrier(t)
		ps := make([]*proctest.Proc, len(clones))
		for i, c := range clones {
			// ann and ben race to reopen the same archived items
			reopen := []string{"", "", "", ""}
			if i < 2 {
				reopen = old
			}
			ps[i] = client(t, c.dir, "archive-work", names[i], bar, reopen, "SYNC_TEST_N="+strconv.Itoa(rounds))
		}
		bar.Release(t)
		made := map[string]bool{}
		reopened := map[string]bool{}
		for i := range clones {
			for _, l := range ps[i].Wait(t) {
				switch {
				case strings.HasPrefix(l, "FAIL "):
					t.Errorf("%s: %s", names[i], l)
				case strings.HasPrefix(l, "made "):
					made[strings.TrimPrefix(l, "made ")] = true
				case strings.HasPrefix(l, "reopened "):
					reopened[strings.TrimPrefix(l, "reopened ")] = true
				}
			}
		}
		if len(made) != rounds*len(names) {
			t.Fatalf("%d items made, want %d", len(made), rounds*len(names))
		}
		for _, c := range append(clones, seed) {
			c.sync(t)
		}
		for _, c := range clones {
			c.sync(t)
		}
		live := remoteItems(t, bare)
		for id := range made {
			a := archivedAtRemote(t, bare, id)
			if (live[id] == "") == (a == "") {
				t.Errorf("item %s: live %q, archived %q: want exactly one", id, live[id], a)
			}
		}
		for _, id := range old {
			if reopened[id] {
				if live[id] == "" {
					t.Errorf("reopened item %s is not live", id)
				}
			} else if live[id] != "" {
				t.Errorf("item %s was never reopened but is live again", id)
			}
		}
		for id, h := range live {
			if a := archivedAtRemote(t, bare, id); a != "" {
				if out, err := gt.GitErr(bare, "merge-base", "--is-ancestor", h, a); err == nil {
					t.Errorf("live item %s at %s is held by the archive (%s): resurrected %s", id, h, a, out)
				}
			}
		}
		for _, c := range append(clones, seed) {
			page, err := c.b.List(t.Context(), board.ListRequest{Limit: ptr(1000), Archived: true})
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]int{}
			for _, r := range page.Items {
				seen[r.ID]++
			}
			for id := range made {
				if seen[id] != 1 {
					t.Errorf("%s lists item %s %d times", c.dir, id, seen[id])
				}
			}
			for _, id := range old {
				v, err := c.b.Get(t.Context(), id)
				want := board.StatusDone
				if reopened[id] {
					want = board.StatusOpen
				}
				if err != nil || v == nil || v.Item.Status != want {
					t.Errorf("%s: item %s is %+v (%v), want %s", c.dir, id, v, err, want)
				}
			}
		}
		t.Logf("%d items, %d live at the end, %d reopened", len(made)+len(old), len(live), len(reopened))
		gt.Fsck(t, bare)
		for _, c := range clones {
			gt.Fsck(t, c.dir)
		}
	})
}

// TestArchive_Kill9DuringArchivingSync: syncs that archive, killed with
// SIGKILL at random moments (with every process they started), leave both
// sides readable, and the syncs after them finish the job: every item is
// live or archived at the remote, exactly once, none resurrected.
func TestArchive_Kill9DuringArchivingSync(t *testing.T) {
	bare := newRemote(t)
	url := startDaemon(t, filepath.Dir(bare)) + filepath.Base(bare)
	a := archivingClone(t, url, "0")
	b := archivingClone(t, url, "0")
	var made []string
	killed, window := 0, 400*time.Millisecond
	for round := 0; round < 8 || (killed == 0 && round < 24); round++ {
		for i := 0; i < 4; i++ {
			id := a.create(t, fmt.Sprintf("r%d item %d", round, i))
			if i < 3 {
				a.finish(t, id, i == 2)
			}
			made = append(made, id)
		}
		b.sync(t)
		syncer := client(t, a.dir, "sync-loop", "ann", nil, nil)
		time.Sleep(10*time.Millisecond + time.Duration(rand.Int64N(int64(window))))
		syncer.Kill()
		if !strings.Contains(syncer.Output(), "synced") {
			killed++
		} else if killed == 0 {
			window = max(window*3/4, 20*time.Millisecond)
		}
		daemonAtRest(t, url) // the killed client's push may still be landing
		gt.Fsck(t, bare)
		gt.Fsck(t, a.dir)
	}
	t.Logf("%d kills landed before the first sync finished", killed)
	if killed == 0 {
		t.Fatal("no kill interrupted a sync; the test proved nothing")
	}
	time.Sleep(1100 * time.Millisecond) // locks the kills left are stale now
	a.sync(t)
	b.sync(t)
	a.sync(t)
	live := remoteItems(t, bare)
	for i, id := range made {
		archived := archivedAtRemote(t, bare, id)
		if i%4 < 3 && archived == "" {
			t.Errorf("finished item %s was not archived", id)
		}
		if (live[id] == "") == (archived == "") {
			t.Errorf("item %s: live %q, archived %q: want exactly one", id, live[id], archived)
		}
		if open := i%4 == 3; open && live[id] == "" {
			t.Errorf("open item %s is not live", id)
		}
	}
	for _, c := range []*clone{a, b} {
		page, err := c.b.List(t.Context(), board.ListRequest{Limit: ptr(500), Archived: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Items) != len(made) {
			t.Errorf("%s lists %d items, want %d", c.dir, len(page.Items), len(made))
		}
	}
	gt.Fsck(t, bare)
	gt.Fsck(t, a.dir)
	gt.Fsck(t, b.dir)
}

// TestArchive_ReferencedByKeepsArchivedReferrers: an item's referenced_by
// (work get) names the items that reference it after a sync archived
// them, on the clone that archived and on a fresh clone, and keeps them as
// the archive grows (the per-clone cache moved by the archive's diff).
func TestArchive_ReferencedByKeepsArchivedReferrers(t *testing.T) {
	archiveRemotes(t, referencedByKeepsArchivedReferrers)
}

func referencedByKeepsArchivedReferrers(t *testing.T, bare, url string) {
	a := archivingClone(t, url, "0")
	target := a.create(t, "the item named")
	refer := func(title string) string {
		o, err := a.b.Create(t.Context(), board.CreateInput{Title: title, Spec: "s", SpecFormat: "f",
			CreatedBy: board.Actor{Human: "x"}, References: []board.Reference{{Rel: "follows_up", ID: target}}})
		if err != nil {
			t.Fatal(err)
		}
		return o.Item.ID
	}
	first := refer("a follow-up, finished")
	live := refer("a follow-up, open")
	a.finish(t, first, false)
	a.sync(t)
	if mustRef(t, a, board.RefName(first)) != gitstore.ZeroHash || archivedAtRemote(t, bare, first) == "" {
		t.Fatal("the finished follow-up was not archived")
	}
	backlinks := func(c *clone) map[string]string {
		t.Helper()
		v, err := c.b.Get(t.Context(), target)
		if err != nil || v == nil {
			t.Fatalf("get in %s: %+v %v", c.dir, v, err)
		}
		out := map[string]string{}
		for _, r := range v.ReferencedBy {
			if _, dup := out[r.ID]; dup {
				t.Fatalf("referenced_by names %s twice: %+v", r.ID, v.ReferencedBy)
			}
			out[r.ID] = r.Rel
		}
		return out
	}
	fresh := archivingClone(t, url, "off")
	fresh.sync(t)
	for _, c := range []*clone{a, fresh} {
		if got := backlinks(c); len(got) != 2 || got[first] != "follows_up" || got[live] != "follows_up" {
			t.Fatalf("referenced_by in %s: %v, want the archived %s and the live %s", c.dir, got, first, live)
		}
	}
	// A second referrer archived later reaches the fresh clone's cache by
	// the archive's diff.
	a.finish(t, live, true)
	a.sync(t)
	fresh.sync(t)
	for _, c := range []*clone{a, fresh} {
		if got := backlinks(c); len(got) != 2 || got[first] == "" || got[live] == "" {
			t.Fatalf("referenced_by in %s after the second archive: %v", c.dir, got)
		}
		head, err := os.ReadFile(filepath.Join(c.dir, ".git", "ideate", "archive-refs.v1"))
		if err != nil || !strings.HasPrefix(string(head), "ideate-archive-refs 1 "+mustRef(t, c, board.ArchiveRef).String()+"\n") {
			t.Fatalf("the archive's references cache in %s does not name the archive: %q %v", c.dir, head, err)
		}
	}
	if got := gt.Git(t, bare, "cat-file", "blob", board.ArchiveRef+":references/"+first[24:26]+"/"+first); !strings.Contains(got, target) {
		t.Fatalf("the remote's archive keeps %s's references as %q", first, got)
	}
	gt.Fsck(t, bare)
	gt.Fsck(t, fresh.dir)
}
