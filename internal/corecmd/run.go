package corecmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/osproc"
	"github.com/ideate/git-ideate/internal/record"
	"github.com/ideate/git-ideate/internal/secretgate"
	tree "github.com/ideate/git-ideate/internal/version"
)

// version and commit are set with -ldflags "-X <this package>.version=… -X
// <this package>.commit=…"; otherwise they come from the build info: the module
// version and the vcs.revision go build stamps when it builds from a git
// checkout (go install ./cmd/... does).
var version, commit = "", ""

// VersionString is what --version prints: the version, the commit it was
// built from, and the record format it writes.
func VersionString() string {
	v, c, dirty := version, commit, false
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if c == "" {
					c = s.Value
				}
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if v == "" {
		// A build from source without a stamped version: this tree's
		// version, marked as a development build.
		v = tree.Version + "-devel"
	}
	switch {
	case c == "":
		c = "commit unknown: built without VCS stamping"
	case dirty:
		c = "commit " + c + " with uncommitted changes"
	default:
		c = "commit " + c
	}
	return "git-ideate " + v + " (" + c + "; record format " + strconv.Itoa(record.FormatVersion) + ")"
}

// HookPath commands must never fail their caller: they exit 0 whatever
// happens and report problems on stderr.
type HookPath interface{ AlwaysZero() }

// Signals is the root context's signal handling. Once it watches, SIGINT
// or SIGTERM cancel ctx, which kills the processes in flight (each runs in
// a process group of its own, so a terminal's ^C reaches only this
// process) and ends waits for locks. The first signal also restores the
// default handling, so a second one ends the process at once, as does the
// first one when the command has not returned after SignalGrace (a step
// that neither waits nor runs a process, such as a long export, does not
// watch ctx).
//
// It watches from the first process the call starts in a group of its own
// (osproc.Group calls watch), or from the start for the long-lived
// commands (eagerSignals). Until then a signal has its default effect: the
// process ends at once, as after kill -9, which the store is built to
// survive (a ref lock left behind is broken by the next writer once it has
// been unheld for a second; see gitstore.LockPolicy). Watching costs
// os/signal's loop and its locked thread, and a CLI record append, work
// claim or work list starts no process: without it an append took 7 % less
// wall and 10 % less CPU time, a work list 11 % less of each, a PreToolUse
// hook 4 % and 7 % (medians of 200 interleaved calls).
type Signals struct {
	once   sync.Once
	cancel context.CancelFunc
	done   chan struct{}
}

// NewSignals returns the root context and its signal handling, not yet
// watching.
func NewSignals() (context.Context, *Signals) {
	ctx, cancel := context.WithCancel(context.Background())
	return ctx, &Signals{cancel: cancel, done: make(chan struct{})}
}

// watch starts watching for SIGINT and SIGTERM, once; it may be called
// from any goroutine.
func (s *Signals) Watch() {
	s.once.Do(func() {
		sctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		go func() {
			defer stop()
			select {
			case <-sctx.Done():
			case <-s.done:
				return
			}
			s.cancel()
			stop()
			select {
			case <-time.After(SignalGrace):
				os.Exit(ExitInterrupted)
			case <-s.done:
			}
		}()
	})
}

// close ends the watching, or keeps it from starting.
func (s *Signals) Close() {
	s.once.Do(func() {})
	close(s.done)
}

// SignalGrace is how long a signalled command has to return on its own.
const SignalGrace = 3 * time.Second

// StartProcess sets up a git-ideate process, either binary: no garbage
// collection (a CLI call lives for milliseconds: collecting costs more
// than it frees), a soft memory limit that keeps a long export or the MCP
// server sane, and the root context, whose signal handling starts
// watching with the first process the call starts in a group of its own
// (or at once, when the caller calls Watch).
func StartProcess() (context.Context, *Signals) {
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(128 << 20)
	ctx, sig := NewSignals()
	osproc.SetBeforeGroup(sig.Watch)
	return ctx, sig
}

