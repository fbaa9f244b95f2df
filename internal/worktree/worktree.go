package worktree

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/osproc"
	"github.com/ideate/git-ideate/internal/pathglob"
	"github.com/ideate/git-ideate/internal/secretgate"
	"github.com/ideate/git-ideate/internal/textfmt"
)

// RefPrefix holds one ref per task: its contract and its recorded runs.
const RefPrefix = "refs/ideate/tasks/"

// BranchPrefix names the branch a task's worktree works on.
const BranchPrefix = "ideate/task/"

// Format of a task ref's tree.
var format = gitstore.Format{File: "ideate-format", Kind: "ideate-task", Version: 1, Code: apperr.FormatVersion, What: "a task ref"}

const contractFile = "contract.json"

// ExecutingDir, under the clone's state directory (.git/ideate), holds one
// empty file per open task, named by its slug: a sprint executes while it
// is not empty. Start adds the task's file and Close removes it, so a
// hook can tell with one directory read.
const ExecutingDir = "executing"

// CopyFile is the read-only copy of the contract in a worktree's git
// directory, for the worker to read; the gates read the ref.
const CopyFile = "ideate-task.json"

// Contract statuses.
const (
	StatusOpen      = "open"
	StatusCompleted = "completed"
	StatusReleased  = "released"
	StatusAbandoned = "abandoned"
)

// Error codes.
const (
	// Taken: another holder works on the task under the same claim token.
	Taken apperr.Code = "TASK_TAKEN"
	// StaleToken: the caller's claim token is older than the task's.
	StaleToken apperr.Code = "STALE_TOKEN"
	// BaseMismatch: an open task is asked to start from another commit.
	BaseMismatch apperr.Code = "BASE_MISMATCH"
	// Dirty: the worktree holds uncommitted changes a completion would
	// discard.
	Dirty apperr.Code = "DIRTY_WORKTREE"
	// Blocked: a directory that is not a worktree sits where the task's
	// worktree goes.
	Blocked apperr.Code = "WORKTREE_BLOCKED"
	// Closed: the task is closed, so it has no next attempt.
	Closed apperr.Code = "TASK_CLOSED"
)

// Contract is what a task's worktree is for: written by `task start`,
// read by the gates from the task's ref. The worker gets a read-only copy;
// a change made anywhere else is not the contract.
type Contract struct {
	Task    string   `json:"task"`
	Attempt int      `json:"attempt"`
	Role    string   `json:"role"`
	Base    string   `json:"base"`
	Branch  string   `json:"branch"`
	Path    string   `json:"path"`
	Scope   []string `json:"scope"`
	Tests   []string `json:"tests"`
	// Item, Holder and Token are the claim the task is worked under
	// (a board item and its fencing token); opaque here.
	Item      string `json:"item,omitempty"`
	Holder    string `json:"holder,omitempty"`
	Token     int64  `json:"token,omitempty"`
	Status    string `json:"status"`
	Note      string `json:"note,omitempty"`
	UpdatedAt string `json:"updated_at"`
}

// BaseHash is the contract's base commit.
func (c *Contract) BaseHash() gitstore.Hash {
	h, _ := gitstore.ParseHash(c.Base)
	return h
}

// Manager keeps the tasks' worktrees of one repository.
type Manager struct {
	git *gitstore.Store
	// Root is where worktrees are created, one directory per task.
	Root string
	// Now is the clock.
	Now func() time.Time
	// Unarchive gives a finished task's ref back at the tip the board's
	// archive holds for it (path in the archive) and returns the ref's
	// tip; nil: refs are read as they are. The board owns the archive,
	// so the composition root passes its door in.
	Unarchive func(ctx context.Context, ref string, path []string) (gitstore.Hash, error)
}

// Open returns the manager of the repository git opened. Worktrees go to
// `git config ideate.worktreeRoot` when set, else .ideate/worktrees/ at the
// top of the main working tree (listed in .git/info/exclude so the main
// tree does not show them), else, in a bare repository,
// <git dir>/ideate/worktrees/.
func Open(git *gitstore.Store) *Manager {
	m := &Manager{git: git, Now: time.Now}
	if r, ok := git.Config().Get("ideate", "worktreeroot"); ok && r != "" {
		m.Root = r
		if !filepath.IsAbs(r) {
			m.Root = filepath.Join(filepath.Dir(git.Repo().CommonDir), r)
		}
	} else if top, ok := mainTop(git); ok {
		m.Root = filepath.Join(top, ".ideate", "worktrees")
	} else {
		m.Root = filepath.Join(git.Repo().StateDir(), "worktrees")
	}
	return m
}

