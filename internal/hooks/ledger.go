package hooks

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/gates"
	"github.com/ideate/git-ideate/internal/osproc"
)

// The ledger of logged writes, under DispatchDir, lets the check after
// the fact (gates.Escape) tell a worker's escape from what the main
// session and the other tasks' own agents changed meanwhile:
//
//	dispatch/writes/<digest of the path>.json  the last logged write to a file: its actor and what it left
//	dispatch/calls/<tool_use_id>.json          a Bash call's caller and working tree, written by its
//	                                           PreToolUse: its change time opens the call's window
//
// A file tool's write is logged at its PostToolUse; a Bash call's
// writes are what changed in the caller's working tree (the main
// checkout, or a bound agent's worktree) between its PreToolUse and its
// PostToolUse: the entries whose change time the file system stamped
// since (gates.ChangedSince), which the PreToolUse does not have to read
// the working tree for. Both are logged only while they could be confused with
// another agent's: while an agent other than the caller is at work. A
// confined Bash call (a bound worker's, run by the confining entry) is
// the exception: the entry already lists the worktree's changes before
// and after the command to hold the role's files, so it logs what the
// command changed itself, when it ends, and the hook notes nothing. An entry
// killed before it logs leaves its call's changes unlogged: another
// agent stopping then is blamed for them, the stricter mistake. A change
// no logged write accounts for is the stopping worker's to answer for.

// writeRec is one entry of the ledger.
type writeRec struct {
	Path  string `json:"path"`
	Actor string `json:"actor"`
	Hash  string `json:"hash"`
}

// callRec is a Bash call's caller and working tree, for its PostToolUse.
type callRec struct {
	Actor string `json:"actor"`
	Dir   string `json:"dir"`
}

// actorOf is the ledger's name of the payload's caller.
func actorOf(p *Payload) string {
	if p.AgentID == "" {
		return gates.MainActor
	}
	return p.AgentID
}

func writeKey(abs string) string {
	h := sha256.Sum256([]byte(abs))
	return hex.EncodeToString(h[:16]) + ".json"
}

// logWrite notes that actor left the entry at abs (gates.EntryPath) as
// it is now.
func logWrite(state, actor, abs string) error {
	if abs == "" {
		return nil
	}
	data, _ := json.Marshal(writeRec{Path: abs, Actor: actor, Hash: gates.ContentHash(abs)})
	return replaceWhole(dispatchPath(state, "writes", writeKey(abs)), data)
}

// LogWrites notes that actor left the paths rel (slash-separated,
// relative to dir) as they are now, while an agent other than actor is at
// work (only the stops of agents at work now can read the entry: one
// dispatched later records the paths as they are then): what a Bash
// call changed, logged at its PostToolUse or, for a confined call, by the
// confining entry itself (confine.Result).
func LogWrites(state, actor, dir string, rel []string) error {
	if len(rel) == 0 || !othersAtWork(state, actor) {
		return nil
	}
	for _, p := range rel {
		if err := logWrite(state, actor, gates.EntryPath(filepath.Join(dir, filepath.FromSlash(p)))); err != nil {
			return err
		}
	}
	return nil
}

// BeginUnlogged marks a confined Bash call of agent in worktree wt as
// running, before its command starts: dispatch/unlogged/<agent>.<pid>
// holds wt until the call's writes are logged, when the caller removes
// it (the path returned). A marker left behind is a call still running
// or one whose entry was killed before it logged: another agent's check
// after the fact says so beside the changes it cannot attribute
// (gates.EscapeFacts.Unlogged), which stay that agent's to answer for.
func BeginUnlogged(state, agent, wt string) (string, error) {
	if !idRe().MatchString(agent) {
		return "", apperr.New(apperr.Schema, "agent id %q is not usable", agent)
	}
	p := dispatchPath(state, "unlogged", agent+"."+strconv.Itoa(os.Getpid()))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", err
	}
	return p, os.WriteFile(p, []byte(wt), 0o644)
}

// unlogged are, per working tree (Resolve'd), the agents with a marked
// confined call (BeginUnlogged): gates.EscapeFacts.Unlogged.
func unlogged(state string) map[string][]string {
	out := map[string][]string{}
	ents, _ := os.ReadDir(dispatchPath(state, "unlogged"))
	for _, e := range ents {
		agent, _, _ := strings.Cut(e.Name(), ".")
		if wt, err := osproc.ReadRegular(dispatchPath(state, "unlogged", e.Name()), 4096); err == nil && len(wt) > 0 {
			k := gates.Resolve("", string(wt))
			if !slices.Contains(out[k], agent) {
				out[k] = append(out[k], agent)
			}
		}
	}
	return out
}

// writtenBy reads the ledger (gates.EscapeFacts.Written).
func writtenBy(state string) func(abs string) (string, string, bool) {
	return func(abs string) (string, string, bool) {
		var w writeRec
		if ok, err := readJSON(dispatchPath(state, "writes", writeKey(abs)), &w); !ok || err != nil || w.Path != abs {
			return "", "", false
		}
		return w.Actor, w.Hash, true
	}
}

// othersAtWork reports whether an agent other than self (the main
// session: "") may be changing a worktree now (atWork). It is asked
// before every Bash call: the first agent at work answers.
func othersAtWork(state, self string) bool {
	found := false
	atWork(state, self, func(*dispatchRec) bool { found = true; return false })
	return found
}

