package transcripts

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/atomicfile"
	"github.com/ideate/git-ideate/internal/osproc"
	"github.com/ideate/git-ideate/internal/secretgate"
	"github.com/ideate/git-ideate/internal/textfmt"
)

// Dir is the store's directory under the clone's state directory.
const Dir = "transcripts"

// Names inside the store.
const (
	GlobalFile = "global.jsonl"
	EventsFile = "events.jsonl"
	sessionsD  = "sessions"
	tasksD     = "tasks"
	offsetExt  = ".offset"
)

// StageDir is the directory Stage writes in a worktree.
const StageDir = ".transcripts"

// LineBuffer is the read buffer of a copy: lines up to this size are
// redacted as JSON, longer ones streamed in pieces.
const LineBuffer = 1 << 20

// Store is the transcript store of one clone. Its methods may be called
// from several processes at once.
type Store struct {
	Root string           // <state>/transcripts
	Now  func() time.Time // the clock; nil: time.Now
}

// Open returns the store under the state directory (.git/ideate); nothing
// is created until something is written.
func Open(stateDir string) *Store { return &Store{Root: filepath.Join(stateDir, Dir)} }

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

var (
	componentRe = textfmt.BoundedRegexp(`^[A-Za-z0-9][A-Za-z0-9._-]*$`, 128)
)

// CheckTask reports whether task can name a task's slice: components of
// letters, digits, '.', '_', '-' separated by '/', not starting with '.'.
func CheckTask(task string) error {
	if task == "" || len(task) > 200 {
		return apperr.New(apperr.Schema, "a task id is 1 to 200 characters")
	}
	for _, c := range strings.Split(task, "/") {
		if !componentRe().MatchString(c) {
			return apperr.New(apperr.Schema, "the task id cannot name a directory (letters, digits, '.', '_', '-' between slashes)")
		}
	}
	return nil
}

// CheckName reports whether name can name a copy or a session.
func CheckName(name string) error {
	if !componentRe().MatchString(name) || strings.HasSuffix(name, offsetExt) {
		return apperr.New(apperr.Schema, "the session or agent id cannot name a transcript file (letters, digits, '.', '_', '-')")
	}
	return nil
}

// TaskDir is the directory of task's slice.
func (s *Store) TaskDir(task string) string {
	return filepath.Join(s.Root, tasksD, filepath.FromSlash(task))
}

// Event is one captured hook event.
type Event struct {
	At        string          `json:"at"`    // set by Append when empty
	Event     string          `json:"event"` // the host's event name
	Session   string          `json:"session,omitempty"`
	Agent     string          `json:"agent,omitempty"`
	AgentType string          `json:"agent_type,omitempty"`
	Task      string          `json:"task,omitempty"`
	Tool      string          `json:"tool,omitempty"`
	Payload   json.RawMessage `json:"payload"` // the whole payload, redacted by Append
}

// Append writes ev, its payload through the secret gate, as one line of
// the global log and, when it names a task, of that task's log. It
// returns the redactions made.
func (s *Store) Append(ev Event) ([]secretgate.Redaction, error) {
	if ev.Task != "" {
		if err := CheckTask(ev.Task); err != nil {
			return nil, err
		}
	}
	if ev.At == "" {
		ev.At = textfmt.Timestamp(s.now())
	}
	secretgate.Fields(&ev.Event, &ev.Session, &ev.Agent, &ev.AgentType, &ev.Tool)
	if len(bytes.TrimSpace(ev.Payload)) == 0 {
		ev.Payload = json.RawMessage("null")
	}
	payload, red := redactLine(ev.Payload)
	ev.Payload = payload
	line, err := marshal(ev)
	if err != nil {
		return red, apperr.Wrap(apperr.Schema, err, "the event cannot be encoded: %v", err)
	}
	line = append(line, '\n')
	if err := appendLine(filepath.Join(s.Root, GlobalFile), line); err != nil {
		return red, err
	}
	if ev.Task != "" {
		if err := appendLine(filepath.Join(s.TaskDir(ev.Task), EventsFile), line); err != nil {
			return red, err
		}
	}
	return red, nil
}

