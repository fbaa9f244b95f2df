package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gates"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/plan"
	"github.com/ideate/git-ideate/internal/worktree"
)

// BeforeToolGates are the gates asked before a tool call, in order: the
// role guard, then the bounded-cost gate (asked for a bound execution
// agent's Bash calls, when registered).
var BeforeToolGates = []gates.Name{gates.GuardName, gates.CostName}

// StopGates name the gate asked when an execution agent stops, by role.
var StopGates = map[string]gates.Name{gates.RoleRed: "red", gates.RoleScaffold: "scaffold", gates.RoleGreen: "green"}

// StopGateBudget is how long a stop gate may judge: inside the entry's
// timeout (StopGateTimeout), so the hook answers before the host kills it.
const StopGateBudget = (StopGateTimeout - 30) * time.Second

// DefaultBlockCap is how many consecutive SubagentStop blocks the host
// honours unless CLAUDE_CODE_STOP_HOOK_BLOCK_CAP says otherwise.
const DefaultBlockCap = 8

// gateAndCapture is gate, and the capture of a PreToolUse call it denied:
// a denied call never reaches PostToolUse, so it is captured here with
// the reason, and the transcripts show what the agent tried.
func (c *call) gateAndCapture() (*Decision, error) {
	dec, err := c.gate()
	if dec != nil && dec.Block && c.event == "PreToolUse" {
		if cerr := captureDenied(c, dec.Reason); cerr != nil && !apperr.Is(cerr, apperr.NotARepo) {
			c.d.warn("the denied call is not captured: %s", errText(cerr))
		}
	}
	return dec, err
}

// gate is Gate for one call.
func (c *call) gate() (*Decision, error) {
	if c.d.Gates == nil {
		return nil, nil
	}
	switch {
	case c.event == "PreToolUse":
		return c.beforeTool()
	case c.event == "SubagentStop" && c.d.GateOnly:
		return c.agentStop()
	}
	// Stop: the main session's stop asks nothing; the supervisor's
	// final gate is a command it runs, not a hook. SubagentStop without
	// GateOnly is the catch-all capture entry; the anchored gate entries
	// judge.
	return nil, nil
}

func deny(format string, args ...any) *Decision {
	return &Decision{Block: true, Reason: "git ideate: " + fmt.Sprintf(format, args...)}
}

func isFileTool(t string) bool {
	return t == "Write" || t == "Edit" || t == "MultiEdit" || t == "NotebookEdit"
}

