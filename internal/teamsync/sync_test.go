package teamsync_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/osproc"
	"github.com/ideate/git-ideate/internal/proctest"
	"github.com/ideate/git-ideate/internal/record"
	"github.com/ideate/git-ideate/internal/steering"
	"github.com/ideate/git-ideate/internal/teamsync"
)

// TestMain lets the test binary act as a client process (a clone doing
// remote-authoritative verbs or syncs), so races are between OS processes.
func TestMain(m *testing.M) { proctest.Main(m, clientMain) }

// clientMain runs role in the clone SYNC_TEST_DIR (after the barrier, when
// the test gave one), printing "<id> OK <token>" or "<id> <CODE> <message>" per item.
func clientMain(role string) int {
	c, err := open(os.Getenv("SYNC_TEST_DIR"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	c.b.Authority = &teamsync.Authority{Git: c.g, Board: c.b, Remote: "origin"}
	who := board.Actor{Human: os.Getenv("SYNC_TEST_WHO")}
	token, _ := strconv.ParseInt(os.Getenv("SYNC_TEST_TOKEN"), 10, 64)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	if role == "sync-work" {
		return syncWorkMain(c)
	}
	if role == "archive-work" {
		return archiveWorkMain(c)
	}
	if role == "sync-loop" {
		for {
			y := &teamsync.Syncer{Git: c.g, Record: c.rec, Board: c.b, Remote: "origin"}
			if _, err := y.Sync(context.Background()); err != nil {
				fmt.Fprintln(out, "sync failed:", err)
			} else {
				fmt.Fprintln(out, "synced")
			}
			out.Flush()
		}
	}
	for _, id := range strings.Split(os.Getenv("SYNC_TEST_IDS"), ",") {
		var it *board.Item
		var err error
		switch role {
		case "claim":
			it, err = c.b.Claim(context.Background(), id, who, nil)
		case "complete":
			var o *board.Outcome
			if o, err = c.b.Complete(context.Background(), id, token, "done by "+who.Human); err == nil {
				it = o.Item
			}
		case "cancel":
			it, err = c.b.Cancel(context.Background(), id, who)
		}
		if err != nil {
			fmt.Fprintf(out, "%s %s %s\n", id, apperr.CodeOf(err), strings.ReplaceAll(apperr.Message(err), "\n", " "))
			continue
		}
		tok := int64(0)
		if it.Claim != nil {
			tok = it.Claim.ClaimToken
		}
		fmt.Fprintf(out, "%s OK %d\n", id, tok)
	}
	return 0
}

type clone struct {
	dir string
	g   *gitstore.Store
	rec *record.Store
	b   *board.Store
}

func open(dir string) (*clone, error) {
	g, err := gitstore.Open(dir)
	if err != nil {
		return nil, err
	}
	rec := record.Open(g)
	rec.Resolve = func(id string) (bool, error) {
		h, err := g.Ref(board.RefName(id))
		return h != gitstore.ZeroHash, err
	}
	return &clone{dir: dir, g: g, rec: rec, b: board.Open(g, rec)}, nil
}

// newRemote returns the path of a fresh bare repository.
func newRemote(t *testing.T) string {
	t.Helper()
	gt.Isolate(t)
	dir := filepath.Join(t.TempDir(), "remote.git")
	gt.Git(t, filepath.Dir(dir), "init", "-q", "--bare", dir)
	// One commit on main, so clones have a checked-out branch.
	seed := t.TempDir()
	gt.Git(t, seed, "init", "-q")
	gt.Git(t, seed, "commit", "-q", "--allow-empty", "-m", "init")
	gt.Git(t, seed, "push", "-q", dir, "HEAD:refs/heads/main")
	return dir
}

func cloneOf(t *testing.T, url string) *clone {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "clone")
	if out, err := exec.Command("git", "clone", "-q", url, dir).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	c, err := open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.g.Close() })
	return c
}

