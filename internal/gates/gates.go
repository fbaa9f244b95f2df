package gates

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/textfmt"
)

// UnknownGate: no gate of that name is registered.
const UnknownGate apperr.Code = "UNKNOWN_GATE"

// Name names a gate ("red", "green", "cost", …).
type Name string

// Result is a gate's judgement.
type Result string

// The results a gate returns.
const (
	PASS         Result = "PASS"
	FAIL         Result = "FAIL"
	UNVERIFIABLE Result = "UNVERIFIABLE" // could not judge; never a pass
)

// Point is the moment a gate is asked at.
type Point string

// The points a gate can be asked at.
const (
	// OnDemand: asked directly (the CLI, an MCP tool), not at a host event.
	OnDemand Point = ""
	// BeforeTool: an agent is about to run a tool (Input.Tool, Command,
	// Paths, Dispatch say which and with what).
	BeforeTool Point = "before-tool"
	// AgentStop: an agent (Input.Agent, Role; both "" for the main session)
	// is about to stop.
	AgentStop Point = "agent-stop"
)

// Input is what a gate judges. Every field is optional: a gate that needs
// one that is missing answers UNVERIFIABLE.
type Input struct {
	Point   Point
	Task    string // the work item the work belongs to
	Attempt int    // the attempt at that task, from 1; 0 when unknown
	Role    string // the agent's role or type ("" for the main session)
	Agent   string // the agent's id, stable across its events ("" for the main session)
	Session string // the session id
	Dir     string // the working directory: the task's worktree when it has one
	Commit  string // the commit to judge, "" when the gate takes the current one
	// Timeout bounds each test run a gate makes (its tests are then
	// TIMEOUT); zero means the gate's default.
	Timeout time.Duration

	// BeforeTool: the tool about to run, and what it will touch.
	Tool     string   // the tool's name as the host calls it ("Bash", "Write", …)
	Command  string   // a shell tool's command line
	Paths    []string // the files a file tool writes
	Dispatch string   // a dispatch tool's agent role: the agent about to be started
	// Guard is what the role guard judges against (guard.go).
	Guard *GuardFacts
	// Cost is what the cost gate judges a Bash call against (cost.go);
	// nil for a call bound to no task.
	Cost *CostFacts
	// Escape is what the check after the fact compares at an execution
	// agent's stop (escape.go).
	Escape *EscapeFacts
}

// Reason is one thing a gate found.
type Reason struct {
	Class  string   `json:"class"`           // a short stable lower_snake label (build_fail, regression, out_of_scope, …)
	Detail string   `json:"detail"`          // one sentence
	Paths  []string `json:"paths,omitempty"` // the files it concerns, when any
	// Severity grades a finding of a gate that has grades (structure:
	// high fails, medium and info do not); "" for the others.
	Severity string `json:"severity,omitempty"`
}

// TestOutcome is one declared test's outcome in the run a gate judged.
type TestOutcome struct {
	ID      string `json:"id"`
	Outcome string `json:"outcome"`
	Detail  string `json:"detail,omitempty"`
}

// Verdict is a gate's judgement of one Input. The gates that judge a
// task's commit fill in what they judged: the task and attempt, the
// commit and its tree, the task's base, and the declared tests' outcomes.
type Verdict struct {
	Gate    Name          `json:"gate"`
	Result  Result        `json:"result"`
	Reasons []Reason      `json:"reasons"`
	Commit  string        `json:"commit,omitempty"` // the commit judged, when the gate judged one
	Task    string        `json:"task,omitempty"`
	Attempt int           `json:"attempt,omitempty"`
	Base    string        `json:"base,omitempty"` // the task's base commit
	Tree    string        `json:"tree,omitempty"` // the judged commit's tree
	Tests   []TestOutcome `json:"tests,omitempty"`
	// Sprint, Wave and Story place the task in the plan when it is known
	// (0 and "" otherwise).
	Sprint int    `json:"sprint,omitempty"`
	Wave   int    `json:"wave,omitempty"`
	Story  string `json:"story,omitempty"`
	// Notes are what happened after the verdict was stored (the plan-ready
	// boxes ticked after a GREEN PASS); not part of the judgement.
	Notes []string `json:"notes,omitempty"`
}

// Passed reports whether v lets the work go on: PASS and nothing else.
func (v Verdict) Passed() bool { return v.Result == PASS }

