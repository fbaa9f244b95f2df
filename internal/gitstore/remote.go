package gitstore

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/osproc"
)

// TrackingRoot holds the remote-tracking copies of our refs:
// refs/ideate/<x> of remote R is refs/ideate-remotes/R/ideate/<x>.
const TrackingRoot = "refs/ideate-remotes/"

// NotesRef is the notes ref the tool writes and syncs.
const NotesRef = "refs/notes/ideate"

// Sync error codes.
const (
	NoRemote     apperr.Code = "NO_REMOTE" // no remote is named, configured, or the only one
	RemoteFailed apperr.Code = "REMOTE"    // git could not fetch from or push to the remote
)

// TrackingRef is the remote-tracking copy of ref (refs/ideate/… or
// refs/notes/ideate) for remote.
func TrackingRef(remote, ref string) string {
	return TrackingRoot + remote + "/" + strings.TrimPrefix(ref, "refs/")
}

// FetchRefspecs bring a remote's ideate refs into their tracking copies.
// The notes refspec is a glob so that a remote without notes is no error.
func FetchRefspecs(remote string) []string {
	return []string{
		"+refs/ideate/*:" + TrackingRef(remote, "refs/ideate/*"),
		"+" + NotesRef + "*:" + TrackingRef(remote, NotesRef) + "*",
	}
}