// beforeTool gathers the facts of a tool call (the agent's role and
// binding, its task's contract, a dispatch's task) and asks the gates;
// the role guard decides (gates.Guard), and a denial is the gates'
// verdict, stored through d.Judge.
func (c *call) beforeTool() (*Decision, error) {
	p := c.p
	role := gates.RoleOf(p.AgentType)
	sub := p.AgentID != ""
	tool := p.ToolName
	mcp := strings.HasPrefix(tool, "mcp__")
	if role == "" && !isFileTool(tool) && tool != "Bash" && tool != "Monitor" && tool != "Agent" && tool != "Task" && !(sub && mcp) {
		return nil, nil // nothing the guard looks at
	}
	// The main session's own calls (a dispatch aside) are judged only
	// while a sprint executes: outside one, the marker directory says so
	// without opening the repository's stores (which runs git).
	if !sub && tool != "Agent" && tool != "Task" && c.d.StateDir != nil {
		if state, err := c.d.StateDir(c.d.RepoDir(p)); err == nil && !executing(state) {
			return nil, nil
		}
	}
	in := c.d.GateInput(c.event, p)
	in.Role = role
	// The dispatch of a plugin agent (an execution or reviewer role) by
	// anyone but the plugin's own agents (whom the guard refuses any
	// dispatch).
	dispatch := ""
	if tool == "Agent" || tool == "Task" {
		if r := gates.RoleOf(in.Dispatch); r != "" && !(sub && role != "") {
			dispatch = r
		}
	}
	st, err := c.execStores()
	if err != nil {
		if role == "" && dispatch == "" && apperr.Is(err, apperr.NotARepo) {
			return nil, nil
		}
		if role == "" && dispatch == "" {
			return nil, err
		}
		// A guarded agent or a dispatch that cannot be checked is refused.
		v := gates.Verdict{Gate: gates.GuardName, Result: gates.UNVERIFIABLE, Reasons: []gates.Reason{{Class: "no_repository",
			Detail: "the call cannot be checked against its task: " + errText(err)}}}
		return c.refuse(v), nil
	}
	f := &gates.GuardFacts{Subagent: sub, Cwd: in.Dir, Top: st.Top}
	f.ReadOnlyTool = mcp && c.d.ReadOnlyTool != nil && c.d.ReadOnlyTool(tool)
	if p.Cwd != "" && filepath.IsAbs(p.Cwd) {
		f.Cwd = p.Cwd
	}
	if tool == "Write" {
		var ti struct {
			Content *string `json:"content"`
		}
		if json.Unmarshal(p.ToolInput, &ti) == nil && ti.Content != nil {
			f.Content, f.HasContent = *ti.Content, true
		}
	}
	var pending *dispatchRec
	switch {
	case dispatch != "" && gates.IsReviewerRole(dispatch):
		f.Dispatch, pending = c.reviewDispatchFacts(st, dispatch, &in)
	case dispatch != "":
		f.Dispatch, pending = c.dispatchFacts(st, dispatch, &in)
	case sub && gates.IsReviewerRole(role):
		a := &gates.AgentFacts{}
		f.Agent = a
		if b, why := c.bind(st, role); b == nil {
			a.Unbound = why
		} else {
			a.Task, in.Task = b.Task, b.Task
		}
	case sub && gates.IsExecutionRole(role):
		a := &gates.AgentFacts{}
		f.Agent = a
		b, why := c.bind(st, role)
		if b == nil {
			a.Unbound = why
			break
		}
		a.Task = b.Task
		in.Task = b.Task
		ct, err := st.Tasks.Contract(b.Task)
		if err != nil {
			a.ContractErr = errText(err)
			break
		}
		a.Status, a.Open, a.TaskRole = string(ct.Status), ct.Status == worktree.StatusOpen, ct.Role
		in.Attempt = ct.Attempt
		f.Bound, f.Worktree = true, ct.Path
		f.Confined = tool == "Bash" && c.d.Confine != nil && c.d.Confine(b.Task, role, p.AgentID, "") != ""
		f.TestGlobs, f.ShimMarker, f.Extensions = b.Policy.TestGlobs, b.Policy.ShimMarker, b.Policy.Extensions
		f.Frozen = b.Frozen
		if tool == "Bash" {
			in.Cost = &gates.CostFacts{Task: b.Task, Top: ct.Path, Cwd: f.Cwd, Scope: ct.Scope, Tests: ct.Tests,
				TestGlobs: b.Policy.TestGlobs, Rules: b.Policy.Cost, RulesErr: b.Policy.CostErr}
		}
	case sub:
		f.Sprint = executing(st.StateDir)
	default:
		f.Sprint = executing(st.StateDir)
		if f.Sprint {
			pol, err := c.policy(st, false)
			if err != nil {
				c.d.warn("the guard policy cannot be read (%s); production source is judged by extension alone", errText(err))
			}
			f.TestGlobs, f.ShimMarker, f.Extensions = pol.TestGlobs, pol.ShimMarker, pol.Extensions
		}
	}
	in.Guard = f
	if f.Agent != nil && !f.Bound || f.Dispatch != nil && f.Dispatch.TaskErr != "" {
		in.Cost = nil
	}
	var run *pendingRun
	if in.Cost != nil && registered(c.d.Gates, gates.CostName) {
		run = c.recall(st.StateDir, in.Cost, in.Command)
	}
	for _, name := range BeforeToolGates {
		if name == gates.CostName && (in.Cost == nil || !registered(c.d.Gates, name)) {
			continue
		}
		if v := c.judge(name, in); !v.Passed() {
			return c.refuse(v), nil
		}
	}
	if pending != nil {
		if err := c.approve(st, pending); err != nil {
			v := gates.Verdict{Gate: gates.GuardName, Task: pending.Task, Result: gates.UNVERIFIABLE, Reasons: []gates.Reason{{Class: "bookkeeping",
				Detail: fmt.Sprintf("the dispatch of task %s cannot be written down: %v", pending.Task, err)}}}
			return c.refuse(v), nil
		}
	}
	c.remember(st.StateDir, run)
	// What this call changes where another agent's stop will look is
	// logged as the caller's (ledger.go); a confined call's by the
	// confining entry.
	switch {
	case tool != "Bash", f.Confined:
	case f.Bound:
		c.beforeBash(st.StateDir, f.Worktree)
	case !sub:
		c.beforeBash(st.StateDir, st.Top)
	}
	if f.Confined {
		return c.confined(in.Task, in.Role)
	}
	return nil, nil
}

