// Package telemetry counts what git ideate does, one JSON line per event,
// in <state dir>/telemetry.ndjson of each clone (never in the repository's
// refs: counters are local and nothing reads them but the report).
//
// The eight counters are those of the reference contract: capture_fired,
// capture_write_failed, priming (kind requested or usefulness),
// kg_unreachable, frontier_size, redactions, work_claims and
// board_degraded_opens. Recording is always on and never fails its
// caller: an event that cannot be written is dropped (and reported to
// Recorder.Warn when set).
//
// Every event is one write(2) of one line to a file opened with O_APPEND,
// and every line is kept far below the 4 KiB a local file system appends
// atomically, so lines from concurrent processes never interleave.
package telemetry

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/ideate/git-ideate/internal/textfmt"
)

// FileName is the name of the event file inside the state directory.
const FileName = "telemetry.ndjson"

// The counter names, as written in each event's "counter" field.
const (
	CaptureFired       = "capture_fired"
	CaptureWriteFailed = "capture_write_failed"
	Priming            = "priming"
	KGUnreachable      = "kg_unreachable"
	FrontierSize       = "frontier_size"
	Redactions         = "redactions"
	WorkClaims         = "work_claims"
	BoardDegradedOpens = "board_degraded_opens"
)

// Counters is the closed set of counters, in report order.
var Counters = []string{CaptureFired, CaptureWriteFailed, Priming, KGUnreachable,
	FrontierSize, Redactions, WorkClaims, BoardDegradedOpens}

// The two kinds of a priming event.
const (
	PrimingKindRequested  = "requested"
	PrimingKindUsefulness = "usefulness"
)

const (
	// MaxField is the most bytes one string value takes in a line once
	// JSON-escaped; longer values are cut and end with "…".
	MaxField = 512
	// MaxLine bounds a whole line (newline included). No event built from
	// the fields below can exceed it; a line that would is dropped.
	MaxLine = 3 * 1024
)

// Recorder appends events for one session to one state directory. Its
// methods satisfy record.Observer and board.Observer, are safe for
// concurrent use, and are no-ops on a nil *Recorder.
type Recorder struct {
	// Dir is the state directory; the file is Dir/telemetry.ndjson. It is
	// created (with its parents) on the first event.
	Dir string
	// SessionID is written as "sessionId" on every event that does not
	// name its own session (and on those whose session is empty).
	SessionID string
	// Now is the clock of the "at" field.
	Now func() time.Time
	// Warn, when set, hears of every dropped event. It must not block.
	Warn func(msg string)

	// The event file stays open between events, so a long-lived process
	// (the MCP server) pays one write(2) per event, not an open and a
	// close as well.
	mu sync.Mutex
	f  *os.File
}

// Open returns a recorder writing to <stateDir>/telemetry.ndjson for
// session sessionID. Nothing is created until the first event.
func Open(stateDir, sessionID string) *Recorder {
	return &Recorder{Dir: stateDir, SessionID: sessionID, Now: time.Now}
}

// Path is the event file.
func (r *Recorder) Path() string { return filepath.Join(r.Dir, FileName) }

// Captured counts a record append (record.Observer).
func (r *Recorder) Captured(point, session string) {
	if r == nil {
		return
	}
	r.emit(CaptureFired, str("point", point), str("sessionId", r.session(session)))
}

// CaptureFailed counts a failed record append (record.Observer). An empty
// reason is left out of the event.
func (r *Recorder) CaptureFailed(point, session, reason string) {
	if r == nil {
		return
	}
	fl := []field{str("point", point)}
	if reason != "" {
		fl = append(fl, str("reason", reason))
	}
	r.emit(CaptureWriteFailed, append(fl, str("sessionId", r.session(session)))...)
}

// Redacted counts count matches of one secret pattern masked before a
// record was written (record.Observer).
func (r *Recorder) Redacted(pattern string, count int, session string) {
	if r == nil {
		return
	}
	r.emit(Redactions, str("pattern", pattern), num("count", count), str("sessionId", r.session(session)))
}

// Claimed counts a successful claim of a board item (board.Observer).
func (r *Recorder) Claimed(itemID string) {
	if r == nil {
		return
	}
	r.emit(WorkClaims, str("itemId", itemID), str("sessionId", r.SessionID))
}

// PrimingRequested counts a priming digest asked for by source (for
// example "cli:prime").
func (r *Recorder) PrimingRequested(source string) {
	if r == nil {
		return
	}
	r.emit(Priming, str("kind", PrimingKindRequested), str("source", source), str("sessionId", r.SessionID))
}

// PrimingUsefulness counts a usefulness signal about a priming digest.
func (r *Recorder) PrimingUsefulness(signal string) {
	if r == nil {
		return
	}
	r.emit(Priming, str("kind", PrimingKindUsefulness), str("signal", signal), str("sessionId", r.SessionID))
}

// FrontierSize records one sample of the frontier's size.
func (r *Recorder) FrontierSize(n int) {
	if r == nil {
		return
	}
	r.emit(FrontierSize, num("size", n), str("sessionId", r.SessionID))
}

// KGUnreachable counts a knowledge graph that could not be reached.
func (r *Recorder) KGUnreachable() {
	if r == nil {
		return
	}
	r.emit(KGUnreachable, str("sessionId", r.SessionID))
}

// DegradedOpen counts an open of board data written by a newer format:
// what names the thing opened, version the format version found there.
func (r *Recorder) DegradedOpen(what, version string) {
	if r == nil {
		return
	}
	r.emit(BoardDegradedOpens, str("what", what), str("boardVersion", version), str("sessionId", r.SessionID))
}

func (r *Recorder) session(s string) string {
	if s == "" {
		return r.SessionID
	}
	return s
}

func (r *Recorder) emit(counter string, fields ...field) {
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	line := encode(counter, fields, textfmt.Timestamp(now()))
	if len(line) > MaxLine {
		r.warn("telemetry: dropped a " + counter + " event longer than the line limit")
		return
	}
	if err := r.append(line); err != nil {
		r.warn("telemetry: dropped a " + counter + " event: " + err.Error())
	}
}

func (r *Recorder) warn(msg string) {
	if r.Warn != nil {
		r.Warn(msg)
	}
}

// append writes line to the event file with one write(2), opening it (and
// creating the state directory) when it is not open yet. A file deleted
// since it was opened (a user's rm: the file is safe to delete) is
// opened again (one fstat per event), so no event goes to an unlinked
// file.
func (r *Recorder) append(line []byte) error {
	if r.Dir == "" {
		return errors.New("no state directory")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f != nil && unlinked(r.f) {
		r.f.Close()
		r.f = nil
	}
	if r.f == nil {
		f, err := r.open()
		if err != nil {
			return err
		}
		r.f = f
	}
	return writeOnce(r.f, line)
}

// Close closes the event file; a later event opens it again.
func (r *Recorder) Close() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}

// open opens the event file, creating it (and the state directory) only
// when it is missing: an event of a clone that has the file creates none.
func (r *Recorder) open() (*os.File, error) {
	path := r.Path()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(r.Dir, 0o755); err == nil {
			f, err = os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		}
	}
	return f, err
}
