package gates

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// PluginName is the plugin whose agents the guard knows: their host agent
// types are "git-ideate:<agent>", or the bare agent name when the agents
// are installed without the plugin.
const PluginName = "git-ideate"

// Reviewer roles: agents that judge and report. They write nothing.
const (
	RoleStructuralReviewer = "structural-reviewer"
	RoleFinalGate          = "final-gate"
	RoleArchivist          = "archivist"
)

// PostPlanner is the playbook's name of the scaffolding pass's agent; it
// works a task started with role scaffolder and is guarded as one.
const PostPlanner = "post-planner"

// IsReviewerRole reports whether role judges without writing
// (structural-reviewer, final-gate, archivist).
func IsReviewerRole(role string) bool {
	return role == RoleStructuralReviewer || role == RoleFinalGate || role == RoleArchivist
}

// RoleOf is the role of a host agent type: an execution or reviewer role
// of the plugin's agents, plugin-qualified or not ("git-ideate:red-worker"
// and "red-worker" are both "red-worker"; the post-planner is a
// scaffolder). Any other agent (another plugin's, a built-in one) and the
// main session have none ("").
func RoleOf(agentType string) string {
	r := strings.TrimSpace(agentType)
	if i := strings.IndexByte(r, ':'); i >= 0 {
		if r[:i] != PluginName {
			return ""
		}
		r = r[i+1:]
	}
	if r == PostPlanner {
		return RoleScaffold
	}
	if IsExecutionRole(r) || IsReviewerRole(r) {
		return r
	}
	return ""
}

// AgentFacts are what the hooks found about a sub-agent of an execution
// or reviewer role: its binding to a task (a reviewer's: or to a sprint)
// and, for an execution role, that task's contract.
type AgentFacts struct {
	Unbound     string // why the agent is bound to no task ("" when it is bound)
	Task        string // the task it is bound to ("" for a reviewer bound to a sprint)
	ContractErr string // why the task's contract cannot be read
	Status      string // the contract's status
	Open        bool   // the contract is open
	TaskRole    string // the role the task is open for
}

// DispatchFacts are what the hooks found about an Agent call that would
// start an execution or reviewer role (Input.Dispatch): the task its
// prompt names and that task's state. Every field is a fact; Guard
// decides. A reviewer's prompt may name a sprint instead (final-gate,
// archivist): then Task is "" and Sprint is set.
type DispatchFacts struct {
	Role      string // the canonical execution or reviewer role to start
	Task      string // the task the prompt names ("" when TaskErr)
	Sprint    int    // the sprint a reviewer's prompt names instead
	TaskErr   string // why the prompt names no usable task
	Isolation bool   // the call asks the host for an isolated worktree
	NoToolUse bool   // the call carries no usable tool_use_id
	// Plan is the planning→execution gate's verdict (the plan's check
	// and the task's dependencies), nil when that gate is not registered.
	Plan        *Verdict
	NoContract  bool   // the task has no contract
	ContractErr string // its contract cannot be read
	Status      string // the contract's status
	Open        bool
	TaskRole    string // the role the task is open for
	PolicyErr   string // the standards cannot be read
	NoTestGlobs bool   // the standards name no test globs
	FrozenErr   string // the files RED froze cannot be read
	SnapshotErr string // the working trees' state cannot be recorded
}

// judgeAgent decides what the binding of an execution role's sub-agent
// decides before any file is looked at: nil when the agent may go on.
func judgeAgent(role string, a *AgentFacts) *guardFail {
	switch {
	case a == nil:
		return &guardFail{class: "no_facts", detail: "the " + role + "'s binding to its task is unknown", unverifiable: true}
	case a.Unbound != "":
		return &guardFail{class: "unbound", detail: "this " + role + " is bound to no task, so every call is refused: " + a.Unbound}
	case a.ContractErr != "":
		return &guardFail{class: "contract_unreadable", detail: "the contract of task " + a.Task + " cannot be read: " + a.ContractErr, unverifiable: true}
	case !a.Open:
		return &guardFail{class: "task_closed", detail: fmt.Sprintf("task %s is %s; its %s has nothing more to do", a.Task, a.Status, role)}
	case a.TaskRole != role:
		return &guardFail{class: "role_mismatch", detail: fmt.Sprintf("task %s is open for a %s now, not a %s", a.Task, orNone(a.TaskRole), role)}
	}
	return nil
}

