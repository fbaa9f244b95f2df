package execlog

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/record"
	"github.com/ideate/git-ideate/internal/secretgate"
	"github.com/ideate/git-ideate/internal/textfmt"
)

// Ref is the ref whose commit chain is the execution log.
const Ref = "refs/ideate/exec"

// NotesRef is where a verdict is noted on the commit it judged (shared
// with the record's commit-boundary lines).
const NotesRef = gitstore.NotesRef

// FormatVersion is the version of the exec tree layout this build writes
// and the newest it reads, stored at the root as the blob FormatFile.
const (
	FormatVersion = 1
	FormatFile    = "ideate-format"
)

// MaxEntry is the largest an entry may be, encoded.
const MaxEntry = 1 << 20

// Limits of the short fields.
const (
	maxLabel = 200  // a task, story, test id, reason class, actor
	maxPath  = 4096 // one path
)

// The results of a verdict.
const (
	PASS         = "PASS"
	FAIL         = "FAIL"
	UNVERIFIABLE = "UNVERIFIABLE"
)

// EventVerdict is the event of an entry that stores a gate's verdict.
const EventVerdict = "verdict"

// Reason is one thing a gate found.
type Reason struct {
	Class  string   `json:"class"`
	Detail string   `json:"detail"`
	Paths  []string `json:"paths,omitempty"`
	// Severity is the gate's grade of the reason ("info" and "medium"
	// are notes that do not fail the verdict); "" for a plain reason.
	Severity string `json:"severity,omitempty"`
}

// TestResult is one declared test's outcome in a judged run.
type TestResult struct {
	ID      string `json:"id"`
	Outcome string `json:"outcome"`
	Detail  string `json:"detail,omitempty"`
}

// Entry is one line of the execution log.
type Entry struct {
	ID    string `json:"id"`    // a ULID, minted by Append
	At    string `json:"at"`    // ISO 8601 UTC with milliseconds, set by Append
	Actor string `json:"actor"` // who or what wrote it ("" when unknown)

	Sprint int    `json:"sprint"` // 0 when unknown
	Wave   int    `json:"wave"`   // 0 when unknown
	Story  string `json:"story"`  // "S1-01"; filled from Task when empty and Task names one

	Task    string `json:"task"`    // "S1-01/T1"
	Attempt int    `json:"attempt"` // from 1; 0 when unknown

	Phase  string `json:"phase"`  // red|scaffold|green|final|review|gate|budget|replan|escalate|… (a lower-case word)
	Event  string `json:"event"`  // "verdict" for a gate verdict; start|complete|kill|… otherwise
	Result string `json:"result"` // PASS|FAIL|UNVERIFIABLE when Event is "verdict", else ""

	Commit string `json:"commit"` // the judged commit (40 hex), "" when none
	Tree   string `json:"tree"`   // its tree
	Base   string `json:"base"`   // the task's base commit

	Reasons []Reason     `json:"reasons"`
	Tests   []TestResult `json:"tests"`
	Paths   []string     `json:"paths"`
	Detail  string       `json:"detail"` // free text
}

// Filter selects entries; zero fields select everything.
type Filter struct {
	Task, Phase, Event, Result string
	Commit                     string // a full object name or a prefix of one
	Attempt                    int
	Limit                      int // at most this many, newest first; 0: all
	// Before, when set, keeps only entries whose ID sorts before it: the
	// next page after an entry of that ID.
	Before string
}

// Log is the execution log of one repository. It is safe for concurrent
// use by several goroutines and processes.
type Log struct {
	git *gitstore.Store
	ids *record.IDSource

	// Now is the clock; tests replace it.
	Now func() time.Time
}

// Open returns the execution log of the repository g opened.
func Open(g *gitstore.Store) *Log {
	return &Log{git: g, ids: record.NewIDSource(), Now: time.Now}
}

// format is the version entry at the root of every exec tree.
var format = gitstore.Format{File: FormatFile, Kind: "ideate-exec", Version: FormatVersion,
	Code: apperr.FormatVersion, What: "the execution log on " + Ref}

// Path is where an entry lives in the tree: one directory per 9.3 hours
// (the ULID's first five characters), then <ID>.json. See docs/FORMAT.md.
func Path(id string) (dir, file string) { return id[:5], id + ".json" }