// sharedItem makes a remote and two clones of it that both have one item,
// created by a and synced by both.
func sharedItem(t *testing.T, title string) (bare string, a, b *clone, id string) {
	t.Helper()
	bare = newRemote(t)
	a = cloneOf(t, bare)
	id = a.create(t, title)
	a.sync(t)
	b = cloneOf(t, bare)
	b.sync(t)
	return bare, a, b, id
}

func (c *clone) sync(t *testing.T) *teamsync.Summary {
	t.Helper()
	y := &teamsync.Syncer{Git: c.g, Record: c.rec, Board: c.b, Remote: "origin"}
	sum, err := y.Sync(t.Context())
	if err != nil {
		t.Fatalf("sync in %s: %v", c.dir, err)
	}
	return sum
}

func (c *clone) authoritative() {
	c.b.Authority = &teamsync.Authority{Git: c.g, Board: c.b, Remote: "origin"}
}

func (c *clone) note(t *testing.T, claim string) string {
	t.Helper()
	res, err := c.rec.Append(t.Context(), record.AppendInput{Kind: "note", Claim: claim, Content: claim,
		Source: record.Source{CapturePoint: "test", SessionID: "s"}})
	if err != nil {
		t.Fatal(err)
	}
	return res.Record.ID
}

func (c *clone) create(t *testing.T, title string) string {
	t.Helper()
	o, err := c.b.Create(t.Context(), board.CreateInput{Title: title, Spec: "s", SpecFormat: "plan", CreatedBy: board.Actor{Human: "creator"}})
	if err != nil {
		t.Fatal(err)
	}
	return o.Item.ID
}