// mainTop is the main working tree of a non-bare repository: the parent
// of a common directory named .git.
func mainTop(git *gitstore.Store) (string, bool) {
	if filepath.Base(git.Repo().CommonDir) != ".git" || git.Config().Bool("core", "bare", false) {
		return "", false
	}
	return filepath.Dir(git.Repo().CommonDir), true
}

var segment = textfmt.BoundedRegexp(`^[A-Za-z0-9][A-Za-z0-9._-]*$`, 64)

// CheckTaskID refuses a task id that cannot name a ref and a directory:
// one to four segments joined by '/', each a letter or digit then letters,
// digits, '.', '_' or '-' (at most 64), none ending in ".lock" or '.'.
func CheckTaskID(id string) error {
	segs := strings.Split(id, "/")
	if id == "" || len(segs) > 4 {
		return apperr.New(apperr.Schema, "task id %q must be 1 to 4 segments joined by '/'", id)
	}
	for _, s := range segs {
		if !segment().MatchString(s) || strings.HasSuffix(s, ".lock") || strings.HasSuffix(s, ".") {
			return apperr.New(apperr.Schema, "task id %q: segment %q must start with a letter or digit and hold only letters, digits, '.', '_' and '-' (not ending in '.' or \".lock\")", id, s)
		}
	}
	return nil
}

// slug is the task id as one ref or path component: '/' becomes '+',
// which ids cannot hold.
func slug(id string) string { return strings.ReplaceAll(id, "/", "+") }

// RefName is the ref of a task.
func RefName(task string) string { return RefPrefix + slug(task) }

// ArchivePath is where a finished task's ref lives in the board's archive
// (Manager.Unarchive).
func ArchivePath(task string) []string { return []string{"tasks", slug(task)} }

// Path is where the task's worktree lives.
func (m *Manager) Path(task string) string { return filepath.Join(m.Root, slug(task)) }

// Branch is the branch the task's worktree works on.
func Branch(task string) string { return BranchPrefix + slug(task) }

// BranchArchivePath is where the board's archive (board.ArchiveRef) holds
// the tip of task's branch once a sync folded the finished task away: its
// branch, like its ref, then leaves the refs every push advertises.
func BranchArchivePath(task string) []string { return []string{"branches", slug(task)} }

func (m *Manager) lock(ctx context.Context, task string) (func(), error) {
	return m.git.LockState(ctx, "task-"+slug(task)+".lock")
}

// read returns the task ref's tip and contract (nil when the task has
// none).
//
// A finished task a sync folded into the board's archive gets its ref back
// at the archived tip first, so reading and writing it work as before.
func (m *Manager) read(task string) (gitstore.Hash, *Contract, error) {
	var tip gitstore.Hash
	var err error
	if m.Unarchive != nil {
		tip, err = m.Unarchive(context.Background(), RefName(task), ArchivePath(task))
	} else {
		tip, err = m.git.Ref(RefName(task))
	}
	if err != nil || tip == gitstore.ZeroHash {
		return tip, nil, err
	}
	c, err := m.git.ReadCommit(tip)
	if err != nil {
		return tip, nil, err
	}
	if err := m.git.CheckRootFormat(c.Tree, format); err != nil {
		return tip, nil, err
	}
	e, ok, err := m.git.Lookup(c.Tree, []string{contractFile})
	if err != nil || !ok {
		return tip, nil, err
	}
	data, err := m.git.ReadBlob(e.Hash)
	if err != nil {
		return tip, nil, err
	}
	var ct Contract
	if err := json.Unmarshal(data, &ct); err != nil {
		return tip, nil, apperr.Wrap(apperr.Internal, err, "the contract of task %s does not parse", task)
	}
	return tip, &ct, nil
}

// Contract returns a task's contract as its ref holds it.
func (m *Manager) Contract(task string) (*Contract, error) {
	if err := CheckTaskID(task); err != nil {
		return nil, err
	}
	_, c, err := m.read(task)
	if err == nil && c == nil {
		return nil, apperr.New(apperr.NotFound, "no task %s has been started", task)
	}
	return c, err
}