// confined allows a bound execution agent's Bash call with its command
// rewritten to run under the confining entry (Dispatcher.Confine); the
// rest of the tool input is kept.
func (c *call) confined(task, role string) (*Decision, error) {
	p := c.p
	var ti map[string]json.RawMessage
	if err := json.Unmarshal(p.ToolInput, &ti); err != nil || ti == nil {
		return deny("the Bash call's input cannot be read, so it cannot be confined"), nil
	}
	wrapped := c.d.Confine(task, role, p.AgentID, lookup(p.ToolInput, "command"))
	cmd, err := json.Marshal(wrapped)
	if err != nil {
		return deny("the Bash command cannot be confined: %v", err), nil
	}
	ti["command"] = cmd
	data, err := json.Marshal(ti)
	if err != nil {
		return deny("the Bash command cannot be confined: %v", err), nil
	}
	return &Decision{UpdatedInput: data, Reason: "git ideate: runs confined to task " + task + "'s worktree"}, nil
}

// refuse is the host's denial of a verdict that did not pass.
func (c *call) refuse(v gates.Verdict) *Decision {
	if v.Gate == "" {
		v.Gate = gates.GuardName
	}
	return &Decision{Block: true, Reason: "git ideate gate " + v.String()}
}

// registered reports whether reg holds a gate called name.
func registered(reg *gates.Registry, name gates.Name) bool {
	for _, n := range reg.Names() {
		if n == name {
			return true
		}
	}
	return false
}

// judge asks the gate called name: through d.Judge (which stores the
// verdict) when set, else the registry. A gate that cannot be asked is
// UNVERIFIABLE.
func (c *call) judge(name gates.Name, in gates.Input) gates.Verdict {
	var v gates.Verdict
	var err error
	if c.d.Judge != nil {
		v, err = c.d.Judge(c.ctx, name, in)
	} else {
		v, err = c.d.Gates.Run(c.ctx, name, in)
	}
	if err != nil {
		return gates.Verdict{Gate: name, Result: gates.UNVERIFIABLE, Reasons: []gates.Reason{{Class: "error", Detail: errText(err)}}}
	}
	if v.Gate == "" {
		v.Gate = name
	}
	return v
}