func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// openLocked opens path for appending (creating it and its directory)
// and takes its exclusive flock, reopening when the path was replaced
// while it waited.
func openLocked(path string) (*os.File, error) {
	for tries := 0; ; tries++ {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if errors.Is(err, fs.ErrNotExist) {
			if err = os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
				f, err = os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			}
		}
		if err != nil {
			return nil, apperr.Wrap(apperr.Write, err, "cannot open %s: %v", path, err)
		}
		if err := osproc.Lock(f, osproc.Exclusive); err != nil {
			f.Close()
			return nil, apperr.Wrap(apperr.Write, err, "cannot lock %s: %v", path, err)
		}
		// Still the file the path names (not one a prune replaced)?
		if a, err := f.Stat(); err == nil {
			if b, err := os.Stat(path); err == nil && os.SameFile(a, b) {
				return f, nil
			}
		}
		f.Close()
		if tries > 100 {
			return nil, apperr.New(apperr.Write, "%s keeps being replaced", path)
		}
	}
}

// appendLine writes line (whole lines) to path in one write under its
// lock. A write that fails or falls short (a full disk) is cut back off,
// so the file never ends in half a line that the next event would be
// appended to.
func appendLine(path string, line []byte) error {
	f, err := openLocked(path)
	if err != nil {
		return err
	}
	size := fileSize(f)
	n, werr := f.Write(line)
	if werr == nil && n < len(line) {
		werr = io.ErrShortWrite
	}
	if werr != nil && n > 0 {
		if terr := f.Truncate(size); terr != nil {
			werr = fmt.Errorf("%v; and it cannot be cut back: %v", werr, terr)
		}
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return apperr.Wrap(apperr.Write, werr, "cannot append to %s: %v", path, werr)
	}
	return nil
}

// redactLine passes one JSON line (or text) through the secret gate: a
// JSON value with no finding in any string comes back as it was.
func redactLine(line []byte) ([]byte, []secretgate.Redaction) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		out, red := secretgate.Scan(string(line))
		if red == nil {
			return line, nil
		}
		return []byte(out), red
	}
	var red []secretgate.Redaction
	v = walk(v, &red)
	if red == nil {
		return line, nil
	}
	out, err := marshal(v)
	if err != nil {
		s, r := secretgate.Scan(string(line))
		return []byte(s), r
	}
	return out, red
}

func walk(v any, red *[]secretgate.Redaction) any {
	switch x := v.(type) {
	case string:
		s, r := secretgate.Scan(x)
		if r != nil {
			*red = secretgate.Merge(*red, r)
		}
		return s
	case []any:
		for i := range x {
			x[i] = walk(x[i], red)
		}
	case map[string]any:
		for k, e := range x {
			nk, r := secretgate.Scan(k)
			e = walk(e, red)
			if r != nil {
				*red = secretgate.Merge(*red, r)
				delete(x, k)
			}
			x[nk] = e
		}
	}
	return v
}

// SessionCopy is the store path of a session's transcript copy; name ""
// is the session's own transcript, else one of its agents bound to no
// task.
func SessionCopy(session, name string) (string, error) {
	if err := CheckName(session); err != nil {
		return "", err
	}
	if name == "" {
		return filepath.Join(sessionsD, session+".jsonl"), nil
	}
	if err := CheckName(name); err != nil {
		return "", err
	}
	return filepath.Join(sessionsD, session+"."+name+".jsonl"), nil
}

// TaskCopy is the store path of a transcript copy in task's slice.
func TaskCopy(task, name string) (string, error) {
	if err := CheckTask(task); err != nil {
		return "", err
	}
	if err := CheckName(name); err != nil || name+".jsonl" == EventsFile {
		return "", apperr.New(apperr.Schema, "the agent id cannot name a transcript file (letters, digits, '.', '_', '-')")
	}
	return filepath.Join(tasksD, filepath.FromSlash(task), name+".jsonl"), nil
}