// recordIDs lists every record id in the clone's record.
func (c *clone) recordIDs(t *testing.T) []string {
	t.Helper()
	sn, err := c.rec.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	if err := sn.Walk("", func(r *record.Record) (bool, error) {
		ids = append(ids, r.ID)
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	sort.Strings(ids)
	return ids
}

func remoteRef(t *testing.T, bare, ref string) string {
	t.Helper()
	out, _ := gt.GitErr(bare, "rev-parse", "--verify", "-q", ref)
	return out
}

func mustRef(t *testing.T, c *clone, ref string) gitstore.Hash {
	t.Helper()
	h, err := c.g.Ref(ref)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestSync_RecordsUnionExactlyOnce(t *testing.T) {
	bare := newRemote(t)
	a, b := cloneOf(t, bare), cloneOf(t, bare)
	var want []string
	for i := 0; i < 5; i++ {
		want = append(want, a.note(t, fmt.Sprintf("a%d", i)), b.note(t, fmt.Sprintf("b%d", i)))
	}
	sa := a.sync(t)
	if sa.Record != "pushed" {
		t.Fatalf("first sync: record %s, want pushed", sa.Record)
	}
	sb := b.sync(t)
	if sb.Record != "merged" {
		t.Fatalf("second sync: record %s, want merged", sb.Record)
	}
	a.sync(t)
	sort.Strings(want)
	for _, c := range []*clone{a, b} {
		got := c.recordIDs(t)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("%s has %d records %v, want %d %v", c.dir, len(got), got, len(want), want)
		}
	}
	if mustRef(t, a, record.RefName) != mustRef(t, b, record.RefName) {
		t.Fatal("the clones' record refs differ after syncing both ways")
	}
	if remoteRef(t, bare, record.RefName) != mustRef(t, a, record.RefName).String() {
		t.Fatal("the remote does not hold the merged record")
	}
	// Local history is kept: b's own commits are ancestors of the merge.
	log := gt.Git(t, b.dir, "log", "--format=%s", record.RefName)
	if strings.Count(log, "\n")+1 != 11 { // 10 records + 1 merge
		t.Fatalf("record history has %d commits, want 11:\n%s", strings.Count(log, "\n")+1, log)
	}
	// A second sync with nothing new is a no-op.
	if s := a.sync(t); s.Record != "up-to-date" || s.RefsPushed != 0 {
		t.Fatalf("no-op sync did %+v", s)
	}
	gt.Fsck(t, a.dir)
	gt.Fsck(t, b.dir)
	gt.Fsck(t, bare)
}

func TestSync_OfflineWorkThenSync(t *testing.T) {
	bare, a, b, shared := sharedItem(t, "shared")

	// a works offline: records, creates, claims and completes.
	var want []string
	want = append(want, a.note(t, "offline a"))
	x := a.create(t, "made offline")
	it, err := a.b.Claim(t.Context(), x, board.Actor{Human: "alice"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.b.Complete(t.Context(), x, it.Claim.ClaimToken, "finished offline"); err != nil {
		t.Fatal(err)
	}
	// b works too, on the shared item and its own.
	want = append(want, b.note(t, "b meanwhile"))
	y := b.create(t, "made by b")
	if _, err := b.b.Claim(t.Context(), shared, board.Actor{Human: "bob"}, nil); err != nil {
		t.Fatal(err)
	}
	b.sync(t)
	sum := a.sync(t)
	if len(sum.Lost) != 0 {
		t.Fatalf("nothing conflicts, yet lost %+v", sum.Lost)
	}
	b.sync(t)
	// Every record once on both sides (plus the work-completion record).
	ra, rb := a.recordIDs(t), b.recordIDs(t)
	if strings.Join(ra, ",") != strings.Join(rb, ",") {
		t.Fatalf("records differ:\n a %v\n b %v", ra, rb)
	}
	for _, id := range want {
		if n := strings.Count(strings.Join(ra, ","), id); n != 1 {
			t.Fatalf("record %s appears %d times", id, n)
		}
	}
	if len(ra) != 3 { // two notes + a's work-completion
		t.Fatalf("%d records, want 3: %v", len(ra), ra)
	}
	for _, id := range []string{shared, x, y} {
		if mustRef(t, a, board.RefName(id)) != mustRef(t, b, board.RefName(id)) {
			t.Fatalf("item %s differs between the clones", id)
		}
	}
	v, err := b.b.Get(t.Context(), x)
	if err != nil || v == nil || v.Status != board.StatusDone {
		t.Fatalf("b sees a's offline item as %+v, %v", v, err)
	}
	v, err = a.b.Get(t.Context(), shared)
	if err != nil || v.Status != board.StatusInProgress || v.Claim.Holder.Human != "bob" {
		t.Fatalf("a sees the shared item as %+v, %v", v, err)
	}
	gt.Fsck(t, a.dir)
	gt.Fsck(t, bare)
}

func TestSync_LostClaimIsReportedAndRecorded(t *testing.T) {
	bare, a, b, id := sharedItem(t, "contested")

	// Both claim offline; b syncs first, so the remote holds b's claim.
	ia, err := a.b.Claim(t.Context(), id, board.Actor{Human: "alice"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.b.Renew(t.Context(), id, ia.Claim.ClaimToken, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := b.b.Claim(t.Context(), id, board.Actor{Human: "bob"}, nil); err != nil {
		t.Fatal(err)
	}
	b.sync(t)
	sum := a.sync(t)
	if len(sum.Lost) != 2 {
		t.Fatalf("lost %+v, want the claim and the renew", sum.Lost)
	}
	l := sum.Lost[0]
	if l.Transition != board.TClaim || l.Code != board.NotClaimable || l.Holder == nil || l.Holder.Human != "bob" {
		t.Fatalf("lost claim reported as %+v", l)
	}
	if !strings.Contains(l.Message, "bob") {
		t.Fatalf("the report does not name the holder: %s", l.Message)
	}
	if l.Record == "" {
		t.Fatal("the lost claim was not recorded")
	}
	r, err := a.rec.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Get(l.Record)
	if err != nil || got == nil || got.Kind != "sync-conflict" || !strings.Contains(got.Claim, id) {
		t.Fatalf("sync-conflict record: %+v, %v", got, err)
	}
	// a's view is the remote's: bob holds it; alice's claim is not kept.
	v, err := a.b.Get(t.Context(), id)
	if err != nil || v.Claim == nil || v.Claim.Holder.Human != "bob" {
		t.Fatalf("a sees %+v, %v", v, err)
	}
	if mustRef(t, a, board.RefName(id)).String() != remoteRef(t, bare, board.RefName(id)) {
		t.Fatal("a's item is not the remote's after the sync")
	}
	// alice's stale token is rejected.
	if _, err := a.b.Complete(t.Context(), id, ia.Claim.ClaimToken, "x"); !apperr.Is(err, board.InvalidClaim) {
		t.Fatalf("complete with the lost token: %v, want INVALID_CLAIM", err)
	}
}

func TestSync_ReplayKeepsTokensMonotonic(t *testing.T) {
	_, a, b, id := sharedItem(t, "x")
	// b claims and releases three times through the remote (an authority
	// counts 1, 2, 3).
	b.authoritative()
	for i := 0; i < 3; i++ {
		it, err := b.b.Claim(t.Context(), id, board.Actor{Human: "bob"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.b.Release(t.Context(), id, it.Claim.ClaimToken, ""); err != nil {
			t.Fatal(err)
		}
	}
	// a, offline, meanwhile made a metadata change and a claim (token 1).
	if _, err := a.b.UpdateMeta(t.Context(), id, board.UpdateInput{ExpectedVersion: 1, Title: ptr("renamed offline"), Actor: board.Actor{Human: "alice"}}); err != nil {
		t.Fatal(err)
	}
	ia, err := a.b.Claim(t.Context(), id, board.Actor{Human: "alice"}, nil)
	if err != nil || ia.Claim.ClaimToken < 1 {
		t.Fatalf("offline claim: %+v %v", ia, err)
	}
	sum := a.sync(t)
	if len(sum.Lost) != 0 {
		t.Fatalf("lost %+v", sum.Lost)
	}
	v, err := b.b.Get(t.Context(), id)
	if err == nil {
		b.sync(t)
		v, err = b.b.Get(t.Context(), id)
	}
	if err != nil || v.Title != "renamed offline" || v.Claim == nil || v.Claim.Holder.Human != "alice" {
		t.Fatalf("after sync b sees %+v %v", v, err)
	}
	want := ia.Claim.ClaimToken // kept when above every remote token…
	if want <= 3 {
		want = 4 // …else the next one after the remote's 3
	}
	if v.Claim.ClaimToken != want {
		t.Fatalf("replayed claim token %d, want %d (offline token %d, remote counter 3)", v.Claim.ClaimToken, want, ia.Claim.ClaimToken)
	}
	// alice's agent keeps working with the token it was given when it
	// survived unchanged.
	if want == ia.Claim.ClaimToken {
		if _, err := a.b.Renew(t.Context(), id, want, nil); err != nil {
			t.Fatalf("renew with the surviving token: %v", err)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestAuthority_ClaimLostAtRemote(t *testing.T) {
	bare, a, b, id := sharedItem(t, "x")
	a.authoritative()
	b.authoritative()
	ib, err := b.b.Claim(t.Context(), id, board.Actor{Human: "bob"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	before := remoteRef(t, bare, board.RefName(id))
	// a has not seen bob's claim: its local item still says open.
	_, err = a.b.Claim(t.Context(), id, board.Actor{Human: "alice"}, nil)
	if !apperr.Is(err, board.NotClaimable) || !strings.Contains(apperr.Message(err), "bob") {
		t.Fatalf("a's claim: %v, want NOT_CLAIMABLE naming bob", err)
	}
	if remoteRef(t, bare, board.RefName(id)) != before {
		t.Fatal("the losing claim changed the remote")
	}
	// a was rolled back to the remote's state.
	if mustRef(t, a, board.RefName(id)).String() != before {
		t.Fatal("a's item was not rolled back to the remote's")
	}
	v, _ := a.b.Get(t.Context(), id)
	if v.Claim == nil || v.Claim.Holder.Human != "bob" || v.Claim.ClaimToken != ib.Claim.ClaimToken {
		t.Fatalf("a sees %+v", v.Claim)
	}
	// bob completes through the remote; alice can now see it done.
	if _, err := b.b.Complete(t.Context(), id, ib.Claim.ClaimToken, "done"); err != nil {
		t.Fatal(err)
	}
	a.sync(t)
	if v, _ := a.b.Get(t.Context(), id); v.Status != board.StatusDone {
		t.Fatalf("a sees %s after sync", v.Status)
	}
}

func TestAuthority_UnreachableRemoteTakesTheTransitionBack(t *testing.T) {
	bare := newRemote(t)
	a := cloneOf(t, bare)
	id := a.create(t, "x")
	a.sync(t)
	a.authoritative()
	tip := mustRef(t, a, board.RefName(id))
	if err := os.Rename(bare, bare+".gone"); err != nil {
		t.Fatal(err)
	}
	_, err := a.b.Claim(t.Context(), id, board.Actor{Human: "alice"}, nil)
	if !apperr.Is(err, gitstore.RemoteFailed) {
		t.Fatalf("claim with the remote gone: %v, want REMOTE", err)
	}
	if mustRef(t, a, board.RefName(id)) != tip {
		t.Fatal("the unaccepted claim was left on the local ref")
	}
	if err := os.Rename(bare+".gone", bare); err != nil {
		t.Fatal(err)
	}
	if _, err := a.b.Claim(t.Context(), id, board.Actor{Human: "alice"}, nil); err != nil {
		t.Fatalf("claim once the remote is back: %v", err)
	}
}

func TestSync_SteeringAndNotesMergeWithoutLoss(t *testing.T) {
	bare := newRemote(t)
	a := cloneOf(t, bare)
	gt.Git(t, a.dir, "commit", "-q", "--allow-empty", "-m", "code")
	gt.Git(t, a.dir, "push", "-q", "origin", "HEAD:refs/heads/main")
	gt.Git(t, a.dir, "fetch", "-q")
	sa := steering.Open(a.g, true)
	if _, err := sa.Put(t.Context(), steering.PutInput{ID: "GP-1", Kind: "guiding-principle", Statement: "v1"}); err != nil {
		t.Fatal(err)
	}
	a.sync(t)
	b := cloneOf(t, bare)
	b.sync(t)
	sb := steering.Open(b.g, true)
	sa.Now = func() time.Time { return time.Now().Add(time.Second) }
	sb.Now = func() time.Time { return time.Now().Add(2 * time.Second) }
	if _, err := sa.Put(t.Context(), steering.PutInput{ID: "GP-1", Kind: "guiding-principle", Statement: "amended by a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Put(t.Context(), steering.PutInput{ID: "GP-1", Kind: "guiding-principle", Statement: "amended by b"}); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Put(t.Context(), steering.PutInput{ID: "GP-2", Kind: "policy", Statement: "only b"}); err != nil {
		t.Fatal(err)
	}
	head := gt.Git(t, a.dir, "rev-parse", "HEAD")
	gt.Git(t, a.dir, "notes", "--ref=ideate", "add", "-m", "note from a", head)
	gt.Git(t, b.dir, "notes", "--ref=ideate", "add", "-m", "note from b", head)
	a.sync(t)
	if s := b.sync(t); s.Steering != "merged" || s.Notes != "merged" {
		t.Fatalf("b's sync: steering %s, notes %s", s.Steering, s.Notes)
	}
	a.sync(t)
	for _, c := range []*clone{a, b} {
		it, err := steering.Open(c.g, true).Get("GP-1")
		if err != nil {
			t.Fatal(err)
		}
		var all []string
		all = append(all, it.Statement)
		for _, h := range it.History {
			all = append(all, h.Statement)
		}
		if strings.Join(all, "|") != "amended by b|amended by a|v1" {
			t.Fatalf("GP-1 versions in %s: %v", c.dir, all)
		}
		if it2, err := steering.Open(c.g, true).Get("GP-2"); err != nil || it2 == nil {
			t.Fatalf("GP-2 missing in %s: %v", c.dir, err)
		}
		note := gt.Git(t, c.dir, "notes", "--ref=ideate", "show", head)
		if !strings.Contains(note, "note from a") || !strings.Contains(note, "note from b") {
			t.Fatalf("merged note in %s: %q", c.dir, note)
		}
	}
	gt.Fsck(t, a.dir)
	gt.Fsck(t, b.dir)
}

func TestSync_PlainGitPushAndFetchDoNotCorrupt(t *testing.T) {
	bare := newRemote(t)
	a := cloneOf(t, bare)
	id := a.create(t, "x")
	a.note(t, "one")
	a.sync(t)
	b := cloneOf(t, bare)
	// A user fetches straight over the local namespace, then pushes it all.
	gt.Git(t, b.dir, "fetch", "-q", "origin", "+refs/ideate/*:refs/ideate/*")
	b.note(t, "two")
	gt.Git(t, b.dir, "push", "-q", "origin", "refs/ideate/*:refs/ideate/*")
	// And a pushes a stale state without force: git refuses it.
	a.note(t, "three")
	if out, err := gt.GitErr(a.dir, "push", "origin", "refs/ideate/record:refs/ideate/record"); err == nil {
		t.Fatalf("a non-fast-forward plain push was accepted:\n%s", out)
	}
	// The tool reads and syncs everything afterwards.
	a.sync(t)
	b.sync(t)
	a.sync(t)
	ra, rb := a.recordIDs(t), b.recordIDs(t)
	if len(ra) != 3 || strings.Join(ra, ",") != strings.Join(rb, ",") {
		t.Fatalf("records after plain git traffic:\n a %v\n b %v", ra, rb)
	}
	if v, err := b.b.Get(t.Context(), id); err != nil || v == nil {
		t.Fatalf("item after plain git traffic: %v %v", v, err)
	}
	gt.Fsck(t, a.dir)
	gt.Fsck(t, b.dir)
	gt.Fsck(t, bare)
}

// freePort finds a TCP port on 127.0.0.1 nobody listens on.
func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startDaemon serves root with `git daemon` (pushes enabled) and returns
// the git:// URL prefix.
func startDaemon(t *testing.T, root string) string {
	t.Helper()
	port := freePort(t)
	cmd := exec.Command("git", "daemon", "--reuseaddr", "--listen=127.0.0.1", fmt.Sprintf("--port=%d", port),
		"--export-all", "--enable=receive-pack", "--base-path="+root, root)
	// In a group of its own, killed whole: `git daemon` runs git-daemon
	// as its child, which outlived a kill of git alone.
	osproc.Group(cmd)
	if err := cmd.Start(); err != nil {
		t.Skipf("git daemon cannot start: %v", err)
	}
	t.Cleanup(func() { osproc.KillGroup(cmd.Process); cmd.Wait() })
	for i := 0; i < 200; i++ {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			url := fmt.Sprintf("git://127.0.0.1:%d/", port)
			daemonGroups.Store(url, cmd.Process.Pid)
			return url
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatal("git daemon did not start listening")
	return ""
}

// daemonGroups holds the process group of each git daemon startDaemon
// started, by the URL prefix it returned.
var daemonGroups sync.Map

// daemonAtRest waits until the git daemon serving url serves no
// connection. A client killed mid-push leaves its receive-pack running,
// which moves the pushed objects in, then the refs: a `git fsck` of the
// repository meanwhile can list the objects before and read the refs
// after, and report the new tips' objects missing.
func daemonAtRest(t *testing.T, url string) {
	t.Helper()
	pgid := ""
	daemonGroups.Range(func(k, v any) bool {
		if strings.HasPrefix(url, k.(string)) {
			pgid = strconv.Itoa(v.(int))
		}
		return pgid == ""
	})
	if pgid == "" {
		t.Fatalf("no git daemon of startDaemon serves %s", url)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		out, err := exec.Command("ps", "-A", "-o", "pgid=", "-o", "args=").Output()
		if err != nil {
			t.Fatalf("ps: %v", err)
		}
		busy := false
		for _, l := range strings.Split(string(out), "\n") {
			// The listener's own arguments name receive-pack; a
			// connection's are "git-daemon --serve …" and its
			// "git receive-pack ." or "git upload-pack …".
			if f := strings.Fields(l); len(f) > 2 && f[0] == pgid {
				busy = busy || f[2] == "--serve" || strings.HasSuffix(f[1], "-pack") || strings.HasSuffix(f[2], "-pack")
			}
		}
		if !busy {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("git daemon still serves a connection after 20s:\n%s", out)
		}
	}
}

func TestSync_OverGitDaemon(t *testing.T) {
	bare := newRemote(t)
	url := startDaemon(t, filepath.Dir(bare)) + filepath.Base(bare)
	a, b := cloneOf(t, url), cloneOf(t, url)
	id := a.create(t, "over the daemon")
	a.note(t, "a")
	a.sync(t)
	b.sync(t)
	a.authoritative()
	b.authoritative()
	if _, err := b.b.Claim(t.Context(), id, board.Actor{Human: "bob"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := a.b.Claim(t.Context(), id, board.Actor{Human: "alice"}, nil); !apperr.Is(err, board.NotClaimable) {
		t.Fatalf("second claim over git://: %v, want NOT_CLAIMABLE", err)
	}
	a.sync(t)
	if len(a.recordIDs(t)) != 1 || mustRef(t, a, board.RefName(id)) != mustRef(t, b, board.RefName(id)) {
		t.Fatal("the clones disagree after syncing over git daemon")
	}
}

// Two clones append to the execution log offline, verdicts about one
// shared commit: after syncing both ways each holds every entry once, in
// the same order, and the commit's note carries every verdict line once.
func TestSync_ExecLogUnionExactlyOnce(t *testing.T) {
	bare := newRemote(t)
	a, b := cloneOf(t, bare), cloneOf(t, bare)
	head := gt.Git(t, a.dir, "rev-parse", "HEAD")
	var want []string
	for i := 0; i < 3; i++ {
		for _, c := range []*clone{a, b} {
			e, err := execlog.Open(c.g).Append(t.Context(), execlog.Entry{Task: "S1-01/T1", Attempt: i + 1, Phase: "green",
				Event: "verdict", Result: "FAIL", Commit: head, Detail: filepath.Base(filepath.Dir(c.dir))})
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, e.ID)
		}
	}
	if s := a.sync(t); s.Exec != "pushed" {
		t.Fatalf("a's sync: exec %s, want pushed", s.Exec)
	}
	if s := b.sync(t); s.Exec != "merged" {
		t.Fatalf("b's sync: exec %s, want merged", s.Exec)
	}
	if s := a.sync(t); s.Exec != "pulled" {
		t.Fatalf("a's second sync: exec %s, want pulled", s.Exec)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(want)))
	for _, c := range []*clone{a, b} {
		es, err := execlog.Open(c.g).List(t.Context(), execlog.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range es {
			got = append(got, e.ID)
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("%s holds %v, want %v", c.dir, got, want)
		}
		note := gt.Git(t, c.dir, "notes", "--ref=ideate", "show", head)
		for _, id := range want {
			if strings.Count(note, "(exec "+id+")") != 1 {
				t.Fatalf("the note in %s does not name %s once:\n%s", c.dir, id, note)
			}
		}
		gt.Fsck(t, c.dir)
	}
	if mustRef(t, a, execlog.Ref) != mustRef(t, b, execlog.Ref) {
		t.Fatal("the clones' exec refs differ after syncing both ways")
	}
	if remoteRef(t, bare, execlog.Ref) != mustRef(t, a, execlog.Ref).String() {
		t.Fatal("the remote does not hold the merged log")
	}
	gt.Fsck(t, bare)
}
