package hooks

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/atomicfile"
	"github.com/ideate/git-ideate/internal/gates"
	"github.com/ideate/git-ideate/internal/osproc"
	"github.com/ideate/git-ideate/internal/textfmt"
	"github.com/ideate/git-ideate/internal/worktree"
)

// PluginName is the plugin's name: its agents' types are
// "git-ideate:<agent>".
const PluginName = gates.PluginName

// TaskLine names the task a dispatch of an execution role is for: a line
// of the dispatch prompt "ideate-task: S1-01/T1".
const TaskLine = "ideate-task:"

// SprintLine names the sprint a reviewer that judges a whole sprint
// (final-gate, archivist) is dispatched for, when its prompt names no
// task: a line "ideate-sprint: 1".
const SprintLine = "ideate-sprint:"

// DispatchDir holds the dispatches and bindings, under the clone's state
// directory (.git/ideate):
//
//	dispatch/pending/<tool_use_id>.json  an approved Agent call (task, role, guard policy)
//	dispatch/claims/<tool_use_id>        the agent id that took it (created once)
//	dispatch/agents/<agent_id>.json      the agent's binding: its dispatch
//	dispatch/blocks/<agent_id>           consecutive SubagentStop blocks
//	dispatch/stopped/<agent_id>          the agent's stop passed its gate
//	dispatch/runs-pending/, runs/        the cost gate's remembered runs (costrun.go)
//	dispatch/writes/, calls/             the ledger of logged writes (ledger.go)
//
// Files are created whole (written aside, then linked into place), so a
// concurrent hook sees a file complete or not at all, and a name taken
// once stays taken. Files older than StaleAfter are removed when a new
// dispatch is approved.
const DispatchDir = "dispatch"

// MaxStateFile caps a JSON file the hooks read: their own state and the
// host's agent metadata.
const MaxStateFile = 1 << 20

// PolicyFile caches the guard policy the last dispatch read from the
// standards, under the state directory, for the main session's guard.
const PolicyFile = "guard-policy.json"

// StaleAfter is how long dispatch files are kept.
const StaleAfter = 72 * time.Hour

// ExecutionRole is the execution role of a host agent type, plugin-
// qualified or not ("git-ideate:red-worker" and "red-worker" →
// "red-worker"; the post-planner is a scaffolder), "" for any other agent
// and for the main session.
func ExecutionRole(agentType string) string {
	if r := gates.RoleOf(agentType); gates.IsExecutionRole(r) {
		return r
	}
	return ""
}

// PostPlanner is the playbook's name of the scaffolding pass's agent: the
// plugin's post-planner works a task started with role scaffolder, bound,
// guarded and judged as one.
const PostPlanner = gates.PostPlanner

// policy is what the guard needs from the standards.
type policy struct {
	TestGlobs  []string `json:"test_globs"`
	ShimMarker string   `json:"shim_marker"`
	Extensions []string `json:"extensions,omitempty"`
	// The cost gate's rules from the standards (gates.CostRules), and
	// why they cannot be used when they cannot.
	Cost    gates.CostRules `json:"cost,omitempty"`
	CostErr string          `json:"cost_err,omitempty"`
}

// dispatchRec is an approved Agent call of an execution role.
type dispatchRec struct {
	ToolUseID string `json:"tool_use_id"`
	Session   string `json:"session,omitempty"`
	Task      string `json:"task"`
	// Sprint is what a reviewer dispatched for a whole sprint reviews
	// (Task is then "").
	Sprint   int    `json:"sprint,omitempty"`
	Attempt  int    `json:"attempt"`
	Role     string `json:"role"`
	Worktree string `json:"worktree"`
	Policy   policy `json:"policy"`
	// Frozen are the files the task's verified RED commit changed (shims
	// aside), for a green-worker or scaffolder.
	Frozen []string `json:"frozen,omitempty"`
	// Before is every working tree's state at the dispatch
	// (gates.TakeSnapshot), which the stop gate compares.
	Before  map[string]string `json:"before,omitempty"`
	Created string            `json:"created"`
}

// bindingRec ties an agent to the dispatch that started it.
type bindingRec struct {
	dispatchRec
	Agent string `json:"agent"`
	Via   string `json:"via"` // "meta" (the host's meta file) or "transcript" (the prompt's ideate-task line)
	Bound string `json:"bound"`
}

var idRe = textfmt.BoundedRegexp(`^[A-Za-z0-9_-]+$`, 128)

// taskOfPrompt reads the task a prompt names on its ideate-task: line.
// None, or two different ones, is an error saying so.
func taskOfPrompt(prompt string) (string, error) {
	task := ""
	for _, l := range strings.Split(prompt, "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, TaskLine) {
			continue
		}
		t := strings.TrimSpace(strings.TrimPrefix(l, TaskLine))
		t = strings.Trim(t, "`*")
		if task != "" && t != task {
			return "", fmt.Errorf("the prompt names two tasks (%s, %s) on %s lines", task, t, TaskLine)
		}
		task = t
	}
	if task == "" {
		return "", fmt.Errorf("the prompt names no task: add a line %q", TaskLine+" S1-01/T1")
	}
	return task, nil
}

// sprintOfPrompt reads the sprint a prompt names on its ideate-sprint:
// line: 0 when none, an error for two different ones or a number that is
// not a sprint's.
func sprintOfPrompt(prompt string) (int, error) {
	sprint := 0
	for _, l := range strings.Split(prompt, "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, SprintLine) {
			continue
		}
		v := strings.Trim(strings.TrimSpace(strings.TrimPrefix(l, SprintLine)), "`*")
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 9999 {
			return 0, fmt.Errorf("the %s line names %q, not a sprint number", SprintLine, v)
		}
		if sprint != 0 && n != sprint {
			return 0, fmt.Errorf("the prompt names two sprints (%d, %d) on %s lines", sprint, n, SprintLine)
		}
		sprint = n
	}
	return sprint, nil
}

