package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/gates"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/plan"
	"github.com/ideate/git-ideate/internal/record"
	"github.com/ideate/git-ideate/internal/retro"
	"github.com/ideate/git-ideate/internal/textfmt"
	"github.com/ideate/git-ideate/internal/worktree"
)

// Stores are the stores of the repository a hook writes to.
type Stores struct {
	Record *record.Store
	Board  *board.Store
	// Primed, when set, hears of every priming digest a hook was asked
	// for, by source ("hook:session-start", "hook:subagent-start").
	Primed func(source string)

	// For the execution gates (the task bindings and the role guard):
	// the task contracts, the clone's state directory (.git/ideate), the
	// main working tree, and the plan's standards (read when a dispatch
	// is approved).
	Tasks     *worktree.Manager
	StateDir  string
	Top       string
	Standards func(ctx context.Context) (*plan.Standards, error)
	// Git and RedCommit, when set, name the files a green-worker may not
	// touch beyond the test globs: what the task's verified RED commit
	// (its newest red PASS) changed, shims aside.
	Git       *gitstore.Store
	RedCommit func(ctx context.Context, task string) (commit string, ok bool, err error)
	// CaptureOutput, when set, copies the worker's .ideate/output.md from
	// the task's worktree onto the task's ref as its current attempt's
	// output.md (revision.Deps.CaptureOutput); the stop gate entry calls
	// it when an execution agent stops, after judging.
	CaptureOutput func(ctx context.Context, task string) (bool, error)
	// Escalations, when set, returns the newest escalations (halted
	// chains, collected failures, scope defects, stalls) as one line
	// each, for the SessionStart priming.
	Escalations func(ctx context.Context, n int) ([]string, error)

	// Retro, when set, is the retrospective's input since the last
	// planning, named in a planning session's SessionStart context.
	Retro func(ctx context.Context) (*retro.Report, error)
}

// Gated reports whether event is one the Dispatcher's gates are asked on:
// the events that announce an action a verdict can stop.
func Gated(event string) bool {
	return event == "PreToolUse" || event == "Stop" || event == "SubagentStop"
}

// Dispatcher runs the handler of each event against the repository the
// payload names. It is used once per hook process; nothing in it is
// shared between calls.
type Dispatcher struct {
	// Open opens the stores of the repository containing dir; session is
	// the host's session id ("" when the payload has none), for telemetry.
	// An error (apperr.NotARepo for a directory outside any repository)
	// stops the handler before it writes anything. It is called at most
	// once per Dispatch.
	Open func(dir, session string) (*Stores, error)
	// Confine, when set, is the command line that runs command confined
	// for a bound execution agent (task, role, agent id), "" when no
	// confinement exists here: the guard then reads commands instead
	// (the weaker mode). Called with an empty command it only says
	// whether confinement exists.
	Confine func(task, role, agent, command string) string
	// ReadOnlyTool, when set, reports whether an MCP tool (its name as
	// the host gives it, mcp__<server>__<tool>) changes nothing; an MCP
	// tool it does not vouch for is one a guarded sub-agent may not use.
	ReadOnlyTool func(name string) bool
	// StateDir, when set, finds the state directory (.git/ideate) of the
	// repository containing dir without opening its stores: the capture
	// of a tool call or prompt needs nothing else. nil: Open is used.
	StateDir func(dir string) (string, error)
	// Getenv reads $CLAUDE_PROJECT_DIR; nil means os.Getenv.
	Getenv func(string) string
	// Dir is the process's working directory, the last place a
	// repository is looked for; "" means ".".
	Dir string
	// Gates, when set, judge the action each Gated event announces;
	// without them nothing is gated.
	Gates *gates.Registry
	// Judge, when set, asks a gate and stores its verdict (the execution
	// log); nil asks Gates directly.
	Judge func(ctx context.Context, name gates.Name, in gates.Input) (gates.Verdict, error)
	// GateOnly marks the hook entries that run a stop gate (the anchored
	// SubagentStop matchers, `git ideate hook --gate`): they judge and
	// capture nothing; the catch-all entry captures and judges nothing.
	GateOnly bool
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Warn receives notes for the host's debug log, one line each; nil
	// discards them.
	Warn func(msg string)
	// PreToolBudget bounds a PreToolUse decision (0: PreToolBudget, the
	// package's); Exit ends the process once the late denial is written
	// (nil: os.Exit(0)). Both are for tests.
	PreToolBudget time.Duration
	Exit          func()
}

