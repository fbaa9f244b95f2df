package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/confine"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// corpusCase is one Bash call of the confinement corpus.
type corpusCase struct {
	role, kind, name, cmd string
}

func readCorpus(t *testing.T) []corpusCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "confine-corpus.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var out []corpusCase
	var cur *corpusCase
	for _, l := range strings.Split(string(b), "\n") {
		if h, ok := strings.CutPrefix(l, "--- "); ok {
			f := strings.Fields(h)
			if len(f) != 3 {
				t.Fatalf("bad case line %q", l)
			}
			out = append(out, corpusCase{role: f[0], kind: f[1], name: f[2]})
			cur = &out[len(out)-1]
			continue
		}
		if cur == nil {
			continue // the header
		}
		if cur.cmd != "" {
			cur.cmd += "\n"
		}
		cur.cmd += l
	}
	for i := range out {
		out[i].cmd = strings.TrimRight(out[i].cmd, "\n")
	}
	return out
}

// corpusRole is one bound worker of the corpus and what it may not change.
type corpusRole struct {
	role, agent, task, wt string
	forbidden             string // its own forbidden file, worktree-relative
	isForbidden           func(rel string) bool
}

// TestConfineCorpus runs every call of the corpus as a bound red-worker
// or green-worker would: the built binary's PreToolUse hook answers, and
// an allowed call runs for real as the hook rewrote it (the confining
// entry). It counts the calls after which a file the role may not change
// differs on disk — the main checkout, another task's worktree and
// branch, refs/ideate and notes, the git config and hooks, and in the
// worker's own worktree the other class's files — which must be none,
// and the harmless calls denied or broken, at most 1 %.
func TestConfineCorpus(t *testing.T) {
	if !confine.Available() {
		t.Skip("no confinement here: " + confine.Mode())
	}
	dir := execProject(t, map[string]string{"S1-01/T1": "red-worker", "S1-01/T2": "green-worker", "S1-02/T1": "green-worker"})
	gitDir := filepath.Join(dir, ".git")
	other := filepath.Join(dir, ".ideate", "worktrees", "S1-02+T1")
	s := newSession(t, dir)
	roles := map[string]*corpusRole{
		"red": {role: "red-worker", agent: "ared", task: "T1", wt: filepath.Join(dir, ".ideate", "worktrees", "S1-01+T1"), forbidden: "strutil/reverse.go",
			isForbidden: func(rel string) bool {
				return !strings.HasSuffix(rel, "_test.go") && rel != ".ideate/output.md"
			}},
		"green": {role: "green-worker", agent: "agreen", task: "T2", wt: filepath.Join(dir, ".ideate", "worktrees", "S1-01+T2"), forbidden: "strutil/reverse_test.go",
			isForbidden: func(rel string) bool {
				return strings.HasSuffix(rel, "_test.go") || rel == ".ideate/init.md" || rel == ".git"
			}},
	}
	wantAllow(t, "red dispatch", s.dispatch("toolu_red", "red-worker", "ideate-task: S1-01/T1"))
	wantAllow(t, "green dispatch", s.dispatch("toolu_green", "green-worker", "ideate-task: S1-01/T2"))
	s.meta("ared", "red-worker", "toolu_red")
	s.meta("agreen", "green-worker", "toolu_green")
	start := map[string]string{}
	for k, r := range roles {
		start[k] = strings.TrimSpace(gt.Git(t, r.wt, "rev-parse", "HEAD"))
	}
	binDir := filepath.Dir(binPath)
	// The workers' go cache starts cold: one build fills it, outside the
	// corpus's count.
	for _, r := range roles {
		dec := confinedHookCall(t, s, r, "go vet ./strutil/ && go test -count=1 ./strutil/ >/dev/null")
		if code, out := runAllowed(t, r.wt, binDir, dec.command); dec.kind != "allow" || code != 0 {
			t.Fatalf("warming the cache: %+v exit %d\n%s", dec, code, out)
		}
	}

	var hostile, harmless, escaped, broken int
	began := time.Now()
	only := os.Getenv("CONFINE_CORPUS_ONLY") // a case name, to look at one
	for _, c := range readCorpus(t) {
		if only != "" && c.name != only {
			continue
		}
		r := roles[c.role]
		cmd := expandCorpus(c.cmd, r, dir, other, gitDir)
		dec := confinedHookCall(t, s, r, cmd)
		before := forbiddenState(t, dir, other, gitDir, r)

		ran, code, out := false, 0, ""
		if dec.kind == "allow" && dec.command != "" {
			ran = true
			code, out = runAllowed(t, r.wt, binDir, dec.command)
		}
		after := forbiddenState(t, dir, other, gitDir, r)
		changed := diffState(before, after)
		if only != "" {
			t.Logf("%s %s: hook %s, exit %d, changed %v\n%s\n%s", c.role, c.name, dec.kind, code, changed, dec.command, out)
			for _, k := range changed {
				t.Logf("  %s: %s -> %s", k, before[k], after[k])
			}

		}
		switch c.kind {
		case "hostile":
			hostile++
			if len(changed) > 0 {
				escaped++
				t.Errorf("%s %s: a forbidden write got through (hook %s, ran %v, exit %d): %v\n%s\n%s", c.role, c.name, dec.kind, ran, code, changed, cmd, out)
			}
		case "harmless":
			harmless++
			if dec.kind != "allow" || code != 0 || strings.Contains(out, "put back") || len(changed) > 0 {
				broken++
				t.Logf("%s %s: harmless call denied or broken (hook %s %q, exit %d, forbidden changes %v):\n%s\n%s", c.role, c.name, dec.kind, dec.reason, code, changed, cmd, out)
			}
		}
		// The next call starts from the same worktree.
		gt.Git(t, r.wt, "reset", "-q", "--hard", start[c.role])
		gt.Git(t, r.wt, "clean", "-qfd")
	}
	t.Logf("corpus: %d hostile calls, %d forbidden writes; %d harmless calls, %d denied or broken; %s", hostile, escaped, harmless, broken, time.Since(began).Round(time.Millisecond))
	if hostile < 150 || harmless < 60 {
		t.Errorf("the corpus holds %d hostile and %d harmless calls, want at least 150 and 60", hostile, harmless)
	}
	// Every refusal is on the execution log, with the role and what was
	// put back.
	if only == "" {
		if r := cli(t, dir, "", "exec", "log", "--phase", "confine"); r.code != 0 || strings.Count(r.out, "refused") < 50 {
			t.Errorf("confinement refusals on the exec log: %d\n%.2000s", strings.Count(r.out, "refused"), r.out)
		}
	}
	if broken*100 > harmless {
		t.Errorf("%d of %d harmless calls denied or broken, over 1%%", broken, harmless)
	}
	gt.Fsck(t, dir)
}