// write commits c as the task's contract on top of tip (read under the
// task's lock, so it is the tip).
func (m *Manager) write(ctx context.Context, tip gitstore.Hash, c *Contract, message string) error {
	c.UpdatedAt = m.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	_, err = m.git.CommitOn(ctx, RefName(c.Task), tip, func(tip gitstore.Hash) (gitstore.Hash, string, error) {
		root := gitstore.ZeroHash
		if tip != gitstore.ZeroHash {
			pc, err := m.git.ReadCommit(tip)
			if err != nil {
				return root, "", err
			}
			root = pc.Tree
		}
		blob, err := m.git.WriteBlob(append(data, '\n'))
		if err != nil {
			return root, "", err
		}
		if root, err = m.git.EnsureFormat(root, format); err != nil {
			return root, "", err
		}
		root, err = m.git.Insert(root, nil, gitstore.TreeEntry{Mode: gitstore.ModeFile, Name: contractFile, Hash: blob}, true)
		return root, message, err
	})
	return err
}

// StartInput is what `task start` knows.
type StartInput struct {
	Task    string
	Attempt int    // from 1; 0 means 1, or the open contract's
	Role    string // the dispatched role (red-worker, green-worker, …)
	// Base is the commit a new worktree starts from ("" = HEAD of the
	// main working tree). An open task keeps its base; naming another is
	// BaseMismatch.
	Base string
	// Scope and Tests, when nil on a restart, keep the contract's.
	Scope []string
	Tests []string
	Item  string
	// Holder and Token identify the claim: a higher token takes an open
	// task over (the earlier claim was lost), the same token and holder
	// reuse it, anything else is refused.
	Holder string
	Token  int64
	// Claim, when set, takes the task's claim and returns its token (Token
	// is then ignored). It is decided before anything is made (through a
	// remote, one push): a start whose claim fails leaves nothing behind.
	Claim func(context.Context) (int64, error)
}

// Task is a contract with the state of its worktree.
type Task struct {
	Contract
	// Worktree: "ready", "missing" (no directory), "locked" (a `git
	// worktree add` that never finished), "removed" (closed, cleaned up),
	// "leftover" (closed, directory still there).
	Worktree string `json:"worktree"`
	// Head is the worktree's HEAD commit, when it has one.
	Head string `json:"head,omitempty"`
	// Reused is true when Start found the worktree in place.
	Reused bool `json:"reused,omitempty"`
	// Claim is filled by List's ClaimChecker: "held", "lost", or "".
	Claim     string `json:"claim,omitempty"`
	ClaimNote string `json:"claim_note,omitempty"`
}

var roleRe = textfmt.BoundedRegexp(`^[a-z][a-z0-9-]*$`, 40)

func (in *StartInput) check() error {
	if err := CheckTaskID(in.Task); err != nil {
		return err
	}
	if in.Attempt < 0 || in.Attempt > 99 {
		return apperr.New(apperr.Schema, "attempt must be 1..99, not %d", in.Attempt)
	}
	if in.Role != "" && !roleRe().MatchString(in.Role) {
		return apperr.New(apperr.Schema, "role %q must be lower-case letters, digits and '-' (e.g. red-worker)", in.Role)
	}
	if in.Token < 0 {
		return apperr.New(apperr.Schema, "claim token must not be negative")
	}
	if _, err := pathglob.Compile(in.Scope); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, t := range in.Tests {
		if strings.TrimSpace(t) == "" || strings.ContainsAny(t, "\n\r\x00") || len(t) > 500 {
			return apperr.New(apperr.Schema, "declared test %q must be one non-empty line of at most 500 bytes", t)
		}
		if seen[t] {
			return apperr.New(apperr.Schema, "declared test %q is named twice", t)
		}
		seen[t] = true
	}
	if strings.ContainsAny(in.Holder+in.Item, "\n\r\x00") {
		return apperr.New(apperr.Schema, "holder and item must be one line")
	}
	return nil
}