// Append validates e, passes every text field through the secret gate,
// mints its ID and At, and commits it on Ref. A verdict that names a
// commit then gets one NoteLine on that commit's note on NotesRef. Nothing
// is written when the entry is refused; when the note cannot be written
// after the entry was, the error says so and names the entry (the log is
// the truth, the note its view on the commit). ctx bounds the waits.
func (l *Log) Append(ctx context.Context, e Entry) (Entry, error) {
	if err := l.prepare(&e); err != nil {
		return Entry{}, err
	}
	data, err := Marshal(e)
	if err != nil {
		return Entry{}, err
	}
	if len(data) > MaxEntry {
		return Entry{}, apperr.New(apperr.Schema, "the entry is %d bytes encoded; an entry may be at most %d", len(data), MaxEntry)
	}
	if e.Commit != "" {
		h, _ := gitstore.ParseHash(e.Commit)
		if _, err := l.git.ReadCommit(h); err != nil {
			if apperr.Is(err, apperr.NotFound) {
				return Entry{}, apperr.New(apperr.NotFound, "commit %s is not in this repository; nothing logged", e.Commit[:12])
			}
			return Entry{}, apperr.Wrap(apperr.Schema, err, "commit %s is not a commit; nothing logged", e.Commit[:12])
		}
	}
	dir, file := Path(e.ID)
	_, err = l.git.Transact(ctx, Ref, func(tip gitstore.Hash) (gitstore.Hash, string, error) {
		root, err := l.git.RootTree(tip, format)
		if err != nil {
			return gitstore.ZeroHash, "", err
		}
		blob, err := l.git.WriteBlob(data)
		if err != nil {
			return gitstore.ZeroHash, "", err
		}
		newRoot, err := l.git.InsertWithRootFile(root, []string{dir}, gitstore.TreeEntry{Mode: gitstore.ModeFile, Name: file, Hash: blob},
			false, format.File, format.Blob())
		if err != nil {
			return gitstore.ZeroHash, "", err
		}
		return newRoot, commitMessage(e), nil
	})
	if err != nil {
		return Entry{}, err
	}
	if e.Event == EventVerdict && e.Commit != "" {
		h, _ := gitstore.ParseHash(e.Commit)
		if _, err := l.git.AppendNote(ctx, NotesRef, h, NoteLine(e)); err != nil {
			return e, apperr.Wrap(apperr.CodeOf(err), err, "exec entry %s was logged but the note on %s was not: %s",
				e.ID, e.Commit[:12], apperr.Message(err))
		}
	}
	return e, nil
}

// NoteLine is the line a verdict adds to the note of the commit it judged:
// "ideate: green PASS S1-01/T1 attempt 1 (exec <ULID>)".
func NoteLine(e Entry) string {
	var b strings.Builder
	b.WriteString("ideate: " + e.Phase + " " + e.Result)
	if e.Task != "" {
		b.WriteString(" " + gitstore.MessageLine(e.Task))
	}
	if e.Attempt > 0 {
		b.WriteString(" attempt " + strconv.Itoa(e.Attempt))
	}
	b.WriteString(" (exec " + e.ID + ")")
	return b.String()
}

// commitMessage makes `git log refs/ideate/exec` readable. Only checked
// labels reach it.
func commitMessage(e Entry) string {
	subj := e.Phase + " " + e.Event
	if e.Result != "" {
		subj += " " + e.Result
	}
	if e.Task != "" {
		subj += " " + gitstore.MessageLine(e.Task)
	}
	if e.Attempt > 0 {
		subj += " attempt " + strconv.Itoa(e.Attempt)
	}
	return fmt.Sprintf("%s\n\nIdeate-Exec: %s\n", subj, e.ID)
}