// RunCommand runs a parsed command (its path, for the error line) in the
// directory -C named, or ".", and returns its exit status: a hook path
// exits 0 whatever happens.
func RunCommand(env *Env, chdir, path string, hook bool, run func() error) int {
	if chdir != "" {
		env.Dir = chdir
	}
	if env.Dir == "" {
		env.Dir = "."
	}
	if err := run(); err != nil {
		fmt.Fprintf(env.Err, "git ideate %s: %s\n", path, FormatError(err))
		if hook {
			return ExitOK
		}
		return ExitStatus(err)
	}
	return ExitOK
}

// FormatError renders "CODE: sentence" for typed errors, through the
// secret gate: a sentence may quote a value the caller gave.
func FormatError(err error) string {
	var e *apperr.Error
	s := string(apperr.Internal) + ": " + err.Error()
	if errors.As(err, &e) {
		s = e.Error()
	} else if errors.Is(err, context.Canceled) {
		return "CANCELED: interrupted by a signal; the git processes it had started were stopped"
	}
	s, _ = secretgate.Scan(s)
	return s
}

// Exit statuses: the one map from an outcome to the status the process
// exits with, listed by --help (ExitStatusHelp) and in README.md. The
// hook-path commands (HookPath) exit 0 whatever happens.
const (
	ExitOK      = 0
	ExitFailure = 1 // a typed failure: "CODE: sentence" on stderr
	// A command line kong cannot parse (an unknown command, a bad or
	// missing flag) is reported as SCHEMA and exits 1, like any typed
	// failure: the reference contract fixes 1 for a bad flag and for an
	// unknown subcommand, and the golden transcripts hold it.
	ExitUsage        = ExitFailure
	ExitGateFail     = 3 // a gate judged and its verdict is FAIL (apperr.GateFail)
	ExitUnverifiable = 4 // a gate could not judge: UNVERIFIABLE (apperr.Unverifiable), never a pass
	ExitInternal     = 5 // an untyped error or INTERNAL: a bug or an unexpected failure
	// SIGINT or SIGTERM cancelled the command (128 + SIGINT, as shells
	// report an interrupted command); also the status when a signalled
	// command does not return within SignalGrace.
	ExitInterrupted = 130
)

// ExitStatus maps what a command returned to the exit status.
func ExitStatus(err error) int {
	if errors.Is(err, context.Canceled) {
		return ExitInterrupted // printed as CANCELED: sentence (FormatError)
	}
	switch apperr.CodeOf(err) {
	case "":
		return ExitOK
	case apperr.GateFail:
		return ExitGateFail
	case apperr.Unverifiable:
		return ExitUnverifiable
	case apperr.Internal:
		return ExitInternal
	default:
		return ExitFailure
	}
}

// ExitStatuses is the table --help prints, in status order.
var ExitStatuses = []struct {
	Status  int
	Meaning string
}{
	{ExitOK, "success"},
	{ExitFailure, "a typed failure or a malformed command line (CODE: sentence on stderr)"},
	{ExitGateFail, "a gate's verdict is FAIL"},
	{ExitUnverifiable, "a gate could not judge (UNVERIFIABLE)"},
	{ExitInternal, "an internal error (INTERNAL)"},
	{ExitInterrupted, "interrupted by SIGINT or SIGTERM (CANCELED)"},
}

// ExitStatusHelp is the exit-status table --help prints.
func ExitStatusHelp() string {
	var b strings.Builder
	b.WriteString("Exit status:")
	for _, e := range ExitStatuses {
		fmt.Fprintf(&b, "\n  %d  %s", e.Status, e.Meaning)
	}
	b.WriteString("\nhook, record prime, record session-end and work sweep always exit 0.")
	return b.String()
}

// HookLine reports whether args name a command hosts run as a hook (the
// HookPath commands): it exits 0 whatever happens, even on a line kong
// cannot parse.
func HookLine(args []string) bool {
	switch strings.Join(CommandWords(args), " ") {
	case "record prime", "record session-end", "work sweep", "hook":
		return true
	}
	return false
}