// Start creates the task's worktree, or reuses it, and writes its
// contract. It holds the task's lock (a file lock under .git/ideate/, which
// dies with its process) throughout, so two processes starting the same
// task are serialized: the second finds the first's contract and is
// refused unless it holds the same claim (Taken) or a newer one (a
// takeover). Whatever a killed Start left behind — a worktree `git
// worktree add` never finished, one never checked out, a directory without
// its administrative files — is repaired by the next Start, and none of
// it is ever handed to a worker: the contract is written last.
func (m *Manager) Start(ctx context.Context, in StartInput) (*Task, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	secretgate.Fields(&in.Role, &in.Holder, &in.Item)
	for i := range in.Scope {
		secretgate.Fields(&in.Scope[i])
	}
	for i := range in.Tests {
		secretgate.Fields(&in.Tests[i])
	}
	release, err := m.lock(ctx, in.Task)
	if err != nil {
		return nil, err
	}
	defer release()
	tip, cur, err := m.read(in.Task)
	if err != nil {
		return nil, err
	}
	open := cur != nil && cur.Status == StatusOpen
	var base gitstore.Hash
	var move *baseMove
	switch {
	case open && in.Base != "":
		b, err := m.resolve(ctx, in.Base)
		if err != nil {
			return nil, err
		}
		if b != cur.BaseHash() {
			return nil, apperr.New(BaseMismatch, "task %s is open from %s; it cannot start again from %s (abandon it first)", in.Task, cur.Base[:12], b.String()[:12])
		}
		base = b
	case open:
		base = cur.BaseHash()
	default:
		// A new start. A branch left by an earlier one (released,
		// completed then reopened) is continued, from the same base, so
		// the diff still shows everything the task changed.
		tipOfBranch, err := m.git.Ref("refs/heads/" + Branch(in.Task))
		if err != nil {
			return nil, err
		}
		spec := in.Base
		switch {
		case tipOfBranch != gitstore.ZeroHash && cur != nil:
			// Started again: the branch catches up with the current base
			// (HEAD, or the base named), so work merged since — the
			// task's dependencies — is in its worktree.
			base = cur.BaseHash()
			target := spec
			if target == "" {
				target = "HEAD"
			}
			to, err := m.resolve(ctx, target)
			if err != nil {
				return nil, err
			}
			if to != base {
				move = &baseMove{from: base, to: to, tip: tipOfBranch, named: spec != ""}
			}
		case spec == "" && tipOfBranch != gitstore.ZeroHash:
			base = tipOfBranch
		default:
			if spec == "" {
				spec = "HEAD"
			}
			if base, err = m.resolve(ctx, spec); err != nil {
				return nil, err
			}
		}
	}
	note := ""
	if move != nil {
		// A branch whose commits are all in the new base (or that has
		// none of its own) just moves there.
		merged, err := m.git.IsAncestor(move.tip, move.to)
		if err != nil {
			return nil, err
		}
		if merged {
			if err := m.git.UpdateRef(ctx, "refs/heads/"+Branch(in.Task), move.to, move.tip); err != nil {
				return nil, err
			}
			base, move = move.to, nil
			note = fmt.Sprintf("starts from the current base %s (its branch %s had no commit the base lacks)", base.String()[:12], Branch(in.Task))
		}
	}
	if in.Claim != nil {
		tok, err := in.Claim(ctx)
		if err != nil {
			return nil, err
		}
		in.Token, in.Claim = tok, nil
	}
	if open {
		switch {
		case in.Token < cur.Token:
			return nil, apperr.New(StaleToken, "task %s is held by %s with claim token %d; token %d is older", in.Task, cur.Holder, cur.Token, in.Token)
		case in.Token == cur.Token && in.Holder != cur.Holder:
			return nil, apperr.New(Taken, "task %s is already started by %s (claim token %d)", in.Task, orNobody(cur.Holder), cur.Token)
		case in.Token > cur.Token:
			note = fmt.Sprintf("taken over from %s (token %d)", orNobody(cur.Holder), cur.Token)
		}
	}
	next := m.newContract(in, cur, base, note)
	reused, err := m.ensure(ctx, next, base, open)
	if err != nil {
		return nil, err
	}
	if move != nil {
		why, err := m.catchUp(ctx, next, move)
		switch {
		case err != nil:
			return nil, err
		case why == "":
			next.Base = move.to.String()
			next.Note = fmt.Sprintf("starts from the current base %s: merged into its branch, which kept its commits since the old base %s", move.to.String()[:12], move.from.String()[:12])
		case move.named:
			// The base was asked for: nothing is started at another.
			if derr := m.git.DiscardWorktree(ctx, next.Path); derr != nil {
				return nil, derr
			}
			return nil, apperr.New(BaseMismatch, "task %s cannot start from %s: %s", in.Task, move.to.String()[:12], why)
		default:
			next.Note = fmt.Sprintf("continues branch %s from its old base %s, not the current base %s: %s", next.Branch, move.from.String()[:12], move.to.String()[:12], why)
		}
	}
	return m.finishStart(ctx, tip, next, open, reused)
}