// CopyResult says what a copy did.
type CopyResult struct {
	Dest       string                 `json:"dest"`
	From, To   int64                  `json:"-"` // the source's offsets read
	Lines      int                    `json:"lines"`
	Bytes      int64                  `json:"bytes"` // written
	Restarted  bool                   `json:"restarted,omitempty"`
	Redactions []secretgate.Redaction `json:"redactions,omitempty"`
}

// Copy appends to the store file dest (from SessionCopy or TaskCopy) the
// complete lines src gained since the last copy to dest, each through the
// secret gate. A source shorter than the stored offset was replaced: it is
// copied again from its start (Restarted). A missing source is NOT_FOUND.
// Memory stays within a few LineBuffers whatever the file's size.
func (s *Store) Copy(ctx context.Context, src, dest string) (CopyResult, error) {
	res := CopyResult{Dest: dest}
	// The source is the host's path: a FIFO or a device (/dev/zero, or a
	// symlink to it) is refused at once, never read.
	in, _, err := osproc.OpenRegular(src)
	if errors.Is(err, fs.ErrNotExist) {
		return res, apperr.New(apperr.NotFound, "no transcript at %s", src)
	}
	if err != nil {
		return res, apperr.Wrap(apperr.Internal, err, "cannot open %s: %v", src, err)
	}
	defer in.Close()
	path := filepath.Join(s.Root, dest)
	out, err := openLocked(path)
	if err != nil {
		return res, err
	}
	defer out.Close()
	off := readOffset(path + offsetExt)
	fi, err := in.Stat()
	if err != nil {
		return res, apperr.Wrap(apperr.Internal, err, "cannot read %s: %v", src, err)
	}
	if fi.Size() < off {
		off, res.Restarted = 0, true
	}
	res.From = off
	if _, err := in.Seek(off, io.SeekStart); err != nil {
		return res, apperr.Wrap(apperr.Internal, err, "cannot read %s: %v", src, err)
	}
	// Only what the source held when the copy began: a file that keeps
	// growing does not keep the copy going.
	r := bufio.NewReaderSize(io.LimitReader(in, fi.Size()-off), LineBuffer)
	size0 := fileSize(out)
	// Whole lines or nothing: a write that fails (a full disk) takes the
	// destination back to where this copy began, so no half line is left
	// for the next event to be glued to; the offset is not moved, and the
	// next copy writes those lines again.
	w := bufio.NewWriterSize(&wholeWriter{f: out, start: size0}, LineBuffer)
	pos := off
	var long *longLine
	var lineStart int64 // the destination's size where a long line began
	for {
		if err := ctx.Err(); err != nil {
			w.Flush()
			if long != nil {
				out.Truncate(lineStart) // no half of a long line left behind
			}
			return res, err
		}
		chunk, err := r.ReadSlice('\n')
		switch {
		case err == nil && long == nil:
			red, rs := redactLine(bytes.TrimSuffix(chunk, []byte("\n")))
			res.Redactions = secretgate.Merge(res.Redactions, rs)
			w.Write(red)
			w.WriteByte('\n')
			res.Lines++
			pos += int64(len(chunk))
			continue
		case err == nil || errors.Is(err, bufio.ErrBufferFull):
			if long == nil {
				if ferr := w.Flush(); ferr != nil {
					return res, apperr.Wrap(apperr.Write, ferr, "cannot write %s: %v", path, ferr)
				}
				long, lineStart = &longLine{}, fileSize(out)
			}
			res.Redactions = secretgate.Merge(res.Redactions, long.feed(w, chunk, err == nil))
			if err == nil {
				pos += long.n
				res.Lines++
				long = nil
			}
			continue
		case errors.Is(err, io.EOF):
			// The last line is still being written (or the file ends
			// without a newline): it is read whole next time.
			if long != nil {
				if ferr := w.Flush(); ferr != nil {
					return res, apperr.Wrap(apperr.Write, ferr, "cannot write %s: %v", path, ferr)
				}
				if terr := out.Truncate(lineStart); terr != nil {
					return res, apperr.Wrap(apperr.Write, terr, "cannot write %s: %v", path, terr)
				}
			}
		default:
			w.Flush()
			return res, apperr.Wrap(apperr.Internal, err, "cannot read %s: %v", src, err)
		}
		break
	}
	if err := w.Flush(); err != nil {
		return res, apperr.Wrap(apperr.Write, err, "cannot write %s: %v", path, err)
	}
	res.Bytes = fileSize(out) - size0
	res.To = pos
	if pos != off || res.Restarted {
		if err := atomicfile.Replace(path+offsetExt, []byte(strconv.FormatInt(pos, 10)+"\n"), atomicfile.Options{}); err != nil {
			return res, apperr.Wrap(apperr.Write, err, "cannot write %s: %v", path+offsetExt, err)
		}
	}
	return res, nil
}