// atWork calls fn with the dispatch of each agent other than self that
// may be changing a worktree now, until fn returns false: an approved
// dispatch with a worktree not yet taken by its agent, or a bound agent
// with a worktree whose stop has not passed its gate. The dispatch
// directory keeps every agent of the last 72 hours, so the claim and stop
// markers are looked at before a record is read.
func atWork(state, self string, fn func(*dispatchRec) bool) {
	pending, _ := os.ReadDir(dispatchPath(state, "pending"))
	for _, e := range pending {
		if id, ok := strings.CutSuffix(e.Name(), ".json"); ok && exists(dispatchPath(state, "claims", id)) {
			continue
		}
		var d dispatchRec
		if ok, _ := readJSON(dispatchPath(state, "pending", e.Name()), &d); ok && d.Worktree != "" && !exists(dispatchPath(state, "claims", d.ToolUseID)) {
			if !fn(&d) {
				return
			}
		}
	}
	agents, _ := os.ReadDir(dispatchPath(state, "agents"))
	for _, e := range agents {
		agent := strings.TrimSuffix(e.Name(), ".json")
		if agent == self || exists(dispatchPath(state, "stopped", agent)) {
			continue
		}
		var b bindingRec
		if ok, _ := readJSON(dispatchPath(state, "agents", e.Name()), &b); ok && b.Worktree != "" {
			if !fn(&b.dispatchRec) {
				return
			}
		}
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// owners are, per task worktree, the agents bound to it (other than
// self): gates.EscapeFacts.Owners.
func owners(state, self string) map[string][]string {
	out := map[string][]string{}
	ents, _ := os.ReadDir(dispatchPath(state, "agents"))
	for _, e := range ents {
		agent := filepath.Base(e.Name())
		agent = agent[:len(agent)-len(filepath.Ext(agent))]
		if agent == self {
			continue
		}
		var b bindingRec
		if ok, _ := readJSON(dispatchPath(state, "agents", e.Name()), &b); ok && b.Worktree != "" {
			wt := gates.Resolve("", b.Worktree)
			out[wt] = append(out[wt], agent)
		}
	}
	return out
}

// beforeBash opens the window of a Bash call of the payload's caller in
// dir, while another agent is at work: the call's file, whose change
// time is now.
func (c *call) beforeBash(state, dir string) {
	p := c.p
	if dir == "" || !idRe().MatchString(p.ToolUseID) || !othersAtWork(state, p.AgentID) {
		return
	}
	data, _ := json.Marshal(callRec{Actor: actorOf(p), Dir: dir})
	if err := replaceWhole(dispatchPath(state, "calls", p.ToolUseID+".json"), data); err != nil {
		c.d.warn("Bash call %s is not noted (%v): what it changes will be blamed on the workers", p.ToolUseID, err)
	}
}

// beforeTrees are the states of working tree dir at the dispatches of the
// agents other than self at work now (atWork): the trees their stops
// compare dir against.
func beforeTrees(state, self, dir string) []string {
	want := gates.Resolve("", dir)
	var trees []string
	atWork(state, self, func(d *dispatchRec) bool {
		for wt, tree := range d.Before {
			if gates.Resolve("", wt) == want {
				trees = append(trees, tree)
			}
		}
		return true
	})
	return trees
}

// logWrites logs what a finished tool call (PostToolUse, or
// PostToolUseFailure) wrote: a file tool's file, while another agent is
// at work; a Bash call's changes to the working tree noted before it.
func (c *call) logWrites() {
	p := c.p
	var state string
	if c.d.StateDir != nil {
		state, _ = c.d.StateDir(c.d.RepoDir(p))
	} else if st, err := c.stores(); err == nil {
		state = st.StateDir
	}
	if state == "" {
		return
	}
	switch {
	case isFileTool(p.ToolName):
		if !othersAtWork(state, p.AgentID) {
			return
		}
		for _, k := range []string{"file_path", "notebook_path"} {
			if f := lookup(p.ToolInput, k); f != "" {
				// The file the tool wrote: through a symlink, its target.
				if err := logWrite(state, actorOf(p), gates.Resolve("", absDir(c.d.RepoDir(p), f))); err != nil {
					c.d.warn("the write of %s is not logged: %v", f, err)
				}
			}
		}
	case p.ToolName == "Bash" && idRe().MatchString(p.ToolUseID):
		path := dispatchPath(state, "calls", p.ToolUseID+".json")
		var r callRec
		if ok, _ := readJSON(path, &r); !ok || r.Actor != actorOf(p) {
			return
		}
		t0, ok := gates.ChangeTime(path)
		if !ok {
			return // removed meanwhile: by a PostToolUse of the same call
		}
		changed, err := gates.ChangedSince(c.ctx, r.Dir, t0, beforeTrees(state, r.Actor, r.Dir))
		if err == nil {
			err = LogWrites(state, r.Actor, r.Dir, changed)
		}
		if err != nil {
			c.d.warn("what Bash call %s changed is not logged (%v): it will be blamed on the workers", p.ToolUseID, err)
			return
		}
		os.Remove(path)
	}
}
