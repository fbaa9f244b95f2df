// Package teamsync shares a repository's ideate state through a git remote
// the team already has: `git ideate sync` and the remote-authoritative
// board verbs.
//
// # Model
//
// The remote is the authority. A git server applies each ref update
// atomically against the old value the pusher names, so every push here is
// `git push --atomic --force-with-lease=<ref>:<what we last saw there>`:
// a claim pushed that way is won by exactly one clone, and no server of our
// own is needed.
//
// A fetch never writes refs/ideate/*: it brings the remote's refs into
// refs/ideate-remotes/<remote>/… (gitstore.TrackingRef), and the local refs
// then move by compare-and-swap:
//
//   - records, steering, notes and the execution log are unions: when
//     both sides moved, a merge commit (parents: local, remote) holds
//     every file of both trees
//     (steering items amended on both sides keep every amendment; a commit
//     annotated on both sides keeps both notes);
//   - task refs (contracts, attempts, runs) are unions too, the newer
//     contract standing when both sides changed one; task branches travel
//     as refs/ideate/branches/<task> and only ever move forward (tasks.go);
//   - an item fast-forwards when one side is behind; when both moved, the
//     local transitions are replayed onto the remote head one by one and
//     re-checked there (board.Rebase): one that no longer applies (a claim
//     that lost to a remote claim, a complete after a remote cancel) is
//     dropped, reported and recorded as a sync-conflict record, never kept.
//
// Then everything that changed is pushed in one atomic push, each ref with
// its lease; a rejection (someone pushed meanwhile) starts the round again
// from a new fetch, a bounded number of times.
package teamsync

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/record"
	"github.com/ideate/git-ideate/internal/steering"
)

// MaxRounds bounds how many fetch-merge-push rounds a sync tries before
// giving up on a remote that keeps moving. Between rounds a sync that lost
// a race waits a random while that grows with each loss (backoff), so a
// few clones syncing at once take turns instead of colliding again.
const MaxRounds = 24

// Syncer syncs one repository with one remote.
type Syncer struct {
	Git    *gitstore.Store
	Record *record.Store
	Board  *board.Store
	Remote string
	// Progress receives git's progress and one line per phase (a
	// terminal); nil is quiet.
	Progress io.Writer
}

// Lost is a local transition the remote did not take.
type Lost struct {
	Item       string        `json:"item"`
	Transition string        `json:"transition"`
	Code       apperr.Code   `json:"code"`
	Message    string        `json:"message"`
	Holder     *board.Actor  `json:"holder,omitempty"`
	Commit     gitstore.Hash `json:"-"`
	At         string        `json:"-"`                // when the transition was made
	Record     string        `json:"record,omitempty"` // the sync-conflict record
	// Voids is the work-completion record of a dropped completion, which
	// the sync-conflict record references as "voids".
	Voids string `json:"voids,omitempty"`
}

// Summary is what a sync did.
type Summary struct {
	Remote   string `json:"remote"`
	Rounds   int    `json:"rounds"`
	Record   string `json:"record"`   // up-to-date, pulled, pushed, merged, created
	Steering string `json:"steering"` // same
	Notes    string `json:"notes"`    // same
	Exec     string `json:"exec"`     // same: the execution log
	// Tasks and Branches count the task refs and task branches that
	// moved: pulled, pushed, merged (tasks only).
	Tasks        Moved `json:"tasks"`
	Branches     Moved `json:"branches"`
	ItemsPulled  int   `json:"items_pulled"`
	ItemsPushed  int   `json:"items_pushed"`
	ItemsRebased int   `json:"items_rebased"`
	// Archived counts the refs this clone folded into the archive
	// (board.ArchiveRef) and took off the remote; Unarchived the local
	// refs it dropped because another clone had archived them.
	Archived   int    `json:"archived"`
	Unarchived int    `json:"unarchived"`
	RefsPushed int    `json:"refs_pushed"`
	Lost       []Lost `json:"lost"`
}

func (y *Syncer) progress(format string, a ...any) {
	if y.Progress != nil {
		fmt.Fprintf(y.Progress, format+"\n", a...)
	}
}

