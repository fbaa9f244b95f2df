package hooks

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gates"
	"github.com/ideate/git-ideate/internal/osproc"
	"github.com/ideate/git-ideate/internal/secretgate"
	"github.com/ideate/git-ideate/internal/textfmt"
)

// The cost gate's memory of expensive runs (its same-unchanged-tree
// rule), under the dispatch directory:
//
//	dispatch/runs-pending/pending.jsonl      the expensive Bash calls of bound
//	                                         agents that the gates let through, one
//	                                         line each (its tool_use_id first), with
//	                                         the worktree's fingerprint before it
//	dispatch/runs-pending/pending.old.jsonl  the lines before the last PendingLogCap
//	dispatch/runs/<sha256(task, key)>.json   the newest run of that command in
//	                                         that task's worktree (gates.CostRun)
//
// Neither keeps the command as written: the key is a digest
// (gates.CostKeyDigest) and the command passes the secret gate.
//
// PostToolUse (exit 0) and PostToolUseFailure (its error's first line)
// find the call's pending line and keep the run only when the worktree's
// fingerprint after it is the one before it: a run that changed its own
// tree, or ran beside an edit, is not "the same tree" for the next call.
//
// The pending calls are appended to one file rather than written a file
// each: a new file per Bash call (a new inode, a rename) was a sixth of
// the processor time of a bound worker's PreToolUse.

// MaxFingerprintFiles bounds the files a worktree fingerprint stats; a
// scope holding more gets no fingerprint (and the rule says nothing).
const MaxFingerprintFiles = 20000

// The pending log's names, and the size past which the append that
// crosses it moves the log aside (over the older one): the two hold the
// last few hundred calls, far more than run at once.
const (
	pendingLog    = "pending.jsonl"
	pendingOld    = "pending.old.jsonl"
	PendingLogCap = 256 << 10
)

// pendingRun is an expensive call let through, waiting for its end.
type pendingRun struct {
	ID          string   `json:"id"` // the tool_use_id; first, so a line starts with it
	Task        string   `json:"task"`
	Worktree    string   `json:"worktree"`
	Scope       []string `json:"scope,omitempty"`
	Key         string   `json:"key"`
	Command     string   `json:"command"`
	Fingerprint string   `json:"fingerprint"`
	Head        string   `json:"head"`
}

// recall fills the cost facts' fingerprint and earlier run for command,
// and returns what to remember if the call is let through; nil when the
// line runs nothing expensive or the worktree's state cannot be read.
func (c *call) recall(state string, f *gates.CostFacts, command string) *pendingRun {
	key := gates.CostKey(f, command)
	if key == "" || state == "" {
		return nil
	}
	// The clone's state keeps no command text verbatim: the key as a
	// digest, the command with its secrets redacted.
	key = gates.CostKeyDigest(key)
	command, _ = secretgate.Scan(command)
	fp, head, err := Fingerprint(f.Top, f.Scope)
	if err != nil {
		c.d.warn("the worktree of task %s has no fingerprint (%v); the same-tree rule says nothing", f.Task, err)
		return nil
	}
	f.Fingerprint = fp
	var run gates.CostRun
	if ok, err := readJSON(runPath(state, f.Task, key), &run); err == nil && ok && run.Key == key {
		f.Earlier = &run
	}
	return &pendingRun{Task: f.Task, Worktree: f.Top, Scope: f.Scope, Key: key, Command: command, Fingerprint: fp, Head: head}
}

// remember appends the pending run of the call to the pending log.
func (c *call) remember(state string, r *pendingRun) {
	if r == nil || !idRe().MatchString(c.p.ToolUseID) {
		return
	}
	r.ID = c.p.ToolUseID
	data, err := json.Marshal(r)
	if err == nil {
		err = appendPending(dispatchPath(state, "runs-pending"), append(data, '\n'))
	}
	if err != nil {
		c.d.warn("the run of task %s is not remembered: %v", r.Task, err)
	}
}

// appendPending appends one line to the pending log in dir in one
// write(2) (O_APPEND: the lines of processes appending at once do not
// mix), and moves the log aside when this line took it past
// PendingLogCap: the offset after an append is where the line ends, so
// exactly one appender crosses the cap. A line left half written (a full
// disk) is passed over by the reader (pendingOf).
func appendPending(dir string, line []byte) error {
	if len(line) > PendingLogCap {
		return fmt.Errorf("the call's line is %d bytes, over the pending log's cap of %d", len(line), PendingLogCap)
	}
	path := filepath.Join(dir, pendingLog)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(dir, 0o755); err == nil {
			f, err = os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		}
	}
	if err != nil {
		return err
	}
	defer f.Close()
	n, err := f.Write(line)
	if err == nil && n < len(line) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return err
	}
	if end, err := f.Seek(0, io.SeekCurrent); err == nil && end >= PendingLogCap && end-int64(n) < PendingLogCap {
		return os.Rename(path, filepath.Join(dir, pendingOld))
	}
	return nil
}