// Events the host sends (an open set: names not listed here are handled
// as unknown events, which do nothing).
var knownEvents = []string{
	"SessionStart", "SessionEnd", "SubagentStart", "SubagentStop", "PreCompact", "PostCompact",
	"PreToolUse", "PostToolUse", "PostToolUseFailure", "PostToolBatch", "PermissionRequest", "PermissionDenied",
	"UserPromptSubmit", "UserPromptExpansion", "Stop", "StopFailure", "Notification",
	"TaskCreated", "TaskCompleted", "Setup", "CwdChanged", "FileChanged",
}

// eventKey folds an event name for matching: lower case, without '-',
// '_' and spaces.
func eventKey(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '-' || c == '_' || c == ' ':
		case c >= 'A' && c <= 'Z':
			b = append(b, c+'a'-'A')
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

// CanonicalEvent returns the host's spelling of a known event name given in
// any case, with or without dashes or underscores ("session-start" →
// "SessionStart"); other names come back trimmed and unchanged.
func CanonicalEvent(name string) string {
	name = strings.TrimSpace(name)
	for _, e := range knownEvents {
		if e == name {
			return e
		}
	}
	key := eventKey(name)
	for _, e := range knownEvents {
		if eventKey(e) == key {
			return e
		}
	}
	return name
}

type handler func(c *call) (Response, error)

// call is one event being handled.
type call struct {
	ctx   context.Context
	d     *Dispatcher
	p     *Payload
	event string

	st     *Stores
	stErr  error
	opened bool
}

func (d *Dispatcher) warn(format string, args ...any) {
	if d.Warn != nil {
		d.Warn(textfmt.OneLine(fmt.Sprintf(format, args...)))
	}
}

func (d *Dispatcher) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

func (d *Dispatcher) getenv(k string) string {
	if d.Getenv != nil {
		return d.Getenv(k)
	}
	return os.Getenv(k)
}

// RepoDir is the directory the repository is looked for from: the
// payload's cwd when it is an existing directory, else
// $CLAUDE_PROJECT_DIR when it is one, else the process's directory.
func (d *Dispatcher) RepoDir(p *Payload) string {
	for _, dir := range []string{p.Cwd, d.getenv("CLAUDE_PROJECT_DIR")} {
		if isDir(dir) {
			return dir
		}
	}
	if d.Dir == "" {
		return "."
	}
	return d.Dir
}

func isDir(dir string) bool {
	if dir == "" {
		return false
	}
	fi, err := os.Stat(dir)
	return err == nil && fi.IsDir()
}

// stores opens the repository of the payload once.
func (c *call) stores() (*Stores, error) {
	if !c.opened {
		c.opened = true
		c.st, c.stErr = c.openAt(c.d.RepoDir(c.p))
	}
	return c.st, c.stErr
}

// openAt opens the stores of the repository containing dir, explaining a
// payload cwd that was not used.
func (c *call) openAt(dir string) (*Stores, error) {
	if c.d.Open == nil {
		return nil, apperr.New(apperr.Internal, "the hook dispatcher has no way to open a repository")
	}
	st, err := c.d.Open(dir, c.p.SessionID)
	if err != nil && apperr.Is(err, apperr.NotARepo) && c.p.Cwd != "" && !isDir(c.p.Cwd) {
		return nil, apperr.Wrap(apperr.NotARepo, err, "%s (the payload's cwd %s is not a directory)", apperr.Message(err), c.p.Cwd)
	}
	return st, err
}

// Dispatch runs the handler of event (the payload's hook_event_name when
// event is "") and returns its response. Events without a handler return
// the zero Response and touch nothing, not even the repository. An error
// means the handler stopped early; whatever it had already done stands,
// and the Response is still worth rendering.
func (d *Dispatcher) Dispatch(ctx context.Context, event string, p *Payload) (Response, error) {
	if event == "" {
		event = p.HookEventName
	}
	event = CanonicalEvent(event)
	c := &call{ctx: ctx, d: d, p: p, event: event}
	if Gated(event) {
		dec, err := c.gateAndCapture()
		if dec != nil || err != nil || d.GateOnly {
			return Response{Event: event, Decision: dec}, err
		}
	}
	if d.GateOnly {
		return Response{}, nil
	}
	h := handlerOf(event)
	if h == nil {
		return Response{}, nil
	}
	resp, err := h(c)
	if resp.Event == "" {
		resp.Event = event
	}
	return resp, err
}

// Run is the whole of `git ideate hook [EVENT]`: it reads the payload from
// in, dispatches it (event, when not "", names the event if the payload
// does not), and writes at most one JSON object to out. It never fails:
// every problem becomes one note through Warn, and the caller exits 0.
func (d *Dispatcher) Run(ctx context.Context, in io.Reader, out io.Writer, event string) {
	var raw bytes.Buffer
	p, err := ReadPayload(io.TeeReader(in, &raw))
	if err != nil {
		d.warn("%s; nothing recorded", errText(err))
		// Silence allows the call: a tool call that cannot be read is
		// not let through unjudged.
		if CanonicalEvent(event) == "PreToolUse" || preToolUseKey.Match(raw.Bytes()) {
			out.Write(Response{Event: "PreToolUse", Decision: deny("this call's hook payload cannot be read (%s), so it is denied", errText(err))}.Render())
		}
		return
	}
	ev := CanonicalEvent(p.HookEventName)
	if arg := CanonicalEvent(event); arg != "" {
		if ev == "" {
			ev = arg
		} else if arg != ev {
			d.warn("the payload is a %s event, not %s; handling it as %s", ev, arg, ev)
		}
	}
	var mu sync.Mutex
	answered := false
	answer := func(b []byte) bool {
		mu.Lock()
		defer mu.Unlock()
		if answered {
			return false
		}
		answered = true
		if b != nil {
			if _, err := out.Write(b); err != nil {
				d.warn("cannot write the hook output: %v", err)
			}
		}
		return true
	}
	if ev == "PreToolUse" {
		budget := d.PreToolBudget
		if budget <= 0 {
			budget = PreToolBudget
		}
		t := time.AfterFunc(budget, func() {
			late := Response{Event: ev, Decision: deny("this call could not be judged within %s (the host would have let it run unjudged past %d s), so it is denied; try it again", budget, preToolTimeout)}
			if answer(late.Render()) {
				d.warn("PreToolUse: no decision within %s: denied", budget)
				if d.Exit != nil {
					d.Exit()
				} else {
					os.Exit(0)
				}
			}
		})
		defer t.Stop()
	}
	resp, err := d.Dispatch(ctx, ev, p)
	if err != nil {
		d.warn("%s: %s", ev, errText(err))
	}
	answer(resp.Render())
}

// preToolUseKey finds the event of a PreToolUse payload the JSON reader
// refuses (the host writes it compactly, as a top-level key; inside a
// string its quotes would be escaped).
var preToolUseKey = regexp.MustCompile(`"hook_event_name"\s*:\s*"PreToolUse"`)

// PreToolBudget is how long a PreToolUse hook may take to decide. The
// host waits preToolTimeout seconds for it and then runs the tool as if
// no hook had spoken (a Bash call then runs without its confinement);
// past the budget the hook denies the call and exits instead, leaving the
// rest of the host's time to the process's start and exit.
const PreToolBudget = time.Duration(preToolTimeout-3) * time.Second

// errText is an error as one sentence: "CODE: sentence" for typed errors.
func errText(err error) string {
	var e *apperr.Error
	if errors.As(err, &e) {
		return e.Error()
	}
	return err.Error()
}

// absDir resolves dir against base.
func absDir(base, dir string) string {
	if dir == "" {
		return base
	}
	if filepath.IsAbs(dir) {
		return filepath.Clean(dir)
	}
	return filepath.Join(base, dir)
}