// Remotes lists the remotes configured for this repository, sorted.
func (s *Store) Remotes() []string {
	seen := map[string]bool{}
	for _, v := range s.cfg.vars {
		if v.sub != "" && strings.EqualFold(v.section, "remote") && strings.EqualFold(v.key, "url") {
			seen[v.sub] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// ResolveRemote picks the remote to talk to: name when given, else
// configured (ideate.remote), else the only remote. It checks the remote
// exists.
func (s *Store) ResolveRemote(name, configured string) (string, error) {
	remotes := s.Remotes()
	if name = cmp.Or(name, configured); name == "" {
		switch len(remotes) {
		case 0:
			return "", apperr.New(NoRemote, "this repository has no remote; add one with `git remote add` or name one")
		case 1:
			return remotes[0], nil
		default:
			return "", apperr.New(NoRemote, "this repository has %d remotes (%s); name one or set ideate.remote", len(remotes), strings.Join(remotes, ", "))
		}
	}
	if slices.Contains(remotes, name) {
		return name, nil
	}
	return "", apperr.New(NoRemote, "no remote named %q (remotes: %s)", name, strings.Join(remotes, ", "))
}

// RemoteOptions shape how git is run against a remote.
type RemoteOptions struct {
	Progress io.Writer // git's progress output (a terminal); nil keeps git quiet
}

// runRemote runs git against a remote, passing stderr to opt.Progress
// too; err is ctx.Err() when ctx ended first.
func (s *Store) runRemote(ctx context.Context, opt RemoteOptions, args ...string) (stdout []byte, stderr string, err error) {
	cmd := s.git(ctx, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if opt.Progress != nil {
		cmd.Stderr = io.MultiWriter(opt.Progress, &errb)
	}
	err = cmd.Run()
	if ctx.Err() != nil {
		err = ctx.Err()
	}
	return out.Bytes(), errb.String(), err
}

// Fetch brings remote's refs into their tracking copies: the whole ideate
// namespace and the notes, pruned, when refs is empty, else exactly those
// refs (absent ones are no error).
func (s *Store) Fetch(ctx context.Context, remote string, opt RemoteOptions, refs ...string) error {
	args := []string{"fetch", "--no-tags", "--no-write-fetch-head", "--no-auto-maintenance", "--no-recurse-submodules"}
	var specs []string
	if len(refs) == 0 {
		args = append(args, "--prune")
		specs = FetchRefspecs(remote)
	} else {
		for _, r := range refs {
			// A glob, so an absent ref is no error; our fixed-length ids
			// make it match r alone.
			specs = append(specs, "+"+r+"*:"+TrackingRef(remote, r)+"*")
		}
	}
	if opt.Progress != nil {
		args = append(args, "--progress")
	} else {
		args = append(args, "--quiet")
	}
	args = append(append(args, remote), specs...)
	for attempt := 0; ; attempt++ {
		_, stderr, err := s.runRemote(ctx, opt, args...)
		if err == nil {
			if len(refs) == 0 {
				touch(s.fetchStamp(remote))
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// A killed fetch leaves lock files in the tracking namespace, which
		// only fetches write; a killed `git worktree add`, a directory git
		// cannot read. Either fails every later fetch: once older than the
		// stale age (younger, they may be live), they go and git tries again.
		stale := s.lockPolicy.withDefaults().StaleAfter
		if attempt == 0 && strings.Contains(stderr, ".lock") {
			if s.breakLocks(TrackingRoot+remote, stale) == 0 {
				if err := sleep(ctx, stale); err != nil {
					return err
				}
				s.breakLocks(TrackingRoot+remote, stale)
			}
			continue
		}
		if attempt == 0 && strings.Contains(stderr, "worktrees/") {
			if err := sleep(ctx, stale); err != nil {
				return err
			}
			s.dropHalfMadeWorktrees(stale)
			continue
		}
		return remoteError("fetch", remote, stderr, err)
	}
}

// fetchStamp's modification time is the last full fetch from remote.
func (s *Store) fetchStamp(remote string) string {
	return filepath.Join(s.repo.StateDir(), "fetched-"+url.PathEscape(remote))
}

// touch makes path an empty file (and its directory) modified now.
func touch(path string) bool {
	if os.MkdirAll(filepath.Dir(path), 0o777) != nil || os.WriteFile(path, nil, 0o666) != nil {
		return false
	}
	now := time.Now()
	return os.Chtimes(path, now, now) == nil
}

// LastFetch is when this clone last fetched remote's whole ideate
// namespace, or the zero time.
func (s *Store) LastFetch(remote string) time.Time {
	fi, err := os.Stat(s.fetchStamp(remote))
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

// breakLocks removes the *.lock files under the ref directory prefix that
// are older than stale, and returns how many it removed.
func (s *Store) breakLocks(prefix string, stale time.Duration) int {
	root := filepath.Join(s.repo.CommonDir, filepath.FromSlash(strings.TrimSuffix(prefix, "/")))
	n := 0
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".lock") {
			return nil
		}
		if fi, err := d.Info(); err == nil && time.Since(fi.ModTime()) > stale && os.Remove(path) == nil {
			n++
		}
		return nil
	})
	return n
}

// remoteError is REMOTE for a fetch or push that got no answer per ref,
// with the server's reason when git printed one.
func remoteError(op, remote, stderr string, err error) error {
	low := strings.ToLower(stderr)
	for _, c := range []struct{ pat, say string }{
		{"returned error: 403", "forbidden (HTTP 403): the server refused this user"},
		{"returned error: 401", "not authorized (HTTP 401): the server wants credentials"},
		{"authentication failed", "authentication failed"},
		{"permission denied", "permission denied"},
		{"returned error: 404", "not found (HTTP 404)"},
	} {
		if strings.Contains(low, c.pat) {
			return apperr.New(RemoteFailed, "git %s %s: the server answered %s (%s)", op, remote, c.say, firstLine(stderr, err))
		}
	}
	return apperr.New(RemoteFailed, "git %s %s failed: %s", op, remote, firstLine(stderr, err))
}

// blameUnpack explains an "unpacker error" (the server's fsck refused the
// pack; git marks every ref with it): the ref whose new history carries
// the object the server named gets the server's words, the others
// "atomic push failed".
func (s *Store) blameUnpack(ctx context.Context, remote string, res []PushResult, stderr string) {
	if !slices.ContainsFunc(res, func(r PushResult) bool { return !r.OK && strings.Contains(r.Reason, "unpack") }) {
		return
	}
	// detail: the first error naming an object, else the first complaint.
	var detail, obj, first string
	for _, l := range strings.Split(stderr, "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "remote:"))
		if first == "" && (strings.HasPrefix(l, "fatal:") || strings.HasPrefix(l, "error:")) {
			first = l
		}
		if i := strings.Index(l, "object "); i >= 0 && strings.HasPrefix(l, "error:") && obj == "" {
			if f := strings.Fields(l[i+len("object "):]); len(f) > 0 {
				obj = strings.TrimSuffix(f[0], ":")
				detail = strings.TrimSpace(strings.TrimPrefix(l, "error:"))
			}
		}
	}
	detail = cmp.Or(detail, first)
	blamed := -1
	for i, r := range res {
		if obj == "" || blamed >= 0 || r.OK {
			continue
		}
		out, err := s.git(ctx, "rev-list", "--objects", r.Ref, "--not", "--glob="+TrackingRoot+remote+"/*").Output()
		if err == nil && bytes.Contains(out, []byte(obj)) {
			blamed = i
		}
	}
	for i := range res {
		if res[i].OK {
			continue
		}
		switch {
		case i == blamed:
			res[i].Reason = "the server refused the pack: " + detail
		case blamed >= 0:
			res[i].Reason = "atomic push failed"
		case detail != "":
			res[i].Reason += ": " + detail
		}
	}
}

func firstLine(stderr string, err error) string {
	for _, l := range strings.Split(stderr, "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "hint:") {
			return l
		}
	}
	return err.Error()
}

// PushUpdate is one ref a push moves: to New (ZeroHash: deletes it),
// provided the remote still holds Old (ZeroHash: the remote must not have
// the ref).
type PushUpdate struct {
	Ref      string
	New, Old Hash
}

// PushResult is the remote's answer for one ref.
type PushResult struct {
	Ref    string
	OK     bool
	Status string // "rejected", "remote rejected", …
	Reason string // why: "stale info", "atomic push failed", "cannot lock ref …"
}

// Raced reports whether r was refused because the remote moved or was
// being moved meanwhile, so fetching again and retrying can succeed; a
// hook, permissions or fsck refusal will not. Servers word it differently.
func (r PushResult) Raced() bool {
	reason := strings.ToLower(r.Reason)
	return !r.OK && slices.ContainsFunc(racedReasons, func(p string) bool { return strings.Contains(reason, p) })
}

var racedReasons = []string{
	"stale info", "atomic push failed", "atomic transaction failed", "fetch first", "non-fast-forward",
	"already exists", "failed to update ref", "cannot lock ref", "failed to lock", "unable to lock",
	"incorrect old value", "but expected", "reference already exists", "unable to create lock",
}

// Push sends updates in one `git push --atomic
// --force-with-lease=<ref>:<old>`: the remote applies all of them against
// the values we last saw, or none. It returns the per-ref answers; an error
// only when git could not talk to the remote. The pre-push hook (which
// guards branches) does not run. git matches explicit refspecs and leases
// in O(N²): Push is for a few refs, PushMany for a sync.
func (s *Store) Push(ctx context.Context, remote string, ups []PushUpdate, opt RemoteOptions) ([]PushResult, error) {
	if len(ups) == 0 {
		return nil, nil
	}
	args := []string{"push", "--porcelain", "--no-verify"}
	if len(ups) > 1 {
		args = append(args, "--atomic")
	}
	if opt.Progress != nil {
		args = append(args, "--progress")
	}
	var specs []string
	for _, u := range ups {
		old := ""
		if u.Old != ZeroHash {
			old = u.Old.String()
		}
		args = append(args, "--force-with-lease="+u.Ref+":"+old)
		specs = append(specs, refspec(u))
	}
	return s.push(ctx, remote, ups, opt, append(append(args, remote), specs...)...)
}

// refspec is u's explicit refspec: ":<ref>" deletes.
func refspec(u PushUpdate) string {
	if u.New == ZeroHash {
		return ":" + u.Ref
	}
	return u.New.String() + ":" + u.Ref
}

// ShadowRoot is where PushMany stages the values it pushes:
// refs/ideate-push/<remote>/<ref minus "refs/">, there only for the
// duration of one push.
const ShadowRoot = "refs/ideate-push/"

// PushMany pushes ups (refs under refs/ideate/ and the notes ref) in one
// atomic push, each leased on its tracking copy, which must hold the
// update's Old, and returns the remote's answers; git then moves the
// tracking copies of the refs it pushed.
//
// Its cost is linear in the number of refs (N explicit refspecs and leases
// cost O(N²) in git): the new values are staged as shadow refs
// (ShadowRoot) and pushed with one glob refspec, the leases taken from
// fetch refspecs given with -c; the shadow refs are removed afterwards,
// and any a killed push left are removed first.
func (s *Store) PushMany(ctx context.Context, remote string, ups []PushUpdate, opt RemoteOptions) ([]PushResult, error) {
	if len(ups) == 0 {
		return nil, nil
	}
	if _, ok := s.cfg.GetSub("remote", remote, "url"); !ok {
		return nil, apperr.New(NoRemote, "remote %q has no url", remote)
	}
	shadow := ShadowRoot + remote + "/"
	// One staging push per remote at a time: the shadow namespace is
	// shared, and a killed push's leftovers are cleared only under this lock.
	staging, err := s.lockState(ctx, "push-"+url.PathEscape(remote)+".lock")
	if err != nil {
		return nil, err
	}
	defer staging.Close()
	if err := s.clearShadow(ctx, shadow, staging); err != nil {
		return nil, err
	}
	src := shadow
	if all, err := s.refs.list("refs/ideate/"); err == nil && 2*len(ups) > len(all) && pushesLocalRefs(all, ups) {
		// Most refs move (a first push): push refs/ideate/* itself rather
		// than stage nearly every ref. The local refs are the updates'
		// News or newer: still descendants of the leased values.
		src = "refs/"
	} else {
		var stage bytes.Buffer
		for _, u := range ups {
			if u.New == ZeroHash {
				continue // a deletion is an explicit refspec (below)
			}
			fmt.Fprintf(&stage, "create %s%s %s\n", shadow, strings.TrimPrefix(u.Ref, "refs/"), u.New)
		}
		if err := s.updateRefs(ctx, &stage, staging); err != nil {
			return nil, err
		}
		defer s.clearShadow(context.WithoutCancel(ctx), shadow, staging)
	}

	// Through the user's remote by name, so its settings (pushurl, proxy,
	// push options) apply; but a user's fetch refspec that maps our refs
	// would win over our -c ones, and then the push goes to its URL under
	// a name of its own.
	name := remote
	var args []string
	if s.userMapsOurRefs(remote) {
		name = "ideate-sync"
		pushURL, _ := s.cfg.GetSub("remote", remote, "pushurl")
		url, _ := s.cfg.GetSub("remote", remote, "url")
		args = append(args, "-c", "remote."+name+".url="+cmp.Or(pushURL, url))
	}
	for _, spec := range FetchRefspecs(remote) {
		args = append(args, "-c", "remote."+name+".fetch="+spec)
	}
	args = append(args, "push", "--porcelain", "--no-verify", "--atomic", "--force-with-lease")
	if opt.Progress != nil {
		args = append(args, "--progress")
	}
	args = append(args, name, src+"ideate/*:refs/ideate/*", src+"notes/ideate*:"+NotesRef+"*")
	for _, u := range ups {
		if u.New == ZeroHash {
			args = append(args, refspec(u)) // leased on its tracking copy, as the rest
		}
	}
	return s.push(ctx, remote, ups, opt, args...)
}

// pushesLocalRefs reports whether every update of ups is a ref under
// refs/ideate/ at its local value (or the notes ref), so pushing the local
// refs themselves is pushing ups: not a deletion, nor a value no local ref
// holds yet.
func pushesLocalRefs(all []Ref, ups []PushUpdate) bool {
	local := make(map[string]Hash, len(all))
	for _, r := range all {
		local[r.Name] = r.Hash
	}
	for _, u := range ups {
		if u.New == ZeroHash || strings.HasPrefix(u.Ref, "refs/ideate/") && local[u.Ref] != u.New {
			return false
		}
	}
	return true
}

// userMapsOurRefs reports whether one of the user's fetch refspecs for
// remote takes refs/ideate/… or refs/notes/ideate from the remote.
func (s *Store) userMapsOurRefs(remote string) bool {
	for _, spec := range s.cfg.GetAllSub("remote", remote, "fetch") {
		src, _, _ := strings.Cut(strings.TrimPrefix(spec, "+"), ":")
		for _, ours := range []string{"refs/ideate/x", NotesRef} {
			if src == ours || (strings.HasSuffix(src, "*") && strings.HasPrefix(ours, strings.TrimSuffix(src, "*"))) {
				return true
			}
		}
	}
	return false
}

// push runs one `git push --porcelain` and returns the remote's answer for
// each of ups, in their order; an error only when git reported no status
// at all (it could not talk to the remote).
func (s *Store) push(ctx context.Context, remote string, ups []PushUpdate, opt RemoteOptions, args ...string) ([]PushResult, error) {
	stdout, stderr, runErr := s.runRemote(ctx, opt, args...)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	res := parsePorcelain(stdout)
	if len(res) == 0 {
		if runErr == nil {
			runErr = fmt.Errorf("no status reported")
		}
		return nil, remoteError("push", remote, stderr, runErr)
	}
	s.blameUnpack(ctx, remote, res, stderr)
	byRef := make(map[string]PushResult, len(res))
	for _, r := range res {
		byRef[r.Ref] = r
	}
	out := make([]PushResult, len(ups))
	for i, u := range ups {
		r, ok := byRef[u.Ref]
		if !ok {
			r = PushResult{Ref: u.Ref, Reason: "no status reported"}
		}
		out[i] = r
	}
	return out, nil
}

// ClearStaged removes what a killed PushMany to remote left in the shadow
// namespace, for a sync with nothing to push.
func (s *Store) ClearStaged(ctx context.Context, remote string) error {
	shadow := ShadowRoot + remote + "/"
	if refs, err := s.refs.list(shadow); err != nil || len(refs) == 0 {
		return err // the usual case: nothing staged, no lock taken
	}
	staging, err := s.lockState(ctx, "push-"+url.PathEscape(remote)+".lock")
	if err != nil {
		return err
	}
	defer staging.Close()
	return s.clearShadow(ctx, shadow, staging)
}

// clearShadow removes lock files and refs under the shadow prefix; the
// caller holds the staging flock (staging), which every git that writes
// there holds until it ends (updateRefs), so nothing there is live.
func (s *Store) clearShadow(ctx context.Context, prefix string, staging *os.File) error {
	s.breakLocks(prefix, 0)
	refs, err := s.refs.list(prefix)
	if err != nil || len(refs) == 0 {
		return err
	}
	var b bytes.Buffer
	for _, r := range refs {
		fmt.Fprintf(&b, "delete %s %s\n", r.Name, r.Hash)
	}
	return s.updateRefs(ctx, &b, staging)
}

// updateRefs runs `git update-ref --stdin` on cmds to its end
// (gitToEnd), holding hold (may be nil) until then.
func (s *Store) updateRefs(ctx context.Context, cmds io.Reader, hold *os.File) error {
	if out, err := s.gitToEnd(ctx, cmds, hold, "update-ref", "--stdin"); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &apperr.Error{Code: GitFailed, Msg: "git update-ref --stdin failed: " + firstLine(string(out), err), Err: err}
	}
	return nil
}

// parsePorcelain reads `git push --porcelain` status lines:
// "<flag>\t<src>:<dst>\t<summary>".
func parsePorcelain(b []byte) []PushResult {
	var out []PushResult
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, "\t", 3)
		if len(parts) < 3 || len(parts[0]) != 1 {
			continue
		}
		colon := strings.LastIndexByte(parts[1], ':')
		if colon < 0 {
			continue
		}
		r := PushResult{Ref: parts[1][colon+1:]}
		switch parts[0] {
		case " ", "+", "*", "=", "-":
			r.OK = true
		default:
			// "[rejected] (stale info)", "[remote rejected] (cannot lock …)"
			sum := parts[2]
			if status, rest, ok := strings.Cut(sum, "]"); ok && strings.HasPrefix(sum, "[") {
				r.Status, sum = status[1:], strings.TrimSpace(rest)
			}
			r.Reason = cmp.Or(strings.TrimSuffix(strings.TrimPrefix(sum, "("), ")"), r.Status)
		}
		out = append(out, r)
	}
	return out
}