// wholeWriter writes to a file and, once a write fails, cuts the file
// back to start and fails every later write.
type wholeWriter struct {
	f     *os.File
	start int64
	err   error
}

func (w *wholeWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	n, err := w.f.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		w.err = err
		if terr := w.f.Truncate(w.start); terr != nil {
			w.err = fmt.Errorf("%v; and it cannot be cut back: %v", err, terr)
		}
		return n, w.err
	}
	return n, nil
}

func fileSize(f *os.File) int64 {
	fi, err := f.Stat()
	if err != nil {
		return 0
	}
	return fi.Size()
}

func readOffset(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// longLine streams a line longer than the read buffer: each piece is
// scanned up to its last byte no secret token can span, the rest carried.
type longLine struct {
	carry []byte
	n     int64 // source bytes consumed
}

const maxCarry = 64 << 10

func (l *longLine) feed(w *bufio.Writer, chunk []byte, ended bool) []secretgate.Redaction {
	l.n += int64(len(chunk))
	if ended {
		chunk = bytes.TrimSuffix(chunk, []byte("\n"))
	}
	buf := append(l.carry, chunk...)
	cut := len(buf)
	if !ended {
		cut = bytes.LastIndexAny(buf, " \"\t,:{}[]") + 1
		if cut == 0 && len(buf) > maxCarry {
			cut = len(buf)
		}
	}
	out, red := secretgate.Scan(string(buf[:cut]))
	w.WriteString(out)
	if ended {
		w.WriteByte('\n')
		l.carry = nil
	} else {
		l.carry = append(l.carry[:0:0], buf[cut:]...)
	}
	return red
}

// Stage copies task's slice read-only into worktree/StageDir (replacing an
// earlier stage): its event log and transcript copies, never the offsets,
// the global log or another task's files. It returns the files staged.
func (s *Store) Stage(ctx context.Context, task, worktree string) ([]string, error) {
	if err := CheckTask(task); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(worktree); err != nil || !fi.IsDir() {
		return nil, apperr.New(apperr.NotFound, "no worktree at %s", worktree)
	}
	if err := Unstage(worktree); err != nil {
		return nil, err
	}
	dst := filepath.Join(worktree, StageDir)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return nil, apperr.Wrap(apperr.Write, err, "cannot create %s: %v", dst, err)
	}
	if err := os.WriteFile(filepath.Join(dst, ".gitignore"), []byte("# git ideate: this task's transcripts, read-only, never committed\n*\n"), 0o444); err != nil {
		return nil, apperr.Wrap(apperr.Write, err, "cannot write in %s: %v", dst, err)
	}
	ents, err := os.ReadDir(s.TaskDir(task))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, apperr.Wrap(apperr.Internal, err, "cannot read the slice of task %s: %v", task, err)
	}
	var staged []string
	for _, e := range ents {
		if err := ctx.Err(); err != nil {
			return staged, err
		}
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasSuffix(name, ".jsonl") {
			continue
		}
		if err := copyFile(filepath.Join(s.TaskDir(task), name), filepath.Join(dst, name)); err != nil {
			return staged, err
		}
		staged = append(staged, name)
	}
	if err := os.Chmod(dst, 0o555); err != nil {
		return staged, apperr.Wrap(apperr.Write, err, "cannot make %s read-only: %v", dst, err)
	}
	return staged, nil
}