// pendingOf reads into v the newest line of the call id in the pending
// log of dir, then in the older one, and reports whether there was one.
// A line starts with its id, and `{"id":"` occurs in no JSON string, so
// the line's start is found even after a half-written line.
func pendingOf(dir, id string, v any) bool {
	needle := []byte(`{"id":"` + id + `",`)
	for _, name := range []string{pendingLog, pendingOld} {
		b, err := osproc.ReadRegular(filepath.Join(dir, name), MaxStateFile)
		if err != nil {
			continue
		}
		i := bytes.LastIndex(b, needle)
		if i < 0 {
			continue
		}
		line := b[i:]
		if j := bytes.IndexByte(line, '\n'); j >= 0 {
			line = line[:j]
		}
		if json.Unmarshal(line, v) == nil {
			return true
		}
	}
	return false
}

// settleRun ends the pending run of a finished Bash call, if there is
// one: ok is PostToolUse (exit 0), else PostToolUseFailure.
func (c *call) settleRun(ok bool) {
	p := c.p
	if p.ToolName != "Bash" || !idRe().MatchString(p.ToolUseID) {
		return
	}
	state, err := c.stateDir()
	if err != nil || state == "" {
		return
	}
	var r pendingRun
	if !pendingOf(dispatchPath(state, "runs-pending"), p.ToolUseID, &r) {
		return
	}
	result := "exit 0"
	if !ok {
		result = "failed"
		if e := strings.TrimSpace(rawString(p.Fields["error"])); e != "" {
			result = textfmt.Fit(textfmt.OneLine(strings.SplitN(e, "\n", 2)[0]), 120)
		}
		if rawString(p.Fields["is_interrupt"]) == "true" {
			return // stopped by the user: it said nothing about the tree
		}
	} else if lookup(p.ToolResponse, "interrupted") == "true" {
		return
	}
	fp, _, err := Fingerprint(r.Worktree, r.Scope)
	if err != nil || fp != r.Fingerprint {
		return // the run changed its tree, or something did beside it
	}
	run := gates.CostRun{Key: r.Key, Command: r.Command, Fingerprint: fp, Head: r.Head,
		At: c.d.now().UTC().Format(time.RFC3339), Result: result, ToolUseID: p.ToolUseID}
	data, err := json.Marshal(run)
	if err == nil {
		err = replaceWhole(runPath(state, r.Task, r.Key), data)
	}
	if err != nil {
		c.d.warn("the run of task %s is not remembered: %v", r.Task, err)
	}
}

// postToolUseFailure captures the failed call (any tool) and settles the
// run of a Bash call that failed.
func postToolUseFailure(c *call) (Response, error) {
	err := captureEvent(c)
	c.logWrites()
	c.settleRun(false)
	if err != nil && !apperr.Is(err, apperr.NotARepo) {
		return Response{}, err
	}
	return Response{}, nil
}

// permissionDenied captures a call the host denied (its auto mode's
// classifier): what an agent tried belongs in its transcript too.
func permissionDenied(c *call) (Response, error) {
	if err := captureEvent(c); err != nil && !apperr.Is(err, apperr.NotARepo) {
		return Response{}, err
	}
	return Response{}, nil
}

func runPath(state, task, key string) string {
	sum := sha256.Sum256([]byte(task + "\x00" + key))
	return dispatchPath(state, "runs", hex.EncodeToString(sum[:16])+".json")
}