// BackToRed reports whether v is a GREEN FAIL whose only failing reasons
// name declared symbols no declared test pins: a defect of the tests,
// which the next attempt mends as RED, and nothing the GREEN worker may
// change (it may not touch a test).
func (v Verdict) BackToRed() bool {
	if v.Gate != "green" || v.Result != FAIL {
		return false
	}
	unpinned := false
	for _, r := range v.Reasons {
		if r.Severity != "" {
			continue
		}
		if r.Class != ClassUnpinned {
			return false
		}
		unpinned = true
	}
	return unpinned
}

// String is v as one line: "gate: RESULT: class: detail (paths); …".
func (v Verdict) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", v.Gate, v.Result)
	for i, r := range v.Reasons {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		if r.Class != "" {
			b.WriteString(r.Class + ": ")
		}
		b.WriteString(textfmt.OneLine(r.Detail))
		if len(r.Paths) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(r.Paths, ", "))
		}
	}
	return b.String()
}

// Gate is one check. Run judges in and returns its verdict; it returns an
// error only when it could not run at all. Run may be called from several
// goroutines and processes at once and must be idempotent: asking twice
// about the same facts gives the same verdict. It must return soon after
// ctx is done.
type Gate interface {
	Run(ctx context.Context, in Input) (Verdict, error)
}

// Func adapts a function to a Gate.
type Func func(ctx context.Context, in Input) (Verdict, error)

// Run calls f.
func (f Func) Run(ctx context.Context, in Input) (Verdict, error) { return f(ctx, in) }

// Registry holds the gates by name. Register everything before the first
// Run; Run is then safe to call concurrently.
type Registry struct {
	gates map[Name]Gate
	// Lock, when set, is the per-task lock Judge holds while a gate judges
	// a task and its verdict is stored (TaskLock builds one).
	Lock func(ctx context.Context, task string) (release func(), err error)
	// Tick, when set, is what Judge does after it stored a GREEN PASS:
	// tick the task's plan-ready boxes (gates.Tick); its note or error is
	// added to the verdict's Notes.
	Tick func(ctx context.Context, task string) (note string, err error)
	// Ready, when set, is what Judge does after it stored a RED PASS:
	// write the task's section of plan-ready.md (WriteReady); its note or
	// error is added to the verdict's Notes.
	Ready func(ctx context.Context, v Verdict) (note string, err error)
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{gates: map[Name]Gate{}} }

// Register adds g under name. An empty name, a nil gate or a name taken
// already is apperr.Schema, and nothing is added.
func (r *Registry) Register(name Name, g Gate) error {
	switch {
	case name == "":
		return apperr.New(apperr.Schema, "a gate needs a name")
	case g == nil:
		return apperr.New(apperr.Schema, "gate %s is nil", name)
	case r.gates[name] != nil:
		return apperr.New(apperr.Schema, "gate %s is registered twice", name)
	}
	r.gates[name] = g
	return nil
}

// Names lists the registered gates, sorted.
func (r *Registry) Names() []Name {
	out := make([]Name, 0, len(r.gates))
	for n := range r.gates {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Run asks the gate called name to judge in. An unknown name is an error
// (UnknownGate) and no verdict. A gate that errs, is cancelled, or returns
// a result other than PASS, FAIL and UNVERIFIABLE yields an UNVERIFIABLE
// verdict whose reason says why, with a nil error: a gate that could not
// judge never passes. The verdict always names its gate.
func (r *Registry) Run(ctx context.Context, name Name, in Input) (Verdict, error) {
	g := r.gates[name]
	if g == nil {
		return Verdict{}, apperr.New(UnknownGate, "no gate named %q (gates: %s)", name, r.list())
	}
	v, err := g.Run(ctx, in)
	if err == nil {
		err = ctx.Err()
	}
	switch {
	case err != nil:
		v.Result, v.Tests = UNVERIFIABLE, nil
		v.Reasons = []Reason{{Class: "error", Detail: "the gate could not run: " + errText(err)}}
	case v.Result != PASS && v.Result != FAIL && v.Result != UNVERIFIABLE:
		v.Reasons = append([]Reason{{Class: "error",
			Detail: fmt.Sprintf("the gate returned the result %q, which is not PASS, FAIL or UNVERIFIABLE", v.Result)}}, v.Reasons...)
		v.Result = UNVERIFIABLE
	}
	v.Gate = name
	return v, nil
}

func (r *Registry) list() string {
	names := r.Names()
	if len(names) == 0 {
		return "none"
	}
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = string(n)
	}
	return strings.Join(s, ", ")
}

func errText(err error) string { return textfmt.OneLine(err.Error()) }