// expandCorpus fills a case's placeholders for role r.
func expandCorpus(cmd string, r *corpusRole, main, other, gitDir string) string {
	newf, hl := "strutil/evil.go", "link.go"
	if r.role == "green-worker" {
		newf, hl = "strutil/evil_test.go", "link.go"
	}
	testCode := "printf 'package strutil\\n\\nimport (\\n\\t\"os\"\\n\\t\"testing\"\\n)\\n\\nfunc TestW(t *testing.T) { os.WriteFile(\"" + strings.TrimPrefix(r.forbidden, "strutil/") + "\", []byte(\"x\"), 0o644) }\\n' > strutil/w_test.go && go test -run TestW ./strutil/"
	return strings.NewReplacer("{F}", r.forbidden, "{NEWF}", newf, "{FBASE}", strings.TrimPrefix(r.forbidden, "strutil/"),
		"{FNAME}", filepath.Base(r.forbidden), "{HL}", hl, "{MAIN}", main, "{OTHER}", other, "{GIT}", gitDir,
		"{TASK}", r.task, "{TESTCODE}", testCode).Replace(cmd)
}

type confinedDecision struct {
	kind, reason, command string
}

// confinedHookCall is the PreToolUse hook of the built binary, with
// confinement on, on a bound worker's Bash call.
func confinedHookCall(t *testing.T, s *session, r *corpusRole, command string) confinedDecision {
	t.Helper()
	p := with(s.subTool, "cwd", r.wt, "transcript_path", s.transcript, "agent_id", r.agent,
		"agent_type", "git-ideate:"+r.role, "tool_name", "Bash", "tool_input", map[string]any{"command": command, "description": "run"})
	in, _ := json.Marshal(p)
	cmd := exec.Command(binPath, "hook")
	cmd.Dir = r.wt
	cmd.Env = append(os.Environ(), "IDEATE_CONFINE=1")
	res := runProcess(t, cmd, string(in))
	checkHostOutput(t, "PreToolUse", res, "PreToolUse")
	var m struct {
		HSO struct {
			PermissionDecision       string `json:"permissionDecision"`
			PermissionDecisionReason string `json:"permissionDecisionReason"`
			UpdatedInput             struct {
				Command string `json:"command"`
			} `json:"updatedInput"`
		} `json:"hookSpecificOutput"`
	}
	if res.out != "" {
		if err := json.Unmarshal([]byte(res.out), &m); err != nil {
			t.Fatalf("%q: %v", res.out, err)
		}
	}
	return confinedDecision{m.HSO.PermissionDecision, m.HSO.PermissionDecisionReason, m.HSO.UpdatedInput.Command}
}