// copyFile copies src to a new read-only file dst, streaming. The source
// is read under its lock, so a copy holds whole lines only.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return apperr.Wrap(apperr.Internal, err, "cannot read %s: %v", src, err)
	}
	defer in.Close()
	if err := osproc.Lock(in, osproc.Shared); err != nil {
		return apperr.Wrap(apperr.Internal, err, "cannot lock %s: %v", src, err)
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o444)
	if err != nil {
		return apperr.Wrap(apperr.Write, err, "cannot create %s: %v", dst, err)
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return apperr.Wrap(apperr.Write, err, "cannot write %s: %v", dst, err)
	}
	return nil
}

// Unstage removes worktree/StageDir; none there is no error.
func Unstage(worktree string) error {
	dst := filepath.Join(worktree, StageDir)
	if _, err := os.Lstat(dst); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	os.Chmod(dst, 0o755)
	if err := os.RemoveAll(dst); err != nil {
		return apperr.Wrap(apperr.Write, err, "cannot remove %s: %v", dst, err)
	}
	return nil
}

// Staged reports whether worktree holds a stage.
func Staged(worktree string) bool {
	fi, err := os.Stat(filepath.Join(worktree, StageDir))
	return err == nil && fi.IsDir()
}

// Area is the size of one part of the store.
type Area struct {
	Name  string `json:"name"` // "global", "sessions", "task <id>"
	Files int    `json:"files"`
	Bytes int64  `json:"bytes"`
}

// Usage is the size report of the store.
type Usage struct {
	Root  string `json:"root"`
	Files int    `json:"files"`
	Bytes int64  `json:"bytes"`
	Areas []Area `json:"areas"` // global, sessions, then each task by id
}

// Usage measures the store: every file, offsets included.
func (s *Store) Usage(ctx context.Context) (Usage, error) {
	u := Usage{Root: s.Root}
	idx := map[string]int{}
	add := func(area string, size int64) {
		i, ok := idx[area]
		if !ok {
			i = len(u.Areas)
			idx[area] = i
			u.Areas = append(u.Areas, Area{Name: area})
		}
		u.Areas[i].Files++
		u.Areas[i].Bytes += size
		u.Files++
		u.Bytes += size
	}
	err := filepath.WalkDir(s.Root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path == s.Root {
				return filepath.SkipAll
			}
			return err
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if d.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(s.Root, path)
		rel = filepath.ToSlash(rel)
		switch {
		case strings.HasPrefix(rel, tasksD+"/"):
			add("task "+strings.TrimPrefix(filepath.ToSlash(filepath.Dir(rel)), tasksD+"/"), fi.Size())
		case strings.HasPrefix(rel, sessionsD+"/"):
			add("sessions", fi.Size())
		default:
			add("global", fi.Size())
		}
		return nil
	})
	if err != nil {
		return u, apperr.Wrap(apperr.Internal, err, "cannot measure %s: %v", s.Root, err)
	}
	sortAreas(u.Areas)
	return u, nil
}