// newContract is the contract a start writes; a restart (cur open) keeps
// what in does not restate.
func (m *Manager) newContract(in StartInput, cur *Contract, base gitstore.Hash, note string) *Contract {
	next := &Contract{
		Task: in.Task, Attempt: in.Attempt, Role: in.Role, Base: base.String(),
		Branch: Branch(in.Task), Path: m.Path(in.Task),
		Scope: nonNil(in.Scope), Tests: nonNil(in.Tests),
		Item: in.Item, Holder: in.Holder, Token: in.Token, Status: StatusOpen, Note: note,
	}
	open := cur != nil && cur.Status == StatusOpen
	if next.Attempt == 0 {
		next.Attempt = 1
		if open {
			next.Attempt = cur.Attempt
		}
	}
	if open {
		if next.Role == "" {
			next.Role = cur.Role
		}
		if in.Scope == nil {
			next.Scope = nonNil(cur.Scope)
		}
		if in.Tests == nil {
			next.Tests = nonNil(cur.Tests)
		}
	}
	return next
}

// finishStart writes the contract of a start whose worktree is ready.
func (m *Manager) finishStart(ctx context.Context, tip gitstore.Hash, next *Contract, open, reused bool) (*Task, error) {
	verb := "start"
	if open {
		verb = "restart"
	}
	msg := fmt.Sprintf("task %s: %s attempt %d", next.Task, verb, next.Attempt)
	if next.Role != "" {
		msg += " (" + next.Role + ")"
	}
	if err := m.write(ctx, tip, next, msg); err != nil {
		return nil, err
	}
	if err := m.writeCopy(next); err != nil {
		return nil, err
	}
	if err := m.mark(next.Task, true); err != nil {
		return nil, err
	}
	t := &Task{Contract: *next, Worktree: "ready", Reused: reused}
	if h, err := m.headOf(next.Path); err == nil {
		t.Head = h.String()
	}
	return t, nil
}

// baseMove is a closed task's branch to be moved from its old base to
// the current one when the task starts again.
type baseMove struct {
	from, to, tip gitstore.Hash
	named         bool // the base was named (--base), not HEAD
}

// catchUp merges the new base into the task's branch, in the task's
// fresh worktree (git merge: it is git's job). A merge, not a rebase: the
// branch only ever moves forward, as a branch other clones have synced
// must. It returns why not, with the branch and worktree as they were,
// when git cannot: a conflict (naming the files) or any other refusal.
func (m *Manager) catchUp(ctx context.Context, c *Contract, mv *baseMove) (string, error) {
	msg := fmt.Sprintf("task %s: start again from %s", c.Task, mv.to.String()[:12])
	_, err := m.git.RunGit(ctx, c.Path, "merge", "--quiet", "--no-edit", "--no-verify", "-m", msg, mv.to.String())
	if err == nil {
		return "", nil
	}
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	why := "git merge failed: " + apperr.Message(err)
	if out, uerr := m.git.RunGit(ctx, c.Path, "diff", "--name-only", "--diff-filter=U"); uerr == nil && len(strings.TrimSpace(string(out))) > 0 {
		why = "its commits conflict with the current base in " + strings.Join(strings.Fields(string(out)), ", ")
	}
	// Put the branch and the worktree back as they were.
	if _, aerr := m.git.RunGit(ctx, c.Path, "merge", "--abort"); aerr != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if _, rerr := m.git.RunGit(ctx, c.Path, "reset", "--hard", "--quiet", mv.tip.String()); rerr != nil {
			return "", rerr
		}
	}
	return why + fmt.Sprintf(" (merge it by hand in the task's worktree: git merge %s)", mv.to.String()[:12]), nil
}

// resolve names the commit spec means: what gitstore resolves in-process
// (HEAD, object names), else whatever `git rev-parse` accepts (a branch, a
// tag, HEAD~2).
func (m *Manager) resolve(ctx context.Context, spec string) (gitstore.Hash, error) {
	h, err := m.git.ResolveCommit(ctx, spec)
	if err == nil || !apperr.Is(err, apperr.Schema) {
		return h, err
	}
	if strings.HasPrefix(spec, "-") || strings.ContainsAny(spec, "\n\x00") {
		return h, apperr.New(apperr.Schema, "%q is not a revision", spec)
	}
	out, gerr := m.git.RunGit(ctx, "", "--git-dir="+m.git.Repo().CommonDir, "rev-parse", "--verify", "--quiet", "--end-of-options", spec+"^{commit}")
	if gerr != nil {
		return h, apperr.New(apperr.NotFound, "%s names no commit in this repository", spec)
	}
	return gitstore.ParseHash(strings.TrimSpace(string(out)))
}

