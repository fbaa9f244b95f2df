package worktree

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/osproc"
	"github.com/ideate/git-ideate/internal/secretgate"
)

// The files an attempt keeps on the task's ref, under attempts/<K>/.
const (
	InitFile = "init.md" // written by git ideate (post-planner, supervisor); read-only to the worker
	// OutputFile is the worker's own report as it writes it in its
	// worktree; on the ref each role of the attempt keeps its own,
	// OutputFileOf(role). An attempt kept before roles had their own
	// holds it under this name.
	OutputFile = "output.md"
)

// OutputFileOf is the name role's report has under attempts/<K>/ on the
// task's ref: output-<role>.md (output-worker.md for a task started with
// no role).
func OutputFileOf(role string) string {
	if role == "" {
		role = "worker"
	}
	return "output-" + role + ".md"
}

// RoleOutput is one role's report of an attempt; Role is "" for one kept
// as the attempt's single output.md.
type RoleOutput struct {
	Role string `json:"role"`
	Text string `json:"text"`
}

// roleOrder is the order of the discipline's roles in an attempt.
var roleOrder = map[string]int{"red-worker": 1, "scaffolder": 2, "post-planner": 3, "green-worker": 4}

// AttemptDir is where the worker finds init.md and writes output.md, at
// the top of its worktree (ignored through the repository's info/exclude).
const AttemptDir = ".ideate"

// MaxAttemptFile bounds one attempt file (init.md grows a turn per attempt).
const MaxAttemptFile = 256 << 10

func checkAttemptFile(task string, attempt int, name string) error {
	if err := CheckTaskID(task); err != nil {
		return err
	}
	if attempt < 1 || attempt > 99 {
		return apperr.New(apperr.Schema, "attempt must be 1..99, not %d", attempt)
	}
	if name == InitFile || name == OutputFile {
		return nil
	}
	if role, ok := roleOfOutput(name); !ok || !roleRe().MatchString(role) {
		return apperr.New(apperr.Schema, "an attempt keeps %s and one %s per role, not %q", InitFile, OutputFileOf("<role>"), name)
	}
	return nil
}

func roleOfOutput(name string) (string, bool) {
	role, ok := strings.CutPrefix(name, "output-")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(role, ".md")
}

// AttemptOutputs lists the reports attempt K keeps, one per role, in the
// discipline's order (red, scaffold, green, then others by name).
func (m *Manager) AttemptOutputs(task string, attempt int) ([]RoleOutput, error) {
	if err := checkAttemptFile(task, attempt, InitFile); err != nil {
		return nil, err
	}
	e, found, err := m.onRef(task, "attempts", strconv.Itoa(attempt))
	if err != nil || !found || !e.IsDir() {
		return nil, err
	}
	ents, err := m.git.ReadTree(e.Hash)
	if err != nil {
		return nil, err
	}
	var out []RoleOutput
	for _, x := range ents {
		role, ok := roleOfOutput(x.Name)
		if x.Name == OutputFile {
			role, ok = "", true
		}
		if !ok || x.IsDir() {
			continue
		}
		b, err := m.git.ReadBlob(x.Hash)
		if err != nil {
			return nil, err
		}
		out = append(out, RoleOutput{Role: role, Text: string(b)})
	}
	sort.SliceStable(out, func(i, j int) bool {
		ri, rj := roleOrder[out[i].Role], roleOrder[out[j].Role]
		if ri == 0 {
			ri = 9
		}
		if rj == 0 {
			rj = 9
		}
		if ri != rj {
			return ri < rj
		}
		return out[i].Role < out[j].Role
	})
	return out, nil
}

// AttemptFile reads attempts/<attempt>/<name> from the task's ref; ok is
// false when it is not there.
func (m *Manager) AttemptFile(task string, attempt int, name string) (data []byte, ok bool, err error) {
	if err := checkAttemptFile(task, attempt, name); err != nil {
		return nil, false, err
	}
	e, found, err := m.onRef(task, "attempts", strconv.Itoa(attempt), name)
	if err != nil || !found || e.IsDir() {
		return nil, false, err
	}
	data, err = m.git.ReadBlob(e.Hash)
	return data, err == nil, err
}