func sortAreas(a []Area) {
	rank := func(x Area) string {
		switch x.Name {
		case "global":
			return "0"
		case "sessions":
			return "1"
		}
		return "2" + x.Name
	}
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && rank(a[j]) < rank(a[j-1]); j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

// PruneOptions say what Prune cuts; at least one of Before and Task.
type PruneOptions struct {
	// Before cuts what is older: copies last written before it are
	// removed, and the event logs lose their lines captured before it.
	Before time.Time
	// Task removes that task's whole slice.
	Task string
	// DryRun reports without removing anything.
	DryRun bool
}

// PruneResult is what Prune removed (or would).
type PruneResult struct {
	Files      []string `json:"files"` // store-relative paths removed
	LinesCut   int      `json:"lines_cut"`
	BytesFreed int64    `json:"bytes_freed"`
	DryRun     bool     `json:"dry_run,omitempty"`
}

// Prune is the manual cut of the store (nothing else ever removes from
// it). See PruneOptions.
func (s *Store) Prune(ctx context.Context, o PruneOptions) (PruneResult, error) {
	res := PruneResult{DryRun: o.DryRun}
	if o.Before.IsZero() && o.Task == "" {
		return res, apperr.New(apperr.Schema, "say what to prune: a date to cut before, or a task")
	}
	if o.Task != "" {
		if err := CheckTask(o.Task); err != nil {
			return res, err
		}
	}
	remove := func(path string, size int64) error {
		rel, _ := filepath.Rel(s.Root, path)
		res.Files = append(res.Files, filepath.ToSlash(rel))
		res.BytesFreed += size
		if o.DryRun {
			return nil
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return apperr.Wrap(apperr.Write, err, "cannot remove %s: %v", path, err)
		}
		return nil
	}
	if o.Task != "" {
		dir := s.TaskDir(o.Task)
		ents, err := os.ReadDir(dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return res, apperr.Wrap(apperr.Internal, err, "cannot read %s: %v", dir, err)
		}
		for _, e := range ents {
			if !e.Type().IsRegular() {
				continue
			}
			fi, err := e.Info()
			if err != nil {
				continue
			}
			if err := remove(filepath.Join(dir, e.Name()), fi.Size()); err != nil {
				return res, err
			}
		}
		if !o.DryRun {
			os.Remove(dir) // only when empty (a task's sub-tasks stay)
		}
	}
	if o.Before.IsZero() {
		return res, nil
	}
	cutoff := textfmt.Timestamp(o.Before)
	err := filepath.WalkDir(s.Root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
			return nil
		}
		name := filepath.Base(path)
		if name == GlobalFile || name == EventsFile {
			n, freed, err := s.cutLog(path, cutoff, o.DryRun)
			res.LinesCut += n
			res.BytesFreed += freed
			return err
		}
		fi, err := d.Info()
		if err != nil || !fi.ModTime().Before(o.Before) {
			return nil
		}
		size := fi.Size()
		if ofi, err := os.Stat(path + offsetExt); err == nil {
			size += ofi.Size()
			if err := remove(path+offsetExt, 0); err != nil {
				return err
			}
			res.Files = res.Files[:len(res.Files)-1]
		}
		return remove(path, size)
	})
	if err != nil {
		return res, apperr.Wrap(apperr.CodeOf(err), err, "prune %s: %v", s.Root, err)
	}
	return res, nil
}

// cutLog rewrites an event log without its lines captured before cutoff
// (an ISO timestamp; lines are in time order, so it cuts a head), under
// the log's lock; appenders waiting on the old file reopen the new one.
func (s *Store) cutLog(path, cutoff string, dry bool) (int, int64, error) {
	f, err := openLocked(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	in, err := os.Open(path)
	if err != nil {
		return 0, 0, apperr.Wrap(apperr.Internal, err, "cannot read %s: %v", path, err)
	}
	defer in.Close()
	r := bufio.NewReaderSize(in, 64<<10)
	var cut int64
	n := 0
	for {
		line, err := r.ReadBytes('\n')
		if len(line) == 0 || err != nil && !errors.Is(err, io.EOF) {
			break
		}
		var head struct {
			At string `json:"at"`
		}
		// Only the head of the line is needed, but a line is one object.
		if json.Unmarshal(line, &head) != nil || head.At >= cutoff || !strings.HasSuffix(string(line), "\n") {
			break
		}
		cut += int64(len(line))
		n++
		if errors.Is(err, io.EOF) {
			break
		}
	}
	if n == 0 || dry {
		return n, cut, nil
	}
	if _, err := in.Seek(cut, io.SeekStart); err != nil {
		return 0, 0, apperr.Wrap(apperr.Internal, err, "cannot read %s: %v", path, err)
	}
	tmp := fmt.Sprintf("%s.prune-%d", path, os.Getpid())
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return 0, 0, apperr.Wrap(apperr.Write, err, "cannot write %s: %v", tmp, err)
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return 0, 0, apperr.Wrap(apperr.Write, err, "cannot cut %s: %v", path, err)
	}
	return n, cut, nil
}