// Sync runs fetch, merge and push rounds until the remote accepts the
// push (or MaxRounds is reached: CONFLICT). ctx bounds the whole sync: when
// it is done, the git process running (fetch or push) is killed with
// everything it started and Sync returns ctx.Err(); refs already levelled
// locally stay levelled (each moved by compare-and-swap), and the next sync
// picks up from there.
func (y *Syncer) Sync(ctx context.Context) (*Summary, error) {
	sum := &Summary{Remote: y.Remote, Lost: []Lost{}}
	if err := y.Git.ClearStaged(ctx, y.Remote); err != nil {
		return sum, err
	}
	last := ""
	lost := map[gitstore.Hash]bool{}
	for round := 1; round <= MaxRounds; round++ {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		start := time.Now()
		sum.Rounds = round
		opt := gitstore.RemoteOptions{Progress: y.Progress}
		if err := y.Git.Fetch(ctx, y.Remote, opt); err != nil {
			return sum, err
		}
		r, err := y.round(ctx, lost)
		if err != nil {
			if apperr.Is(err, apperr.Conflict) {
				continue // a local writer moved a ref meanwhile: again
			}
			return sum, err
		}
		if len(r.lost) > 0 && y.Record != nil {
			// The sync-conflict records travel in this round's push, with
			// the merge they describe.
			if err := y.recordLost(ctx, r); err != nil {
				return sum, err
			}
		}
		sum.Lost = append(sum.Lost, r.lost...)
		if len(r.updates) == 0 {
			r.fill(sum)
			return y.finish(ctx, sum)
		}
		y.progress("pushing %d ref(s) to %s", len(r.updates), y.Remote)
		// One atomic push, each ref leased on its tracking copy (which
		// holds the update's Old); git moves the tracking copies of what
		// it pushed.
		res, err := y.Git.PushMany(ctx, y.Remote, r.updates, opt)
		if err != nil {
			return sum, err
		}
		if allOK(res) {
			sum.RefsPushed += len(r.updates)
			sum.Archived += y.archived(ctx, r)
			r.fill(sum)
			return y.finish(ctx, sum)
		}
		if r := firstReject(res); !r.Raced() {
			return sum, apperr.New(gitstore.RemoteFailed, "the remote %s refused %s: %s", y.Remote, r.Ref, r.Reason)
		}
		last = firstReject(res).Reason
		y.progress("the remote moved meanwhile (%s); starting again", last)
		// Other pushers are racing for the same refs: wait a random,
		// growing while, so that the next round does not collide with
		// them again in lockstep.
		if err := backoff(ctx, round, time.Since(start)); err != nil {
			return sum, err
		}
	}
	return sum, apperr.New(apperr.Conflict, "the remote %s kept refusing the push (last: %s); gave up after %d rounds (run sync again)", y.Remote, last, MaxRounds)
}

// finish packs the item refs a sync may have created by the thousand
// (fetch writes one loose tracking ref per new item, a first sync one
// local ref per pulled item).
func (y *Syncer) finish(ctx context.Context, sum *Summary) (*Summary, error) {
	y.Git.PackRefsNow(ctx, 256, board.ItemsPrefix, gitstore.TrackingRef(y.Remote, board.ItemsPrefix))
	if sum.Archived > 0 || sum.Unarchived > 0 {
		// Deleting a packed ref rewrites packed-refs; loose ones the
		// deletions left are packed again the same way.
		y.Git.PackRefsNow(ctx, 16, board.ItemsPrefix, gitstore.TrackingRef(y.Remote, board.ItemsPrefix))
	}
	return sum, nil
}