// IsAncestor reports whether commit a is reachable from commit b (a commit
// is its own ancestor).
func (s *Store) IsAncestor(a, b Hash) (bool, error) {
	if a == ZeroHash || b == ZeroHash {
		return false, nil
	}
	seen := map[Hash]bool{b: true}
	for queue := []Hash{b}; len(queue) > 0; queue = queue[1:] {
		if queue[0] == a {
			return true, nil
		}
		c, err := s.ReadCommit(queue[0])
		if err != nil {
			return false, err
		}
		for _, p := range c.Parents {
			if !seen[p] {
				seen[p] = true
				queue = append(queue, p)
			}
		}
	}
	return false, nil
}

// dropHalfMadeWorktrees removes the directories under .git/worktrees,
// older than stale, that lack a file a finished `git worktree add` writes
// (gitdir, commondir, HEAD): a killed add's. Its working tree, if any, is
// left for `git worktree prune` and the task's own repair.
func (s *Store) dropHalfMadeWorktrees(stale time.Duration) {
	root := filepath.Join(s.repo.CommonDir, "worktrees")
	ents, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range ents {
		dir := filepath.Join(root, e.Name())
		fi, err := os.Stat(dir)
		if err != nil || !fi.IsDir() || time.Since(fi.ModTime()) < stale {
			continue
		}
		for _, f := range []string{"gitdir", "commondir", "HEAD"} {
			b, err := osproc.ReadRegular(filepath.Join(dir, f), smallFileMax)
			if err != nil || len(bytes.TrimSpace(b)) == 0 {
				os.RemoveAll(dir)
				break
			}
			// A detached HEAD that names no commit is one the killed add
			// had not finished writing objects for.
			if h, perr := ParseHash(string(bytes.TrimSpace(b))); f == "HEAD" && perr == nil {
				if _, rerr := s.ReadCommit(h); rerr != nil {
					os.RemoveAll(dir)
				}
			}
		}
	}
}