// judgeReviewer decides what the binding of a reviewer sub-agent decides:
// a reviewer bound to no task or sprint is refused every call, so what it
// reads and runs is always on a task's or sprint's account.
func judgeReviewer(role string, a *AgentFacts) *guardFail {
	switch {
	case a == nil:
		return &guardFail{class: "no_facts", detail: "the " + role + "'s binding to what it reviews is unknown", unverifiable: true}
	case a.Unbound != "":
		return &guardFail{class: "unbound", detail: "this " + role + " is bound to no task or sprint, so every call is refused: " + a.Unbound}
	}
	return nil
}

// judgeDispatch decides an Agent call that starts an execution role, or
// a reviewer role (which needs only what it reviews: a task with a
// contract, or a sprint).
func judgeDispatch(d *DispatchFacts) Verdict {
	role := d.Role
	fail := func(class, detail string) Verdict {
		return verdictOf(guardFail{class: class, detail: detail})
	}
	switch {
	case d.TaskErr != "":
		return fail("dispatch_no_task", "a "+role+" dispatch must name its task: "+d.TaskErr)
	case d.Isolation:
		return fail("dispatch_isolation", "a "+role+" works in its task's worktree, which git ideate made; dispatch it without isolation")
	case d.NoToolUse:
		return fail("dispatch_unbindable", "the Agent call carries no usable tool_use_id, so its agent could not be bound to "+subjectOf(d.Task, d.Sprint))
	case d.NoContract && IsReviewerRole(role):
		return fail("no_contract", fmt.Sprintf("task %s has no contract, so a %s has nothing of it to review", d.Task, role))
	case d.NoContract:
		return fail("no_contract", fmt.Sprintf("task %s has no contract; start it first (git ideate task start --task %s --role %s)", d.Task, d.Task, role))
	case d.ContractErr != "":
		return verdictOf(guardFail{class: "contract_unreadable", detail: "the contract of task " + d.Task + " cannot be read: " + d.ContractErr, unverifiable: true})
	case IsReviewerRole(role):
		return Verdict{Result: PASS}
	case d.Plan != nil && !d.Plan.Passed():
		v := *d.Plan
		v.Gate = GuardName
		return v
	case !d.Open:
		return fail("task_closed", fmt.Sprintf("task %s is %s, not open; start it again for the %s", d.Task, d.Status, role))
	case d.TaskRole != role:
		return fail("role_mismatch", fmt.Sprintf("task %s is open for a %s, not a %s; dispatch %s:%s or restart the task with --role %s", d.Task, orNone(d.TaskRole), role, PluginName, orNone(d.TaskRole), role))
	case d.PolicyErr != "":
		return verdictOf(guardFail{class: "standards_unreadable", detail: "the standards cannot be read, so a " + role + " could not be guarded: " + d.PolicyErr, unverifiable: true})
	case d.NoTestGlobs:
		return verdictOf(guardFail{class: "no_test_globs", detail: "standards.md names no test globs (## Test runners), so a " + role + " could not be guarded", unverifiable: true})
	case d.FrozenErr != "":
		return verdictOf(guardFail{class: "frozen_unreadable", detail: "the files RED froze for task " + d.Task + " cannot be read: " + d.FrozenErr, unverifiable: true})
	case d.SnapshotErr != "":
		return verdictOf(guardFail{class: "snapshot_unreadable", detail: "the working trees' state cannot be recorded, so what the " + role + " changes outside its worktree could not be checked: " + d.SnapshotErr, unverifiable: true})
	}
	return Verdict{Result: PASS}
}