// Fingerprint is the state of a task's worktree as the cost gate's
// same-tree rule compares it: its HEAD commit, the stat of its index
// (staging changes it) and the path, mode, size and modification time of
// every file below the task's scope globs (the literal directory before a
// glob's first wildcard, or the file a glob names; dot-directories,
// __pycache__ and node_modules skipped; no positive glob: the whole
// worktree). Edits neither committed, staged nor inside the scope are not
// seen; the role guard keeps an agent's edits inside its scope. head is
// the HEAD commit. An error means the state could not be read.
func Fingerprint(top string, scope []string) (fp, head string, err error) {
	if top == "" {
		return "", "", errors.New("no worktree")
	}
	gitDir, err := worktreeGitDir(top)
	if err != nil {
		return "", "", err
	}
	head, err = headOf(gitDir)
	if err != nil {
		return "", "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "head %s\n", head)
	if fi, err := os.Stat(filepath.Join(gitDir, "index")); err == nil {
		fmt.Fprintf(h, "index %d %d\n", fi.Size(), fi.ModTime().UnixNano())
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", "", err
	}
	roots := scopeRoots(scope)
	n := 0
	for _, r := range roots {
		full := filepath.Join(top, filepath.FromSlash(r))
		err := filepath.WalkDir(full, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) && p == full {
					fmt.Fprintf(h, "absent %s\n", r)
					return nil
				}
				return err
			}
			name := d.Name()
			if d.IsDir() {
				if p != full && (strings.HasPrefix(name, ".") || name == "__pycache__" || name == "node_modules") {
					return filepath.SkipDir
				}
				return nil
			}
			if n++; n > MaxFingerprintFiles {
				return fmt.Errorf("the scope holds more than %d files", MaxFingerprintFiles)
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(top, p)
			fmt.Fprintf(h, "f %s %o %d %d\n", filepath.ToSlash(rel), fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
			return nil
		})
		if err != nil {
			return "", "", err
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), head, nil
}

// scopeRoots are the places the positive scope globs name, without one
// inside another ("." when there is none).
func scopeRoots(scope []string) []string {
	var roots []string
	for _, g := range scope {
		g = strings.TrimPrefix(strings.TrimSpace(g), "./")
		if g == "" || strings.HasPrefix(g, "!") {
			continue
		}
		if i := strings.IndexAny(g, "*?["); i >= 0 {
			g = path.Dir(g[:i] + "x")
		}
		g = path.Clean(strings.TrimSuffix(g, "/"))
		if g == ".." || strings.HasPrefix(g, "../") || path.IsAbs(g) {
			return []string{"."}
		}
		roots = append(roots, g)
	}
	if len(roots) == 0 {
		return []string{"."}
	}
	var out []string
	for _, r := range roots {
		inside := false
		for _, o := range roots {
			if o != r && (o == "." || strings.HasPrefix(r, o+"/")) {
				inside = true
			}
		}
		dup := false
		for _, o := range out {
			if o == r {
				dup = true
			}
		}
		if !inside && !dup {
			out = append(out, r)
		}
	}
	return out
}

// worktreeGitDir is the git directory of the worktree at top: top/.git,
// or where a linked worktree's .git file points.
//
// The files read here sit in the worktree a worker writes; each is read
// only if it is a regular file, and the small ones only up to gitFileMax,
// so a FIFO or a huge file there cannot hold the hook past its budget.
func worktreeGitDir(top string) (string, error) {
	dot := filepath.Join(top, ".git")
	fi, err := os.Stat(dot)
	if err != nil {
		return "", err
	}
	if fi.IsDir() {
		return dot, nil
	}
	b, err := osproc.ReadRegular(dot, gitFileMax)
	if err != nil {
		return "", err
	}
	d, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return "", fmt.Errorf("%s names no gitdir", dot)
	}
	d = strings.TrimSpace(d)
	if !filepath.IsAbs(d) {
		d = filepath.Join(top, d)
	}
	return d, nil
}

// headOf resolves HEAD in a git directory to a commit id: a detached
// HEAD's id, or its branch's from the loose ref or packed-refs of the
// common directory.
func headOf(gitDir string) (string, error) {
	b, err := osproc.ReadRegular(filepath.Join(gitDir, "HEAD"), gitFileMax)
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(string(b))
	ref, sym := strings.CutPrefix(s, "ref:")
	if !sym {
		return s, nil
	}
	ref = strings.TrimSpace(ref)
	if !strings.HasPrefix(ref, "refs/") || strings.Contains(ref, "..") {
		return "", fmt.Errorf("HEAD names %q", ref)
	}
	common := gitDir
	if cb, err := osproc.ReadRegular(filepath.Join(gitDir, "commondir"), gitFileMax); err == nil {
		common = strings.TrimSpace(string(cb))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
	}
	if lb, err := osproc.ReadRegular(filepath.Join(common, filepath.FromSlash(ref)), gitFileMax); err == nil {
		if id := strings.TrimSpace(string(lb)); id != "" && !strings.HasPrefix(id, "ref:") {
			return id, nil
		}
	}
	f, _, err := osproc.OpenRegular(filepath.Join(common, "packed-refs"))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "unborn " + ref, nil
		}
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if id, name, ok := strings.Cut(l, " "); ok && name == ref && !strings.HasPrefix(l, "#") {
			return id, nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "unborn " + ref, nil
}

// gitFileMax bounds the one-line git files the fingerprint reads.
const gitFileMax = 64 << 10