// dispatchFacts gathers what the guard judges of an Agent call that
// would start an execution role: the task its prompt names on an
// ideate-task: line, the plan gate's verdict on it (the plan's check and
// the task's dependencies), the task's contract and the standards. It
// returns the dispatch to write down when the guard approves it.
func (c *call) dispatchFacts(st *Stores, role string, in *gates.Input) (*gates.DispatchFacts, *dispatchRec) {
	p := c.p
	d := &gates.DispatchFacts{Role: role}
	task, err := taskOfPrompt(lookup(p.ToolInput, "prompt"))
	if err == nil {
		err = worktree.CheckTaskID(task)
	}
	if err != nil {
		d.TaskErr = apperr.Message(err)
		return d, nil
	}
	d.Task, in.Task = task, task
	d.Isolation = lookup(p.ToolInput, "isolation") != ""
	d.NoToolUse = !idRe().MatchString(p.ToolUseID)
	// The planning→execution gate: no execution agent starts before the
	// current plan's check passed and the task's dependencies passed
	// GREEN (when the composition root registered it).
	if registered(c.d.Gates, gates.PlanGateName) {
		pin := *in
		pin.Guard, pin.Cost = nil, nil
		v, err := c.d.Gates.Run(c.ctx, gates.PlanGateName, pin)
		if err != nil {
			v = gates.Verdict{Gate: gates.PlanGateName, Result: gates.UNVERIFIABLE, Reasons: []gates.Reason{{Class: "error", Detail: errText(err)}}}
		}
		d.Plan = &v
	}
	ct := contractFacts(st, task, d)
	if ct == nil {
		return d, nil
	}
	d.Status, d.Open, d.TaskRole = string(ct.Status), ct.Status == worktree.StatusOpen, ct.Role
	in.Attempt = ct.Attempt
	if !d.Open || d.TaskRole != role {
		return d, nil
	}
	pol, err := c.policy(st, true)
	if err != nil {
		d.PolicyErr = errText(err)
		return d, nil
	}
	d.NoTestGlobs = len(pol.TestGlobs) == 0
	rec := &dispatchRec{ToolUseID: p.ToolUseID, Session: p.SessionID, Task: task, Attempt: ct.Attempt, Role: role,
		Worktree: ct.Path, Policy: pol, Created: c.d.now().UTC().Format(time.RFC3339Nano)}
	if role != gates.RoleRed {
		frozen, err := c.frozen(st, ct, pol.ShimMarker)
		if err != nil {
			d.FrozenErr = errText(err)
			return d, nil
		}
		rec.Frozen = frozen
	}
	// What the worker could change outside its worktree shows at its
	// stop against this.
	if registered(c.d.Gates, gates.EscapeName) {
		before, err := gates.TakeSnapshot(c.ctx, st.Top)
		if err != nil {
			d.SnapshotErr = errText(err)
			return d, nil
		}
		rec.Before = before
	}
	return d, rec
}

// reviewDispatchFacts gathers what the guard judges of an Agent call that
// starts a reviewer: the task (or, for a reviewer of a whole sprint, the
// sprint) its prompt names, and that the task has a contract. It returns
// the dispatch to write down when the guard approves it: the reviewer is
// bound to it as a worker is to its task, so its calls and refusals are
// on that task's account.
func (c *call) reviewDispatchFacts(st *Stores, role string, in *gates.Input) (*gates.DispatchFacts, *dispatchRec) {
	p := c.p
	d := &gates.DispatchFacts{Role: role}
	task, sprint, err := subjectOfPrompt(lookup(p.ToolInput, "prompt"), role)
	if err != nil {
		d.TaskErr = apperr.Message(err)
		return d, nil
	}
	d.Task, d.Sprint, in.Task = task, sprint, task
	d.NoToolUse = !idRe().MatchString(p.ToolUseID)
	if task != "" {
		ct := contractFacts(st, task, d)
		if ct == nil {
			return d, nil
		}
		in.Attempt = ct.Attempt
	}
	return d, &dispatchRec{ToolUseID: p.ToolUseID, Session: p.SessionID, Task: task, Sprint: sprint, Attempt: in.Attempt, Role: role,
		Created: c.d.now().UTC().Format(time.RFC3339Nano)}
}