// recordLost writes a sync-conflict record for each transition of r.lost
// and queues the record ref again, so the records go out in the same push
// as the item refs they explain. A dropped completion's record "voids" the
// work-completion record that completion wrote, so a reader can tell which
// completion stands.
func (y *Syncer) recordLost(ctx context.Context, r *roundResult) error {
	voided, err := y.completionRecords(r.lost)
	if err != nil {
		return err
	}
	for i := range r.lost {
		l := &r.lost[i]
		refs := []record.Reference{{Rel: "concerns", ID: l.Item}}
		extra := ""
		if id := voided[i]; id != "" {
			refs = append(refs, record.Reference{Rel: "voids", ID: id})
			extra = fmt.Sprintf("\n\nThe work-completion record %s that this completion wrote does not stand: the item's completion is the one on the remote.", id)
		}
		res, err := y.Record.Append(ctx, record.AppendInput{
			Kind:               "sync-conflict",
			Claim:              fmt.Sprintf("Local %s of item %s was not accepted by remote %s: %s", l.Transition, l.Item, y.Remote, l.Message),
			VerificationAnchor: "board:" + l.Item,
			Scope:              "board/" + l.Item,
			Source:             record.Source{CapturePoint: "sync", SessionID: "sync-" + y.Remote},
			References:         refs,
			Content: fmt.Sprintf("During `git ideate sync` with %s, the local %s transition of board item %s (commit %s) "+
				"no longer applied on the remote's head and was dropped.\n\n%s: %s%s", y.Remote, l.Transition, l.Item, l.Commit, l.Code, l.Message, extra),
		})
		if err != nil {
			return err
		}
		l.Record = res.Record.ID
		l.Voids = voided[i]
	}
	kept := r.updates[:0]
	for _, u := range r.updates {
		if u.Ref != record.RefName {
			kept = append(kept, u)
		}
	}
	r.updates = kept
	was := r.record
	if r.record, err = y.union(ctx, record.RefName, keepOurs, r); err != nil {
		return err
	}
	if was == "merged" {
		r.record = was
	}
	return nil
}

// completionRecords finds, for each lost complete transition, the
// work-completion record it wrote (board.Complete anchors it at
// "board:<item>#complete@<event time>"); "" where there is none.
func (y *Syncer) completionRecords(lost []Lost) ([]string, error) {
	out := make([]string, len(lost))
	want := map[string]int{}
	for i, l := range lost {
		if l.Transition == string(board.TComplete) && l.At != "" {
			want["board:"+l.Item+"#complete@"+l.At] = i
		}
	}
	if len(want) == 0 {
		return out, nil
	}
	sn, err := y.Record.Snapshot()
	if err != nil {
		return nil, err
	}
	err = sn.Walk("", func(rec *record.Record) (bool, error) {
		if rec.Kind == "work-completion" {
			if i, ok := want[rec.VerificationAnchor]; ok {
				out[i] = rec.ID
			}
		}
		return true, nil
	})
	return out, err
}