func orNobody(s string) string {
	if s == "" {
		return "an unclaimed start"
	}
	return s
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return append([]string(nil), s...)
}

// ensure makes the worktree at c.Path ready: reused as it is when the task
// was open and its worktree is whole, else (re)created. It reports whether
// it reused one.
func (m *Manager) ensure(ctx context.Context, c *Contract, base gitstore.Hash, open bool) (bool, error) {
	wt, err := m.git.FindWorktree(ctx, c.Path)
	if err != nil {
		return false, err
	}
	_, statErr := os.Stat(c.Path)
	present := statErr == nil
	if wt != nil {
		switch {
		case wt.Locked && wt.LockReason == "initializing" || !present:
			// A `git worktree add` killed half-way (nothing checked out
			// yet: it runs with --no-checkout), or a directory deleted by
			// hand: start over.
			if err := m.git.DiscardWorktree(ctx, c.Path); err != nil {
				return false, err
			}
		case open:
			return true, nil
		default:
			// A closed task's leftover, or a start killed before its
			// contract was written: nothing in it was handed out.
			if err := m.git.CompleteCheckout(ctx, c.Path, true); err != nil {
				return false, err
			}
			return false, nil
		}
	}
	if err := m.excludeRoot(); err != nil {
		return false, err
	}
	// `git worktree prune` running beside can remove .git/worktrees
	// while it is empty, or the administrative directory `git worktree
	// add` has just made, before git locks it, or empty it while the add
	// writes into it: the add or the checkout after it then fails, and may
	// leave the new directory behind with only a .git file git no longer
	// knows. Everything at c.Path was made by this add (clearEmpty found
	// nothing there, and the task's lock keeps other starts out), so
	// discard it whole and try again after a short random pause, which
	// lets a prune in progress finish.
	err = gitstore.RetryWorktree(ctx, func() error {
		if err := m.clearEmpty(c); err != nil {
			return err
		}
		return m.git.AddWorktree(ctx, c.Path, c.Branch, base)
	}, func() error { return m.git.DiscardWorktree(ctx, c.Path) })
	return false, err
}

// clearEmpty removes an empty directory where the worktree goes, or one
// holding only a .git file that leads nowhere: a `git worktree add`
// killed before it finished leaves either. Anything else there is
// Blocked.
func (m *Manager) clearEmpty(c *Contract) error {
	ents, err := os.ReadDir(c.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	// A .git file alone, naming no administrative directory git can read,
	// is what an add killed before its checkout leaves: nothing else is
	// there to keep.
	lone := err == nil && len(ents) == 1 && ents[0].Name() == ".git" && ents[0].Type().IsRegular()
	if lone {
		if _, gerr := gitstore.WorktreeGitDir(c.Path); gerr == nil {
			lone = false
		}
	}
	if err != nil || len(ents) > 0 && !lone {
		return apperr.New(Blocked, "%s exists and is not a worktree git knows; move it away to start task %s", c.Path, c.Task)
	}
	if err := os.RemoveAll(c.Path); err != nil {
		return apperr.Wrap(apperr.Write, err, "cannot remove the empty %s", c.Path)
	}
	return nil
}

// excludeRoot lists the worktree root in .git/info/exclude when it lies
// inside the main working tree, so `git status` there does not show it.
func (m *Manager) excludeRoot() error {
	top, ok := mainTop(m.git)
	if !ok {
		return nil
	}
	rel, err := filepath.Rel(top, m.Root)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return nil
	}
	first := strings.Split(filepath.ToSlash(rel), "/")[0]
	return m.excludeLine("/" + first + "/")
}