// contractFacts reads the contract of the task a dispatch names; nil, with
// the fact the guard refuses it for (no contract, or one that cannot be
// read), when there is none to go on.
func contractFacts(st *Stores, task string, d *gates.DispatchFacts) *worktree.Contract {
	ct, err := st.Tasks.Contract(task)
	switch {
	case apperr.Is(err, apperr.NotFound):
		d.NoContract = true
		return nil
	case err != nil:
		d.ContractErr = errText(err)
		return nil
	}
	return ct
}

// approve writes an approved dispatch down for its agent's binding.
func (c *call) approve(st *Stores, rec *dispatchRec) error {
	data, _ := json.Marshal(rec)
	if _, err := createWhole(dispatchPath(st.StateDir, "pending", rec.ToolUseID+".json"), data); err != nil {
		return err
	}
	sweepStale(st.StateDir, c.d.now())
	return nil
}

// frozen lists what the task's verified RED commit changed against the
// task's base, without the shims (files holding the shim marker there),
// which later roles replace. None when no RED commit is known.
func (c *call) frozen(st *Stores, ct *worktree.Contract, shim string) ([]string, error) {
	if st.RedCommit == nil || st.Git == nil {
		return nil, nil
	}
	commit, ok, err := st.RedCommit(c.ctx, ct.Task)
	if err != nil || !ok {
		return nil, err
	}
	red, err := gitstore.ParseHash(commit)
	if err != nil {
		return nil, err
	}
	paths, _, err := st.Git.ChangedPaths(ct.BaseHash(), red, 5000)
	if err != nil {
		return nil, err
	}
	rc, err := st.Git.ReadCommit(red)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range paths {
		if shim != "" {
			e, ok, err := st.Git.Lookup(rc.Tree, strings.Split(p, "/"))
			if err != nil {
				return nil, err
			}
			if ok && !e.IsDir() {
				if b, err := st.Git.ReadBlob(e.Hash); err == nil && bytes.Contains(b, []byte(shim)) {
					continue
				}
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// bind returns the agent's binding, making it on the agent's first call:
// the host's meta file names the Agent call that started it (toolUseId),
// else the first line of its transcript holds the dispatch prompt, whose
// ideate-task: line must match an approved dispatch of the same role not
// taken yet. why says what is missing when there is none.
func (c *call) bind(st *Stores, role string) (*bindingRec, string) {
	p := c.p
	agent := p.AgentID
	if !idRe().MatchString(agent) {
		return nil, "the payload's agent_id is not usable"
	}
	var b bindingRec
	path := dispatchPath(st.StateDir, "agents", agent+".json")
	if ok, err := readJSON(path, &b); err != nil {
		return nil, err.Error()
	} else if ok {
		if b.Role != role {
			return nil, fmt.Sprintf("agent %s was bound as a %s", agent, b.Role)
		}
		return &b, ""
	}
	var cands []dispatchRec
	via := "meta"
	var meta hostMeta
	metaPath := subagentFile(p.TranscriptPath, agent, ".meta.json")
	if ok, _ := readJSON(metaPath, &meta); ok && meta.ToolUseID != "" {
		if meta.AgentType != "" && gates.RoleOf(meta.AgentType) != gates.RoleOf(p.AgentType) {
			return nil, fmt.Sprintf("the host's meta file says agent %s is a %s", agent, meta.AgentType)
		}
		if !idRe().MatchString(meta.ToolUseID) {
			return nil, "the host's meta file names no usable tool use id"
		}
		var d dispatchRec
		if ok, err := readJSON(dispatchPath(st.StateDir, "pending", meta.ToolUseID+".json"), &d); err != nil || !ok {
			return nil, fmt.Sprintf("the Agent call %s that started this agent was not approved as a task dispatch (its prompt needs a line %q naming an open task)", meta.ToolUseID, TaskLine+" S1-01/T1")
		}
		cands = []dispatchRec{d}
	} else {
		via = "transcript"
		prompt, err := firstPrompt(subagentFile(p.TranscriptPath, agent, ".jsonl"))
		if err != nil {
			return nil, "neither the host's meta file nor the agent's transcript can be read, so the dispatch that started this agent is unknown"
		}
		task, sprint, err := subjectOfPrompt(prompt, role)
		if err != nil {
			return nil, err.Error()
		}
		ents, _ := os.ReadDir(dispatchPath(st.StateDir, "pending"))
		for _, e := range ents {
			var d dispatchRec
			if ok, _ := readJSON(dispatchPath(st.StateDir, "pending", e.Name()), &d); ok && d.Task == task && d.Sprint == sprint && d.Role == role &&
				(d.Session == "" || p.SessionID == "" || d.Session == p.SessionID) {
				cands = append(cands, d)
			}
		}
		if len(cands) == 0 {
			return nil, fmt.Sprintf("no approved %s dispatch of %s is waiting for its agent", role, gatesSubject(task, sprint))
		}
		sort.Slice(cands, func(i, j int) bool { return cands[i].Created < cands[j].Created })
	}
	for _, d := range cands {
		if d.Role != role {
			return nil, fmt.Sprintf("the dispatch %s was approved for a %s", d.ToolUseID, d.Role)
		}
		claim := dispatchPath(st.StateDir, "claims", d.ToolUseID)
		exists, err := createWhole(claim, []byte(agent))
		if err != nil {
			return nil, err.Error()
		}
		if exists {
			if owner, _ := os.ReadFile(claim); string(owner) != agent {
				continue // another agent took it
			}
		}
		b = bindingRec{dispatchRec: d, Agent: agent, Via: via, Bound: c.d.now().UTC().Format(time.RFC3339Nano)}
		data, _ := json.Marshal(b)
		if exists, err := createWhole(path, data); err != nil {
			return nil, err.Error()
		} else if exists {
			// A parallel first call of the same agent bound it.
			if ok, err := readJSON(path, &b); err != nil || !ok || b.Role != role {
				return nil, "the agent's binding changed under it"
			}
		}
		return &b, ""
	}
	return nil, "every matching dispatch is bound to another agent already"
}

// agentStop: the gate of an execution agent's role, for its task.
func (c *call) agentStop() (*Decision, error) {
	p := c.p
	role := ExecutionRole(p.AgentType)
	if role == "" {
		return nil, nil
	}
	name := StopGates[role]
	st, err := c.execStores()
	if err != nil {
		return c.stopBlock(nil, "", fmt.Sprintf("git ideate: the %s gate cannot run: %s; no verdict is recorded", name, errText(err))), nil
	}
	b, why := c.bind(st, role)
	if b == nil {
		if p.StopHookActive {
			c.d.warn("an unbound %s (agent %s) stopped again; no %s verdict is recorded", role, p.AgentID, name)
			c.stopped("finished unbound, with no " + string(name) + " verdict")
			return nil, nil
		}
		return &Decision{Block: true, Reason: fmt.Sprintf("git ideate: this %s is bound to no task, so no %s verdict can be recorded: %s", role, name, why)}, nil
	}
	in := gates.Input{Point: gates.AgentStop, Task: b.Task, Attempt: b.Attempt, Role: role, Agent: p.AgentID, Session: p.SessionID, Dir: b.Worktree}
	base := ""
	if ct, err := st.Tasks.Contract(b.Task); err == nil {
		in.Attempt, in.Dir = ct.Attempt, ct.Path
		if h := ct.BaseHash(); !h.IsZero() {
			base = h.String()
		}
	}
	// Answer before the host kills the hook at its timeout: a gate cut
	// short blocks with its reason and stores no verdict.
	ctx, cancel := context.WithTimeout(c.ctx, StopGateBudget)
	defer cancel()
	saved := c.ctx
	c.ctx = ctx
	// First what the worker changed where no gate of its role looks: the
	// other working trees, and links in its own.
	if registered(c.d.Gates, gates.EscapeName) {
		ein := in
		ein.Escape = &gates.EscapeFacts{Before: b.Before, Worktree: in.Dir, Base: base, TestGlobs: b.Policy.TestGlobs, Frozen: b.Frozen,
			Owners: owners(st.StateDir, p.AgentID), Written: writtenBy(st.StateDir), Unlogged: unlogged(st.StateDir)}
		if v := c.judge(gates.EscapeName, ein); !v.Passed() {
			c.ctx = saved
			return c.stopBlock(st, b.Task, "git ideate gate "+v.String()), nil
		}
	}
	v := c.judge(name, in)
	c.ctx = saved
	// The worker's report of this attempt, kept with the task whatever
	// the verdict (a refused stop is captured again at the next one).
	if st.CaptureOutput != nil {
		if _, err := st.CaptureOutput(c.ctx, b.Task); err != nil {
			c.d.warn("the output.md of task %s is not captured: %s", b.Task, errText(err))
		}
	}
	if v.Passed() || v.BackToRed() {
		// A GREEN whose only failure is an unpinned symbol is done: its
		// worker may not strengthen the tests, so a block would only
		// spend its turns to the host's cap. The stored verdict sends
		// the task back to RED.
		how := "finished"
		if !v.Passed() {
			how = "finished with " + v.String() + "; the task goes back to RED at its next attempt"
		}
		os.Remove(dispatchPath(st.StateDir, "blocks", p.AgentID))
		c.stopped(how)
		if _, err := createWhole(dispatchPath(st.StateDir, "stopped", p.AgentID), []byte(b.Task)); err != nil {
			c.d.warn("cannot mark agent %s stopped: %v", p.AgentID, err)
		}
		return nil, nil
	}
	return c.stopBlock(st, b.Task, "git ideate gate "+v.String()), nil
}

// stopped records the outcome of a gated agent whose stop is let through
// (or that the host ends past its block cap).
func (c *call) stopped(how string) {
	if _, err := c.outcome(how); err != nil {
		c.d.warn("the outcome of agent %s is not recorded: %s", c.p.AgentID, errText(err))
	}
}

// stopBlock blocks a stop, counting consecutive blocks per agent: the
// host lets the agent go after the cap whatever we say, and the stored
// verdict is then what the supervisor reads.
func (c *call) stopBlock(st *Stores, task, reason string) *Decision {
	n := 1
	if st != nil && idRe().MatchString(c.p.AgentID) {
		if c.p.StopHookActive {
			n = blockCount(st.StateDir, c.p.AgentID) + 1
		}
		if err := setBlockCount(st.StateDir, c.p.AgentID, n); err != nil {
			c.d.warn("cannot count the blocks of agent %s: %v", c.p.AgentID, err)
		}
	}
	limit := DefaultBlockCap
	if s := c.d.getenv("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP"); s != "" {
		if x, err := strconv.Atoi(s); err == nil && x > 0 {
			limit = x
		}
	}
	// The host honours limit consecutive blocks and ends the agent at the
	// stop after the last of them (CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=3: the
	// agent is ended at its 4th stop).
	suffix := fmt.Sprintf(" (stop %d of %d refused", n, limit)
	switch {
	case n == limit:
		suffix += "; the last block the host honours: at the agent's next stop the host ends it, and the recorded verdict stands"
	case n > limit:
		suffix = fmt.Sprintf(" (stop %d, past the host's cap of %d blocks: the host ends the agent now, and the recorded verdict stands", n, limit)
		c.stopped(fmt.Sprintf("was ended by the host after %d refused stops", limit))
	}
	if task != "" {
		suffix += "; task " + task
	}
	return &Decision{Block: true, Reason: reason + suffix + ")"}
}

// execStores opens the repository for the execution gates.
func (c *call) execStores() (*Stores, error) {
	st, err := c.stores()
	if err != nil {
		return nil, err
	}
	if st.Tasks == nil || st.StateDir == "" {
		return nil, apperr.New(apperr.Internal, "the hook has no task contracts to read")
	}
	return st, nil
}

// executing reports whether a sprint executes: a task contract is open
// (worktree.Start leaves a marker per open task, Close removes it).
func executing(state string) bool {
	f, err := os.Open(filepath.Join(state, worktree.ExecutingDir))
	if err != nil {
		return false
	}
	defer f.Close()
	names, _ := f.Readdirnames(1)
	return len(names) > 0
}

// policy is the guard policy from the standards: fresh (read and cached)
// or from the cache when there is one.
func (c *call) policy(st *Stores, fresh bool) (policy, error) {
	path := filepath.Join(st.StateDir, PolicyFile)
	var pol policy
	if !fresh {
		if ok, err := readJSON(path, &pol); ok && err == nil {
			return pol, nil
		}
	}
	if st.Standards == nil {
		return pol, apperr.New(apperr.Internal, "the hook cannot read the standards")
	}
	s, err := st.Standards(c.ctx)
	if err != nil {
		return pol, err
	}
	pol = policyOf(s)
	if data, err := json.Marshal(pol); err == nil {
		if err := replaceWhole(path, data); err != nil {
			c.d.warn("cannot cache the guard policy: %v", err)
		}
	}
	return pol, nil
}

// policyOf gathers the test globs, shim marker and source extensions of
// every runner.
func policyOf(s *plan.Standards) policy {
	var pol policy
	if s == nil {
		return pol
	}
	seen := map[string]bool{}
	pol.ShimMarker = s.ShimMarker
	for _, r := range s.Runners {
		for _, g := range r.TestGlobs {
			if !seen["g"+g] {
				seen["g"+g] = true
				pol.TestGlobs = append(pol.TestGlobs, g)
			}
		}
		for _, e := range r.Extensions {
			if !seen["e"+e] {
				seen["e"+e] = true
				pol.Extensions = append(pol.Extensions, e)
			}
		}
		if r.ShimMarker != "" && pol.ShimMarker == "" {
			pol.ShimMarker = r.ShimMarker
		}
	}
	if c := s.Cost; c != nil {
		for _, p := range c.Costly {
			pol.Cost.Costly = append(pol.Cost.Costly, p.Text)
		}
		for _, p := range c.Allow {
			pol.Cost.Allow = append(pol.Cost.Allow, p.Text)
		}
		if len(c.Problems) > 0 {
			pol.CostErr = strings.Join(c.Problems, "; ")
		}
	}
	return pol
}

// GateInput translates a payload into what a gate judges: the moment
// (PreToolUse → BeforeTool, Stop and SubagentStop → AgentStop), the agent
// (agent_type as the role, agent_id), the session, the directory the
// repository is looked for from (Dispatcher.RepoDir), and for a tool the
// tool's name, a Bash command, the file_path of Write, Edit and the like,
// and the subagent_type an Agent call would start.
func (d *Dispatcher) GateInput(event string, p *Payload) gates.Input {
	in := gates.Input{
		Role:    p.AgentType,
		Agent:   p.AgentID,
		Session: p.SessionID,
		Dir:     d.RepoDir(p),
	}
	switch event {
	case "PreToolUse":
		in.Point = gates.BeforeTool
		in.Tool = p.ToolName
		in.Command = lookup(p.ToolInput, "command")
		for _, k := range []string{"file_path", "notebook_path"} {
			if f := lookup(p.ToolInput, k); f != "" {
				in.Paths = append(in.Paths, f)
			}
		}
		in.Dispatch = lookup(p.ToolInput, "subagent_type")
	case "Stop", "SubagentStop":
		in.Point = gates.AgentStop
	}
	return in
}

// gatesSubject names what an agent is bound to: "task T" or "sprint N".
func gatesSubject(task string, sprint int) string {
	if task == "" && sprint > 0 {
		return fmt.Sprintf("sprint %d", sprint)
	}
	return "task " + task
}