// backoff sleeps a random duration below took (how long the lost round
// took) times 2^(round-1), at most 8 such lengths and 5 s, or until ctx is
// done: the rounds of the pushers a sync collided with take about as long
// as its own.
func backoff(ctx context.Context, round int, took time.Duration) error {
	max := max(took, 20*time.Millisecond) << min(round-1, 3)
	max = min(max, 5*time.Second)
	t := time.NewTimer(time.Duration(rand.Int64N(int64(max))))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func allOK(res []gitstore.PushResult) bool {
	for _, r := range res {
		if !r.OK {
			return false
		}
	}
	return true
}

// firstReject is the refusal that explains a failed push: a ref refused
// for its own sake rather than as part of the atomic whole.
func firstReject(res []gitstore.PushResult) gitstore.PushResult {
	for _, r := range res {
		if !r.OK && r.Reason != "atomic push failed" && r.Reason != "atomic transaction failed" {
			return r
		}
	}
	for _, r := range res {
		if !r.OK {
			return r
		}
	}
	return gitstore.PushResult{Reason: "rejected"}
}

type roundResult struct {
	updates                 []gitstore.PushUpdate
	record, steering, notes string
	exec                    string
	pulled, pushed, rebased int
	tasks, branches         Moved
	lost                    []Lost
	unarchived              int
	// what archiveRound queued: the local archive moves from archiveFrom
	// to archiveTo, and archivedRefs are deleted, once the push is taken
	archiveFrom, archiveTo gitstore.Hash
	archivedRefs           []gitstore.PushUpdate
}

// Moved counts refs of one kind a sync moved.
type Moved struct {
	Pulled int `json:"pulled"`
	Pushed int `json:"pushed"`
	Merged int `json:"merged,omitempty"`
}

// count adds what one ref's levelling did to m.
func (r *roundResult) count(did string, m *Moved) {
	switch did {
	case "pulled":
		m.Pulled++
	case "pushed":
		m.Pushed++
	case "merged":
		m.Merged++
	}
}

func (r *roundResult) fill(sum *Summary) {
	sum.Tasks, sum.Branches = r.tasks, r.branches
	sum.Record, sum.Steering, sum.Notes, sum.Exec = r.record, r.steering, r.notes, r.exec
	sum.ItemsPulled, sum.ItemsPushed, sum.ItemsRebased = r.pulled, r.pushed, r.rebased
	sum.Unarchived += r.unarchived
}

// round merges the fetched tracking refs into the local ones and returns
// the pushes that would bring the remote level.
func (y *Syncer) round(ctx context.Context, lost map[gitstore.Hash]bool) (*roundResult, error) {
	r := &roundResult{}
	var err error
	// The archive first: whether a ref the remote no longer has was
	// archived there is read from it.
	if _, err = y.union(ctx, board.ArchiveRef, y.newerArchived, r); err != nil {
		return nil, err
	}
	if r.record, err = y.union(ctx, record.RefName, keepOurs, r); err != nil {
		return nil, err
	}
	if r.steering, err = y.union(ctx, steering.RefName, steering.Resolve(y.Git), r); err != nil {
		return nil, err
	}
	if r.notes, err = y.union(ctx, gitstore.NotesRef, y.catNotes, r); err != nil {
		return nil, err
	}
	// The execution log is a union like the record: an entry's path is
	// its ULID, so both sides' entries survive and none appears twice.
	if r.exec, err = y.union(ctx, execlog.Ref, keepOurs, r); err != nil {
		return nil, err
	}
	if err := y.tasks(ctx, r); err != nil {
		return nil, err
	}
	if err := y.items(ctx, r, lost); err != nil {
		return nil, err
	}
	if err := y.archiveRound(ctx, r); err != nil {
		return nil, err
	}
	return r, nil
}

// keepOurs resolves two different record files at one path: records are
// never rewritten, so the same id can only differ if two clones minted one
// ULID (practically never); the local file stays.
func keepOurs(_ string, ours, _ gitstore.TreeEntry) (gitstore.TreeEntry, error) { return ours, nil }

// catNotes merges two notes on one commit: the lines of both, each once.
func (y *Syncer) catNotes(_ string, ours, theirs gitstore.TreeEntry) (gitstore.TreeEntry, error) {
	a, err := y.Git.ReadBlob(ours.Hash)
	if err != nil {
		return ours, err
	}
	b, err := y.Git.ReadBlob(theirs.Hash)
	if err != nil {
		return ours, err
	}
	seen := map[string]bool{}
	var out bytes.Buffer
	for _, data := range [][]byte{a, b} {
		for _, l := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
			if !seen[l] {
				seen[l] = true
				out.WriteString(l + "\n")
			}
		}
	}
	h, err := y.Git.WriteBlob(out.Bytes())
	ours.Hash = h
	return ours, err
}

// union brings ref and its tracking copy together and queues the push
// that levels the remote. It returns what it did.
func (y *Syncer) union(ctx context.Context, ref string, resolve gitstore.ResolveFunc, r *roundResult) (string, error) {
	tr := gitstore.TrackingRef(y.Remote, ref)
	local, err := y.Git.Ref(ref)
	if err != nil {
		return "", err
	}
	theirs, err := y.Git.Ref(tr)
	if err != nil {
		return "", err
	}
	push := func(h gitstore.Hash) {
		r.updates = append(r.updates, gitstore.PushUpdate{Ref: ref, New: h, Old: theirs})
	}
	switch {
	case local == theirs:
		return "up-to-date", nil
	case theirs == gitstore.ZeroHash:
		push(local)
		return "pushed", nil
	case local == gitstore.ZeroHash:
		return "pulled", y.Git.UpdateRef(ctx, ref, theirs, gitstore.ZeroHash)
	}
	if ok, err := y.Git.IsAncestor(theirs, local); err != nil {
		return "", err
	} else if ok {
		push(local)
		return "pushed", nil
	}
	if ok, err := y.Git.IsAncestor(local, theirs); err != nil {
		return "", err
	} else if ok {
		return "pulled", y.Git.UpdateRef(ctx, ref, theirs, local)
	}
	lc, err := y.Git.ReadCommit(local)
	if err != nil {
		return "", err
	}
	tc, err := y.Git.ReadCommit(theirs)
	if err != nil {
		return "", err
	}
	tree, err := y.Git.UnionTrees(lc.Tree, tc.Tree, resolve)
	if err != nil {
		return "", err
	}
	sig := y.Git.Identity()
	m, err := y.Git.WriteCommit(&gitstore.Commit{Tree: tree, Parents: []gitstore.Hash{local, theirs}, Author: sig, Committer: sig, Message: "sync: merge " + ref + " from " + y.Remote + "\n"})
	if err != nil {
		return "", err
	}
	if err := y.Git.UpdateRef(ctx, ref, m, local); err != nil {
		return "", err
	}
	push(m)
	return "merged", nil
}