// excludeLine adds line to the repository's info/exclude (shared by every
// worktree) unless it is there.
func (m *Manager) excludeLine(line string) error {
	path := filepath.Join(m.git.Repo().CommonDir, "info", "exclude")
	b, err := osproc.ReadRegular(path, 16<<20)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return apperr.Wrap(apperr.Write, err, "cannot read %s", path)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) == line {
			return nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return apperr.Wrap(apperr.Write, err, "cannot create %s", filepath.Dir(path))
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o666)
	if err != nil {
		return apperr.Wrap(apperr.Write, err, "cannot open %s", path)
	}
	defer f.Close()
	prefix := ""
	if len(b) > 0 && !strings.HasSuffix(string(b), "\n") {
		prefix = "\n"
	}
	if _, err := f.WriteString(prefix + "# task worktrees of git ideate\n" + line + "\n"); err != nil {
		return apperr.Wrap(apperr.Write, err, "cannot write %s", path)
	}
	return nil
}

// writeCopy puts the read-only copy of c in the worktree's git directory.
func (m *Manager) writeCopy(c *Contract) error {
	gd, err := gitstore.WorktreeGitDir(c.Path)
	if err != nil {
		return err
	}
	data, _ := json.MarshalIndent(c, "", "  ")
	path := filepath.Join(gd, CopyFile)
	tmp := path + ".tmp"
	os.Remove(tmp)
	if err := os.WriteFile(tmp, append(data, '\n'), 0o444); err != nil {
		return apperr.Wrap(apperr.Write, err, "cannot write %s", tmp)
	}
	if err := os.Rename(tmp, path); err != nil {
		return apperr.Wrap(apperr.Write, err, "cannot write %s", path)
	}
	return nil
}

// mark adds (open) or removes the task's file in ExecutingDir.
func (m *Manager) mark(task string, open bool) error {
	dir := filepath.Join(m.git.Repo().StateDir(), ExecutingDir)
	path := filepath.Join(dir, slug(task))
	if !open {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return apperr.Wrap(apperr.Write, err, "cannot remove %s", path)
		}
		return nil
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return apperr.Wrap(apperr.Write, err, "cannot create %s", dir)
	}
	if err := os.WriteFile(path, nil, 0o666); err != nil {
		return apperr.Wrap(apperr.Write, err, "cannot write %s", path)
	}
	return nil
}

// ReadCopy reads the read-only contract copy of the worktree at dir (what
// a worker sees); gates use Contract instead.
func ReadCopy(dir string) (*Contract, error) {
	gd, err := gitstore.WorktreeGitDir(dir)
	if err != nil {
		return nil, err
	}
	b, err := osproc.ReadRegular(filepath.Join(gd, CopyFile), MaxAttemptFile)
	if err != nil {
		return nil, apperr.Wrap(apperr.NotFound, err, "%s is not a task worktree", dir)
	}
	var c Contract
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, apperr.Wrap(apperr.Internal, err, "the contract copy in %s does not parse", gd)
	}
	return &c, nil
}

// headOf is the HEAD commit of the linked worktree at dir. m.git's
// configuration serves for it (reading HEAD needs none), so no `git
// config` process runs for a worktree just made.
func (m *Manager) headOf(dir string) (gitstore.Hash, error) {
	r, err := gitstore.Discover(dir)
	if err != nil {
		return gitstore.ZeroHash, err
	}
	s := gitstore.OpenRepo(r, gitstore.Options{Config: m.git.Config()})
	defer s.Close()
	return s.Head()
}

// CloseInput ends a task.
type CloseInput struct {
	Task   string
	Status string // completed, released or abandoned
	Note   string
	// Token, when not zero, must be the contract's (or newer): a stale
	// holder cannot close a task someone took over.
	Token int64
	// Force removes a completed task's worktree even with uncommitted
	// changes.
	Force bool
	// DryRun checks what Close would refuse (a stale token, uncommitted
	// changes of a completion) and changes nothing.
	DryRun bool
}