// Marshal is an entry's stored form: one JSON object and a newline.
func Marshal(e Entry) ([]byte, error) {
	if e.Reasons == nil {
		e.Reasons = []Reason{}
	}
	if e.Tests == nil {
		e.Tests = []TestResult{}
	}
	if e.Paths == nil {
		e.Paths = []string{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return nil, apperr.Wrap(apperr.Internal, err, "cannot encode an exec entry")
	}
	return buf.Bytes(), nil
}

// Parse reads an entry's stored form.
func Parse(data []byte) (Entry, error) {
	var e Entry
	if err := json.Unmarshal(data, &e); err != nil {
		return Entry{}, apperr.Wrap(apperr.FormatVersion, err, "an exec entry does not parse as JSON")
	}
	if !record.ValidID(e.ID) {
		return Entry{}, apperr.New(apperr.FormatVersion, "an exec entry has no valid id")
	}
	return e, nil
}

func clean(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

var (
	wordRe   = textfmt.BoundedRegexp(`^[a-z][a-z0-9_-]*$`, 32)
	classRe  = textfmt.BoundedRegexp(`^[a-z][a-z0-9_-]*$`, 64)
	storyRe  = textfmt.Regexp(`^S\d+-\d{2,}$`)
	segRe    = textfmt.BoundedRegexp(`^[A-Za-z0-9][A-Za-z0-9._-]*$`, 64)
	hexRe    = textfmt.Regexp(`^[0-9a-f]{40}$`)
	outcomRe = textfmt.BoundedRegexp(`^[A-Z][A-Z0-9_-]*$`, 32)
	taskHead = textfmt.Regexp(`^(S\d+-\d{2,})/`)
)

// prepare checks e and makes it ready to store: ID and At minted, text
// cleaned and gated. Error messages name fields, never their values.
func (l *Log) prepare(e *Entry) error {
	e.Actor = clean(strings.TrimSpace(e.Actor))
	e.Story = strings.TrimSpace(e.Story)
	e.Task = strings.TrimSpace(e.Task)
	e.Phase = strings.TrimSpace(e.Phase)
	e.Event = strings.TrimSpace(e.Event)
	e.Result = strings.TrimSpace(e.Result)
	e.Commit = strings.ToLower(strings.TrimSpace(e.Commit))
	e.Tree = strings.ToLower(strings.TrimSpace(e.Tree))
	e.Base = strings.ToLower(strings.TrimSpace(e.Base))
	e.Detail = clean(e.Detail)

	switch {
	case e.Phase == "":
		return apperr.New(apperr.Schema, "an exec entry needs a phase")
	case !wordRe().MatchString(e.Phase):
		return apperr.New(apperr.Schema, "phase must be one lower-case word (letters, digits, '-' or '_', at most 32)")
	case e.Event == "":
		return apperr.New(apperr.Schema, "an exec entry needs an event")
	case !wordRe().MatchString(e.Event):
		return apperr.New(apperr.Schema, "event must be one lower-case word (letters, digits, '-' or '_', at most 32)")
	case e.Event == EventVerdict && e.Result != PASS && e.Result != FAIL && e.Result != UNVERIFIABLE:
		return apperr.New(apperr.Schema, "a verdict's result must be PASS, FAIL or UNVERIFIABLE")
	case e.Event != EventVerdict && e.Result != "":
		return apperr.New(apperr.Schema, "only a verdict carries a result")
	case e.Sprint < 0 || e.Wave < 0 || e.Attempt < 0:
		return apperr.New(apperr.Schema, "sprint, wave and attempt are counts from 1 (0 when unknown)")
	}
	if e.Task != "" {
		if err := checkTask(e.Task); err != nil {
			return err
		}
	}
	if e.Story == "" && e.Task != "" {
		if m := taskHead().FindStringSubmatch(e.Task); m != nil {
			e.Story = m[1]
		}
	}
	if e.Story != "" && !storyRe().MatchString(e.Story) {
		return apperr.New(apperr.Schema, "story must look like S1-01")
	}
	for _, h := range []struct{ field, v string }{{"commit", e.Commit}, {"tree", e.Tree}, {"base", e.Base}} {
		if h.v != "" && !hexRe().MatchString(h.v) {
			return apperr.New(apperr.Schema, "%s must be a full object name (40 hex digits)", h.field)
		}
	}
	if err := checkLabel("actor", e.Actor, maxLabel); err != nil {
		return err
	}
	for i := range e.Reasons {
		r := &e.Reasons[i]
		r.Class, r.Detail = strings.TrimSpace(r.Class), clean(r.Detail)
		if !classRe().MatchString(r.Class) {
			return apperr.New(apperr.Schema, "reason %d: class must be a lower-case label (letters, digits, '-' or '_', at most 64)", i+1)
		}
		if r.Severity != "" && !classRe().MatchString(r.Severity) {
			return apperr.New(apperr.Schema, "reason %d: severity must be a lower-case label (letters, digits, '-' or '_', at most 64)", i+1)
		}
		if err := checkPaths(fmt.Sprintf("reason %d: path", i+1), r.Paths); err != nil {
			return err
		}
	}
	for i := range e.Tests {
		t := &e.Tests[i]
		t.ID, t.Outcome, t.Detail = clean(strings.TrimSpace(t.ID)), strings.TrimSpace(t.Outcome), clean(t.Detail)
		if t.ID == "" {
			return apperr.New(apperr.Schema, "test %d has no id", i+1)
		}
		if err := checkLabel(fmt.Sprintf("test %d: id", i+1), t.ID, maxPath); err != nil {
			return err
		}
		if !outcomRe().MatchString(t.Outcome) {
			return apperr.New(apperr.Schema, "test %d: outcome must be an upper-case word such as PASS or FAIL_ASSERT", i+1)
		}
	}
	if err := checkPaths("path", e.Paths); err != nil {
		return err
	}
	// Every text field through the gate before any object exists. A
	// redaction marker is printable and holds no space, so checked labels
	// stay valid.
	fields := []*string{&e.Actor, &e.Task, &e.Detail}
	for i := range e.Reasons {
		fields = append(fields, &e.Reasons[i].Detail)
		for j := range e.Reasons[i].Paths {
			fields = append(fields, &e.Reasons[i].Paths[j])
		}
	}
	for i := range e.Tests {
		fields = append(fields, &e.Tests[i].ID, &e.Tests[i].Detail)
	}
	for i := range e.Paths {
		fields = append(fields, &e.Paths[i])
	}
	secretgate.Fields(fields...)

	now := l.Now()
	e.ID = l.ids.New(now)
	e.At = textfmt.Timestamp(now)
	return nil
}

// checkTask refuses a task id that could not name a task (see
// worktree.CheckTaskID, whose rule this is) without echoing it.
func checkTask(id string) error {
	segs := strings.Split(id, "/")
	if len(segs) > 4 {
		return apperr.New(apperr.Schema, "task must be 1 to 4 segments joined by '/'")
	}
	for _, s := range segs {
		if !segRe().MatchString(s) || strings.HasSuffix(s, ".lock") || strings.HasSuffix(s, ".") {
			return apperr.New(apperr.Schema, "task: each segment must start with a letter or digit and hold only letters, digits, '.', '_' and '-'")
		}
	}
	return nil
}

func checkLabel(field, v string, max int) error {
	if err := gitstore.CheckLabel(field, v); err != nil {
		return err
	}
	if len(v) > max {
		return apperr.New(apperr.Schema, "%s is %d bytes; at most %d", field, len(v), max)
	}
	return nil
}

func checkPaths(field string, paths []string) error {
	for i, p := range paths {
		if p == "" {
			return apperr.New(apperr.Schema, "%s %d is empty", field, i+1)
		}
		if err := checkLabel(fmt.Sprintf("%s %d", field, i+1), p, maxPath); err != nil {
			return err
		}
	}
	return nil
}

// List returns the entries f selects, newest first (by ID, which is time
// order).
func (l *Log) List(ctx context.Context, f Filter) ([]Entry, error) {
	var out []Entry
	err := l.walk(ctx, func(e Entry) bool {
		if f.match(e) {
			out = append(out, e)
		}
		return f.Limit <= 0 || len(out) < f.Limit
	})
	return out, err
}

// Each calls fn on every entry, newest first (by ID), until it returns
// false: a reader that stops at a point in time reads no further.
func (l *Log) Each(ctx context.Context, fn func(Entry) bool) error { return l.walk(ctx, fn) }

// Latest returns the newest verdict for task and phase; when commit is
// not "" only one at that commit (a full name or a prefix). ok is false
// when there is none.
func (l *Log) Latest(ctx context.Context, task, phase, commit string) (Entry, bool, error) {
	f := Filter{Task: task, Phase: phase, Event: EventVerdict, Commit: commit}
	var found Entry
	ok := false
	err := l.walk(ctx, func(e Entry) bool {
		if f.match(e) {
			found, ok = e, true
			return false
		}
		return true
	})
	return found, ok, err
}

func (f Filter) match(e Entry) bool {
	c := strings.ToLower(strings.TrimSpace(f.Commit))
	return (f.Task == "" || e.Task == f.Task) && (f.Phase == "" || e.Phase == f.Phase) &&
		(f.Event == "" || e.Event == f.Event) && (f.Result == "" || e.Result == f.Result) &&
		(f.Attempt == 0 || e.Attempt == f.Attempt) && (c == "" || e.Commit != "" && strings.HasPrefix(e.Commit, c)) &&
		(f.Before == "" || e.ID < f.Before)
}

// walk calls fn on every entry of the current tip, newest first, until it
// returns false.
func (l *Log) walk(ctx context.Context, fn func(Entry) bool) error {
	tip, err := l.git.Ref(Ref)
	if err != nil {
		return err
	}
	root, err := l.git.RootTree(tip, format)
	if err != nil || root == gitstore.ZeroHash {
		return err
	}
	dirs, err := l.git.ReadTree(root)
	if err != nil {
		return err
	}
	sort.Slice(dirs, func(i, j int) bool { return dirs[i].Name > dirs[j].Name })
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		files, err := l.git.ReadTree(d.Hash)
		if err != nil {
			return err
		}
		sort.Slice(files, func(i, j int) bool { return files[i].Name > files[j].Name })
		for _, fe := range files {
			if err := ctx.Err(); err != nil {
				return err
			}
			if fe.IsDir() || !strings.HasSuffix(fe.Name, ".json") {
				continue
			}
			data, err := l.git.ReadBlob(fe.Hash)
			if err != nil {
				return err
			}
			e, err := Parse(data)
			if err != nil {
				return apperr.Wrap(apperr.CodeOf(err), err, "%s/%s: %s", d.Name, fe.Name, apperr.Message(err))
			}
			if !fn(e) {
				return nil
			}
		}
	}
	return nil
}

// Line is the entry as one line of the playbook's execution.log:
//
//	<ISO8601Z> wave-<K> <phase> <SN-NN> <event> task=T1 attempt=1 [result=PASS] [class=a,b] [commit=<12 hex>]
//
// The phase is one the playbook's gate-ledger-format check knows
// (red|green|scaffold|review|gate|budget|replan); any other (final,
// escalate, …) is written "gate" with a "phase=<phase>" token after the
// event. A story that is not known is "-", a wave that is not known 0.
func Line(e Entry) string {
	at := e.At
	if t, err := time.Parse(time.RFC3339Nano, e.At); err == nil {
		at = t.UTC().Format("2006-01-02T15:04:05Z")
	}
	phase, extra := e.Phase, ""
	switch phase {
	case "red", "green", "scaffold", "review", "gate", "budget", "replan":
	default:
		phase, extra = "gate", " phase="+token(e.Phase)
	}
	story := e.Story
	if story == "" {
		story = "-"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s wave-%d %s %s %s%s", at, e.Wave, phase, token(story), token(e.Event), extra)
	if e.Task != "" {
		task := e.Task
		if i := strings.LastIndexByte(task, '/'); i >= 0 && strings.HasPrefix(task, e.Story+"/") {
			task = task[i+1:]
		}
		b.WriteString(" task=" + token(task))
	}
	if e.Attempt > 0 {
		b.WriteString(" attempt=" + strconv.Itoa(e.Attempt))
	}
	if e.Result != "" {
		b.WriteString(" result=" + token(e.Result))
	}
	var classes []string
	seen := map[string]bool{}
	for _, r := range e.Reasons {
		if c := token(r.Class); c != "" && !seen[c] {
			seen[c] = true
			classes = append(classes, c)
		}
	}
	if len(classes) > 0 {
		b.WriteString(" class=" + strings.Join(classes, ","))
	}
	if len(e.Commit) >= 12 {
		b.WriteString(" commit=" + token(e.Commit[:12]))
	}
	return b.String()
}

// token keeps a stored value on its line as one token (entries read from
// another clone were checked there, not here).
func token(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return '_'
		}
		return r
	}, s)
}