// dropped reports the local transitions a rebase of item id dropped, each
// once per sync.
func (y *Syncer) dropped(id string, res *board.RebaseResult, r *roundResult, lost map[gitstore.Hash]bool) {
	for _, d := range res.Dropped {
		if lost[d.Commit] {
			continue
		}
		lost[d.Commit] = true
		r.lost = append(r.lost, Lost{Item: id, Transition: d.Event.Transition, Code: d.Err.Code,
			Message: d.Err.Msg, Holder: d.Holder, Commit: d.Commit, At: d.Event.At})
	}
}

// items levels every item ref: pull what only the remote has or moved,
// queue what only we have or moved, rebase what both moved.
func (y *Syncer) items(ctx context.Context, r *roundResult, lost map[gitstore.Hash]bool) error {
	locals, err := y.Git.Refs(board.ItemsPrefix)
	if err != nil {
		return err
	}
	remotes, err := y.Git.Refs(gitstore.TrackingRef(y.Remote, board.ItemsPrefix))
	if err != nil {
		return err
	}
	ids := map[string][2]gitstore.Hash{}
	for _, l := range locals {
		v := ids[strings.TrimPrefix(l.Name, board.ItemsPrefix)]
		v[0] = l.Hash
		ids[strings.TrimPrefix(l.Name, board.ItemsPrefix)] = v
	}
	tp := gitstore.TrackingRef(y.Remote, board.ItemsPrefix)
	for _, t := range remotes {
		id := strings.TrimPrefix(t.Name, tp)
		v := ids[id]
		v[1] = t.Hash
		ids[id] = v
	}
	keys := make([]string, 0, len(ids))
	for id, v := range ids {
		if v[0] != v[1] {
			keys = append(keys, id)
		}
	}
	sort.Strings(keys)
	for _, id := range keys {
		local, theirs := ids[id][0], ids[id][1]
		ref := board.RefName(id)
		// A ref on one side only may be one the archive holds: archived
		// by another clone (the remote's ref deleted), or put back on the
		// remote by a clone that did not know the archive.
		if local == gitstore.ZeroHash || theirs == gitstore.ZeroHash {
			one := local
			if one == gitstore.ZeroHash {
				one = theirs
			}
			a, held, err := y.inArchive(one, board.ArchivePath(id))
			if err != nil {
				return err
			}
			switch {
			case held && local == gitstore.ZeroHash:
				r.updates = append(r.updates, gitstore.PushUpdate{Ref: ref, Old: theirs})
				continue
			case held:
				if err := y.Git.UpdateRef(ctx, ref, gitstore.ZeroHash, local); err != nil && !apperr.Is(err, apperr.Conflict) {
					return err
				}
				r.unarchived++
				continue
			case a != gitstore.ZeroHash && theirs == gitstore.ZeroHash:
				// Local transitions the archive lacks (a reopen here, or
				// ones made before the archive): replayed onto the
				// archived tip; what remains makes the item live again.
				res, err := y.Board.Rebase(ctx, id, a)
				if err != nil {
					return err
				}
				y.dropped(id, res, r, lost)
				if res.New == a {
					if err := y.Git.UpdateRef(ctx, ref, gitstore.ZeroHash, a); err != nil && !apperr.Is(err, apperr.Conflict) {
						return err
					}
					r.unarchived++
				} else {
					r.updates = append(r.updates, gitstore.PushUpdate{Ref: ref, New: res.New})
					r.pushed++
				}
				continue
			}
		}
		if theirs == gitstore.ZeroHash {
			r.updates = append(r.updates, gitstore.PushUpdate{Ref: ref, New: local})
			r.pushed++
			continue
		}
		res, err := y.Board.Rebase(ctx, id, theirs)
		if err != nil {
			return err
		}
		y.dropped(id, res, r, lost)
		switch {
		case res.New == theirs:
			r.pulled++
		case res.FastForward:
			r.updates = append(r.updates, gitstore.PushUpdate{Ref: ref, New: res.New, Old: theirs})
			r.pushed++
		default:
			r.updates = append(r.updates, gitstore.PushUpdate{Ref: ref, New: res.New, Old: theirs})
			r.rebased++
		}
	}
	return nil
}