// Attempts lists the attempts that keep files on the task's ref, in order.
func (m *Manager) Attempts(task string) ([]int, error) {
	if err := CheckTaskID(task); err != nil {
		return nil, err
	}
	e, found, err := m.onRef(task, "attempts")
	if err != nil || !found || !e.IsDir() {
		return nil, err
	}
	ents, err := m.git.ReadTree(e.Hash)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, x := range ents {
		if n, err := strconv.Atoi(x.Name); err == nil && x.IsDir() {
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out, nil
}

// PutAttemptFile writes attempts/<attempt>/<name> on the task's ref, one
// commit, under the task's lock, after the secret gate. check, when set,
// sees the file's current content (exists false when there is none) and
// may refuse the write (init.md is append-only: its caller checks that
// the new content extends the old). A started task is required.
func (m *Manager) PutAttemptFile(ctx context.Context, task string, attempt int, name string, data []byte, check func(old []byte, exists bool) error) error {
	if err := checkAttemptFile(task, attempt, name); err != nil {
		return err
	}
	if len(data) > MaxAttemptFile {
		return apperr.New(apperr.Schema, "%s of task %s attempt %d would be %d bytes; at most %d", name, task, attempt, len(data), MaxAttemptFile)
	}
	text := string(data)
	secretgate.Fields(&text)
	release, err := m.lock(ctx, task)
	if err != nil {
		return err
	}
	defer release()
	tip, c, err := m.read(task)
	if err != nil {
		return err
	}
	if c == nil {
		return apperr.New(apperr.NotFound, "no task %s has been started", task)
	}
	if check != nil {
		old, ok, err := m.attemptBlob(tip, attempt, name)
		if err != nil {
			return err
		}
		if err := check(old, ok); err != nil {
			return err
		}
	}
	_, err = m.git.CommitOn(ctx, RefName(task), tip, func(tip gitstore.Hash) (gitstore.Hash, string, error) {
		pc, err := m.git.ReadCommit(tip)
		if err != nil {
			return gitstore.ZeroHash, "", err
		}
		blob, err := m.git.WriteBlob([]byte(text))
		if err != nil {
			return gitstore.ZeroHash, "", err
		}
		root, err := m.git.Insert(pc.Tree, []string{"attempts", strconv.Itoa(attempt)},
			gitstore.TreeEntry{Mode: gitstore.ModeFile, Name: name, Hash: blob}, true)
		return root, fmt.Sprintf("task %s: %s of attempt %d", task, name, attempt), err
	})
	return err
}

func (m *Manager) attemptBlob(tip gitstore.Hash, attempt int, name string) ([]byte, bool, error) {
	cm, err := m.git.ReadCommit(tip)
	if err != nil {
		return nil, false, err
	}
	e, found, err := m.git.Lookup(cm.Tree, []string{"attempts", strconv.Itoa(attempt), name})
	if err != nil || !found || e.IsDir() {
		return nil, false, err
	}
	b, err := m.git.ReadBlob(e.Hash)
	return b, err == nil, err
}

// NextAttempt moves an open task to its next attempt (the worktree, the
// claim and the role stay), and returns the new contract. A closed task
// is refused (apperr.Conflict); attempt 99 is the last.
func (m *Manager) NextAttempt(ctx context.Context, task string) (*Contract, error) {
	if err := CheckTaskID(task); err != nil {
		return nil, err
	}
	release, err := m.lock(ctx, task)
	if err != nil {
		return nil, err
	}
	defer release()
	tip, c, err := m.read(task)
	if err != nil {
		return nil, err
	}
	switch {
	case c == nil:
		return nil, apperr.New(apperr.NotFound, "no task %s has been started", task)
	case c.Status != StatusOpen:
		return nil, apperr.New(Closed, "task %s is %s; only an open task has a next attempt", task, c.Status)
	case c.Attempt >= 99:
		return nil, apperr.New(apperr.Schema, "task %s is at attempt %d, the last", task, c.Attempt)
	}
	if c.Attempt < 1 {
		c.Attempt = 1
	}
	c.Attempt++
	if err := m.write(ctx, tip, c, fmt.Sprintf("task %s: attempt %d (%s)", task, c.Attempt, orNobody(c.Role))); err != nil {
		return nil, err
	}
	if err := m.writeCopy(c); err != nil {
		return nil, err
	}
	return c, nil
}

// Materialize writes init.md into the task's worktree at
// AttemptDir/init.md, read-only (0444), replacing the previous one, and
// makes sure the repository's info/exclude ignores AttemptDir. It
// returns the file's path.
func (m *Manager) Materialize(task string, data []byte) (string, error) {
	c, err := m.Contract(task)
	if err != nil {
		return "", err
	}
	if c.Path == "" {
		return "", apperr.New(apperr.NotFound, "task %s has no worktree", task)
	}
	if err := m.excludeLine("/" + AttemptDir + "/"); err != nil {
		return "", err
	}
	dir := filepath.Join(c.Path, AttemptDir)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return "", apperr.Wrap(apperr.Write, err, "cannot create %s", dir)
	}
	path := filepath.Join(dir, InitFile)
	tmp := path + ".tmp"
	os.Remove(tmp)
	if err := os.WriteFile(tmp, data, 0o444); err != nil {
		return "", apperr.Wrap(apperr.Write, err, "cannot write %s", tmp)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", apperr.Wrap(apperr.Write, err, "cannot write %s", path)
	}
	return path, nil
}

// ClearWorkerOutput removes the worker's output.md from the task's
// worktree once it is kept on the task's ref, so the next role, or the
// next attempt, starts without a report that is not its own.
func (m *Manager) ClearWorkerOutput(task string) error {
	c, err := m.Contract(task)
	if err != nil {
		return err
	}
	path := filepath.Join(c.Path, AttemptDir, OutputFile)
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return apperr.Wrap(apperr.Write, err, "cannot remove %s", path)
	}
	return nil
}

// WorkerOutput reads the worker's output.md from the task's worktree;
// ok is false when there is none.
func (m *Manager) WorkerOutput(task string) ([]byte, bool, error) {
	c, err := m.Contract(task)
	if err != nil {
		return nil, false, err
	}
	// The worker writes this file: a FIFO or a device is refused, and no
	// more than MaxAttemptFile bytes are read.
	f, _, err := osproc.OpenRegular(filepath.Join(c.Path, AttemptDir, OutputFile))
	if os.IsNotExist(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, apperr.Wrap(apperr.Internal, err, "cannot read the output.md of task %s", task)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxAttemptFile))
	if err != nil {
		return nil, false, apperr.Wrap(apperr.Internal, err, "cannot read the output.md of task %s", task)
	}
	return b, true, nil
}