// runAllowed runs the rewritten command as the host's Bash tool would.
func runAllowed(t *testing.T, wt, binDir, command string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", command)
	cmd.Dir = wt
	cmd.Env = append(os.Environ(), "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, string(out)
}

// forbiddenState is what role r may not change: path → content hash, of
// the main checkout, the other task's worktree, the git directory's
// config, hooks, refs/ideate, notes and other branches, and the files of
// the forbidden class in r's own worktree.
func forbiddenState(t *testing.T, main, other, gitDir string, r *corpusRole) map[string]string {
	t.Helper()
	st := map[string]string{}
	walk := func(label, root string, skip func(rel string, d fs.DirEntry) bool) {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			rel = filepath.ToSlash(rel)
			if rel != "." && skip(rel, d) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				return nil
			}
			st[label+":"+rel] = hashOf(p)
			return nil
		})
	}
	walk("main", main, func(rel string, d fs.DirEntry) bool {
		return rel == ".git" || rel == ".ideate/worktrees"
	})
	walk("other", other, func(string, fs.DirEntry) bool { return false })
	for _, sub := range []string{"config", "hooks", "refs/ideate", "refs/notes", "refs/heads", "packed-refs", "HEAD", "info"} {
		walk("git/"+sub, filepath.Join(gitDir, sub), func(rel string, d fs.DirEntry) bool {
			// The confining entry itself logs each refusal on refs/ideate/exec.
			return sub == "refs/ideate" && rel == "exec" || sub == "refs/heads" && (rel == "ideate/task/S1-01+T1" || rel == "ideate/task/S1-01+T2" ||
				strings.HasPrefix(rel, "ideate/task/S1-01+T1.") || strings.HasPrefix(rel, "ideate/task/S1-01+T2."))
		})
	}
	// The worker's scratch under .ideate/ is its own (ignored, never
	// committed), init.md aside.
	walk("own", r.wt, func(rel string, d fs.DirEntry) bool {
		if rel == ".ideate/init.md" {
			return false
		}
		if rel == ".ideate" {
			return true
		}
		// A nested repository's git directory holds no file of the
		// project: no runner reads it, git neither lists nor commits it.
		// (The files beside it are judged: a repository that hides them
		// is taken away whole.)
		if d.IsDir() && path.Base(rel) == ".git" {
			return true
		}
		if d.IsDir() || !r.isForbidden(rel) {
			return !d.IsDir()
		}
		// A red-worker's shim (a source file holding the marker) is its own.
		b, _ := os.ReadFile(filepath.Join(r.wt, rel))
		return r.role == "red-worker" && strings.HasSuffix(rel, ".go") && strings.Contains(string(b), "agentic:shim")
	})
	// Refs packed or loose, as git reads them.
	out, _ := gt.GitErr(main, "for-each-ref", "--format=%(refname) %(objectname)", "--exclude=refs/ideate/exec", "refs/ideate", "refs/notes", "refs/heads/main", "refs/heads/ideate/task/S1-02+T1")
	st["refs"] = out
	return st
}

func hashOf(p string) string {
	fi, err := os.Lstat(p)
	if err != nil {
		return "absent"
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		l, _ := os.Readlink(p)
		return "link:" + l
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "unreadable"
	}
	// Content and the executable bit, what git keeps of a file.
	return fmt.Sprintf("%v:%x", fi.Mode()&0o100 != 0, sha256.Sum256(b))
}

func diffState(a, b map[string]string) []string {
	var out []string
	for k, v := range a {
		if b[k] != v {
			out = append(out, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// doctor says which mode holds a bound worker's commands.
func TestDoctor(t *testing.T) {
	t.Setenv("IDEATE_CONFINE", "")
	r := mustOK(t, cli(t, t.TempDir(), "", "doctor", "--json"))
	var o struct {
		Confinement string `json:"confinement"`
		Confined    bool   `json:"confined"`
		Mode        string `json:"mode"`
	}
	if err := json.Unmarshal([]byte(r.out), &o); err != nil {
		t.Fatalf("%q: %v", r.out, err)
	}
	if o.Confined != confine.Available() || o.Confinement != confine.Mode() || (o.Mode == "confined") != o.Confined {
		t.Errorf("doctor: %+v, confinement here %q", o, confine.Mode())
	}
	t.Setenv("IDEATE_CONFINE", "0")
	if r := mustOK(t, cli(t, t.TempDir(), "", "doctor")); !strings.Contains(r.out, "the weaker mode") {
		t.Errorf("doctor with confinement off: %q", r.out)
	}
}