// subjectOfPrompt reads what a dispatch of role is for: the task on its
// ideate-task: line; for a reviewer of a whole sprint (final-gate,
// archivist) a sprint on an ideate-sprint: line will do instead.
func subjectOfPrompt(prompt, role string) (task string, sprint int, err error) {
	task, err = taskOfPrompt(prompt)
	if err == nil {
		err = worktree.CheckTaskID(task)
		return task, 0, err
	}
	if role != gates.RoleFinalGate && role != gates.RoleArchivist {
		return "", 0, err
	}
	sprint, serr := sprintOfPrompt(prompt)
	switch {
	case serr != nil:
		return "", 0, serr
	case sprint == 0:
		return "", 0, fmt.Errorf("the prompt names no task or sprint: add a line %q or %q", TaskLine+" S1-01/T1", SprintLine+" 1")
	}
	return "", sprint, nil
}

func readJSON(path string, v any) (bool, error) {
	b, err := osproc.ReadRegular(path, MaxStateFile)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("%s does not parse: %v", path, err)
	}
	return true, nil
}

func dispatchPath(state string, parts ...string) string {
	return filepath.Join(append([]string{state, DispatchDir}, parts...)...)
}

// sweepStale removes dispatch files older than StaleAfter.
func sweepStale(state string, now time.Time) {
	for _, sub := range []string{"pending", "claims", "agents", "blocks", "stopped", "runs-pending", "runs", "writes", "calls", "unlogged"} {
		dir := dispatchPath(state, sub)
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if fi, err := e.Info(); err == nil && now.Sub(fi.ModTime()) > StaleAfter {
				os.Remove(filepath.Join(dir, e.Name()))
			}
		}
	}
}

// hostMeta is the part of the host's subagent meta file the binding reads
// (<transcript without .jsonl>/subagents/agent-<id>.meta.json).
type hostMeta struct {
	AgentType string `json:"agentType"`
	ToolUseID string `json:"toolUseId"`
}

// subagentFile is the host's file of agent id next to the session
// transcript: ".meta.json" or ".jsonl".
func subagentFile(transcript, agent, ext string) string {
	if transcript == "" || !strings.HasSuffix(transcript, ".jsonl") {
		return ""
	}
	return filepath.Join(strings.TrimSuffix(transcript, ".jsonl"), "subagents", "agent-"+agent+ext)
}

// firstPrompt reads the prompt from the first line of an agent's
// transcript (message.content, a string or text blocks).
func firstPrompt(path string) (string, error) {
	f, _, err := osproc.OpenRegular(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	line, err := r.ReadSlice('\n')
	if err != nil && len(line) == 0 {
		return "", err
	}
	if len(line) >= 64<<10 && line[len(line)-1] != '\n' {
		return "", fmt.Errorf("the first line of %s is longer than 64 KiB", path)
	}
	var entry struct {
		Message struct {
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	}
	if err := json.Unmarshal(line, &entry); err != nil {
		return "", fmt.Errorf("the first line of %s does not parse", path)
	}
	var s string
	if json.Unmarshal(entry.Message.Content, &s) == nil {
		return s, nil
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(entry.Message.Content, &blocks) == nil {
		var b strings.Builder
		for _, x := range blocks {
			if x.Type == "text" {
				b.WriteString(x.Text + "\n")
			}
		}
		return b.String(), nil
	}
	return "", fmt.Errorf("the first line of %s holds no prompt", path)
}

// blockCount reads and sets an agent's count of consecutive blocks.
func blockCount(state, agent string) int {
	b, err := os.ReadFile(dispatchPath(state, "blocks", agent))
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

func setBlockCount(state, agent string, n int) error {
	return replaceWhole(dispatchPath(state, "blocks", agent), []byte(strconv.Itoa(n)+"\n"))
}

// createWhole writes data to path only if nothing is there (one writer
// wins); replaceWhole replaces it whole. Neither is read half-written.
func createWhole(path string, data []byte) (exists bool, err error) {
	return atomicfile.Create(path, data)
}

func replaceWhole(path string, data []byte) error {
	return atomicfile.Replace(path, data, atomicfile.Options{})
}

// Binding is what an agent's binding says about its task: what the
// confining entry holds its commands to.
type Binding struct {
	Task, Role, Worktree string
	TestGlobs            []string
	ShimMarker           string
	Extensions           []string // the source extensions (a shim is source)
	Frozen               []string
}

// ReadBinding reads the binding of agent in the state directory; an
// agent that is not bound is NotFound.
func ReadBinding(state, agent string) (*Binding, error) {
	if !idRe().MatchString(agent) {
		return nil, apperr.New(apperr.Schema, "agent id %q is not usable", agent)
	}
	var b bindingRec
	ok, err := readJSON(dispatchPath(state, "agents", agent+".json"), &b)
	if err != nil {
		return nil, apperr.Wrap(apperr.Internal, err, "the binding of agent %s cannot be read", agent)
	}
	if !ok {
		return nil, apperr.New(apperr.NotFound, "agent %s is bound to no task", agent)
	}
	return &Binding{Task: b.Task, Role: b.Role, Worktree: b.Worktree, TestGlobs: b.Policy.TestGlobs, ShimMarker: b.Policy.ShimMarker,
		Extensions: b.Policy.Extensions, Frozen: b.Frozen}, nil
}