// Close marks the task closed and removes its worktree (the branch, and
// the commits on it, stay). A completion refuses a worktree with
// uncommitted changes unless forced (Dirty names them); a release or an
// abandonment discards them. Closing a closed task again removes a
// leftover worktree and changes nothing else.
func (m *Manager) Close(ctx context.Context, in CloseInput) (*Task, error) {
	if err := CheckTaskID(in.Task); err != nil {
		return nil, err
	}
	switch in.Status {
	case StatusCompleted, StatusReleased, StatusAbandoned:
	default:
		return nil, apperr.New(apperr.Schema, "a task closes as completed, released or abandoned, not %q", in.Status)
	}
	secretgate.Fields(&in.Note)
	release, err := m.lock(ctx, in.Task)
	if err != nil {
		return nil, err
	}
	defer release()
	tip, cur, err := m.read(in.Task)
	if err != nil {
		return nil, err
	}
	if cur == nil {
		return nil, apperr.New(apperr.NotFound, "no task %s has been started", in.Task)
	}
	if cur.Status == StatusOpen {
		if in.Token != 0 && in.Token < cur.Token {
			return nil, apperr.New(StaleToken, "task %s is held with claim token %d; token %d is older", in.Task, cur.Token, in.Token)
		}
		if in.Status == StatusCompleted && !in.Force {
			if dirty, err := m.uncommitted(ctx, cur); err != nil {
				return nil, err
			} else if len(dirty) > 0 {
				more := ""
				if len(dirty) > 5 {
					more, dirty = fmt.Sprintf(" and %d more", len(dirty)-5), dirty[:5]
				}
				return nil, apperr.New(Dirty, "task %s has uncommitted changes (%s%s): commit them in the task's worktree, or discard them with git ideate task release %s", in.Task, strings.Join(dirty, ", "), more, in.Task)
			}
		}
		if in.DryRun {
			return &Task{Contract: *cur, Worktree: "ready"}, nil
		}
		next := *cur
		next.Status, next.Note = in.Status, in.Note
		if err := m.write(ctx, tip, &next, fmt.Sprintf("task %s: %s", in.Task, in.Status)); err != nil {
			return nil, err
		}
		cur = &next
	}
	if in.DryRun {
		return &Task{Contract: *cur, Worktree: "removed"}, nil
	}
	if err := m.mark(in.Task, false); err != nil {
		return nil, err
	}
	if err := m.git.RemoveWorktree(ctx, cur.Path); err != nil {
		return nil, err
	}
	return &Task{Contract: *cur, Worktree: "removed"}, nil
}

// uncommitted lists the paths whose state in the worktree differs from its
// HEAD.
func (m *Manager) uncommitted(ctx context.Context, c *Contract) ([]string, error) {
	if _, err := os.Stat(c.Path); err != nil {
		return nil, nil
	}
	ch, err := m.git.WorktreeChanges(ctx, c.BaseHash(), c.Path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, x := range ch.List {
		if x.Uncommitted {
			out = append(out, x.Path)
		}
	}
	return out, nil
}

// ClaimChecker tells whether the claim a task was started under still
// holds. The board implements it (this package knows no board).
type ClaimChecker interface {
	// ClaimHeld reports whether item is still claimed with token; note
	// says what happened otherwise (released, expired, taken by …).
	ClaimHeld(item string, token int64) (held bool, note string, err error)
}

// List returns the tasks (open ones only unless all), with the state of
// their worktrees, sorted by task id. With claims set, each open task's
// claim is checked: a lost claim shows as Claim "lost".
func (m *Manager) List(ctx context.Context, all bool, claims ClaimChecker) ([]Task, error) {
	refs, err := m.git.Refs(RefPrefix)
	if err != nil {
		return nil, err
	}
	wts, err := m.git.Worktrees(ctx)
	if err != nil {
		return nil, err
	}
	byPath := map[string]gitstore.Worktree{}
	for _, w := range wts {
		byPath[gitstore.CanonicalPath(w.Path)] = w
	}
	var out []Task
	for _, r := range refs {
		task := strings.ReplaceAll(strings.TrimPrefix(r.Name, RefPrefix), "+", "/")
		if CheckTaskID(task) != nil {
			continue
		}
		_, c, err := m.read(task)
		if err != nil {
			return nil, err
		}
		if c == nil || !all && c.Status != StatusOpen {
			continue
		}
		t := Task{Contract: *c}
		w, known := byPath[gitstore.CanonicalPath(c.Path)]
		_, statErr := os.Stat(c.Path)
		switch {
		case known && w.Locked && w.LockReason == "initializing":
			t.Worktree = "locked"
		case known && statErr == nil && c.Status == StatusOpen:
			t.Worktree = "ready"
			t.Head = w.Head.String()
		case known && statErr == nil:
			t.Worktree = "leftover"
		case c.Status == StatusOpen:
			t.Worktree = "missing"
		default:
			t.Worktree = "removed"
		}
		if claims != nil && c.Status == StatusOpen && c.Item != "" {
			held, note, err := claims.ClaimHeld(c.Item, c.Token)
			if err != nil {
				return nil, err
			}
			t.Claim, t.ClaimNote = "held", ""
			if !held {
				t.Claim, t.ClaimNote = "lost", note
			}
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Task < out[j].Task })
	return out, nil
}