// subjectOf names what an agent is bound to: a task, or a reviewer's
// sprint.
func subjectOf(task string, sprint int) string {
	if task == "" && sprint > 0 {
		return fmt.Sprintf("sprint %d", sprint)
	}
	return "task " + task
}

func orNone(s string) string {
	if s == "" {
		return "(no role)"
	}
	return s
}

// CommandDigest names a command without its text (which can hold
// secrets): "sha256:" and the first 16 hex digits of its hash, for the
// execution log.
func CommandDigest(cmd string) string {
	if cmd == "" {
		return ""
	}
	h := sha256.Sum256([]byte(cmd))
	return "sha256:" + hex.EncodeToString(h[:8])
}

// judgeReadOnly checks one write target of a read-only sub-agent: a
// reviewer writes nothing anywhere; another sub-agent bound to no task
// writes nothing inside the repository's main working tree (which holds
// the task worktrees and the git directory) while a sprint executes.
func (f *GuardFacts) judgeReadOnly(role string, t writeTarget) *guardFail {
	if strings.ContainsAny(t.path, "\x00") {
		return &guardFail{class: "unknown_target", detail: "a file path holds a NUL byte", unverifiable: true}
	}
	abs := resolve(f.Cwd, t.path)
	if abs == "" {
		return &guardFail{class: "unknown_target", detail: "cannot resolve " + t.path + " (no working directory)", path: t.path, unverifiable: true}
	}
	if IsReviewerRole(role) {
		return &guardFail{class: "read_only", detail: "a " + role + " judges and writes nothing; put your findings in your final message", path: abs}
	}
	top := resolve("", f.Top)
	if top == "" {
		return &guardFail{class: "unknown_target", detail: "the repository's working tree is unknown, so a write cannot be placed", path: abs, unverifiable: true}
	}
	if rel, ok := within(top, abs); ok {
		return &guardFail{class: "sprint_read_only", detail: "a sprint is executing: a sub-agent bound to no task writes nothing in the repository; dispatch the task's worker, or write outside it", path: rel}
	}
	return nil
}

// CallDetail describes a judged tool call for the execution log without
// its command text: the agent's role (or "main session", or "sub-agent"),
// its id, the tool, the role an Agent call would start, the digest of a
// Bash command and the paths a file tool names.
func CallDetail(in Input) string {
	var b strings.Builder
	switch {
	case in.Role != "":
		b.WriteString("role " + in.Role)
	case in.Agent != "":
		b.WriteString("sub-agent")
	default:
		b.WriteString("main session")
	}
	if in.Agent != "" {
		b.WriteString(" (agent " + in.Agent + ")")
	}
	if in.Tool != "" {
		b.WriteString("; tool " + in.Tool)
	}
	if in.Dispatch != "" {
		b.WriteString("; dispatch " + in.Dispatch)
	}
	if in.Command != "" {
		b.WriteString("; command " + CommandDigest(in.Command))
	}
	for _, p := range in.Paths {
		b.WriteString("; path " + p)
	}
	return b.String()
}

// RedactCommand takes command text out of a reason's detail: the whole
// command, and every `quoted` part of the detail (the gates quote the
// commands they name, this call's or an earlier one's), become their
// digests (CommandDigest).
func RedactCommand(detail, cmd string) string {
	if cmd = strings.TrimSpace(cmd); cmd != "" {
		detail = strings.ReplaceAll(detail, cmd, CommandDigest(cmd))
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(detail, '`')
		if i < 0 {
			break
		}
		j := strings.IndexByte(detail[i+1:], '`')
		if j < 0 {
			break
		}
		q := detail[i+1 : i+1+j]
		b.WriteString(detail[:i])
		if q != "" {
			b.WriteString("`" + CommandDigest(q) + "`")
		} else {
			b.WriteString("`" + q + "`")
		}
		detail = detail[i+2+j:]
	}
	b.WriteString(detail)
	return b.String()
}
