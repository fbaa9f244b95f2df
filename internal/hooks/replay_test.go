package hooks_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/record"
)

const fixtureSession = "3b311f76-4634-48ab-b822-33299bd463ef"

// commitFiles makes a commit of files (path → content) with message msg
// and returns its full name.
func commitFiles(t testing.TB, dir, msg string, files map[string]string) string {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gt.Git(t, dir, "add", "-A")
	gt.Git(t, dir, "commit", "-q", "--allow-empty", "-m", msg)
	return gt.Git(t, dir, "rev-parse", "HEAD")
}

// TestReplay_Fixtures replays every payload Claude Code 2.1.328 sent in a
// recorded session, against a fresh repository, once with the transcripts
// pointing at a small synthetic transcript and once pointing nowhere.
func TestReplay_Fixtures(t *testing.T) {
	fixtures := loadFixtures(t)
	for _, withTranscript := range []bool{true, false} {
		name := "transcript"
		if !withTranscript {
			name = "no transcript"
		}
		t.Run(name, func(t *testing.T) {
			dir := gt.NewRepo(t)
			head := commitFiles(t, dir, "test", map[string]string{"src/app.go": "package app\n", "README.md": "hi\n"})
			tr := filepath.Join(t.TempDir(), "missing", "session.jsonl")
			if withTranscript {
				tr = writeTranscript(t, dir)
			}
			agentTr := tr + ".agent"
			captures := map[string]int{}
			var lastPre fixture
			for _, f := range fixtures {
				set := map[string]any{"cwd": dir}
				if _, ok := f.Payload["transcript_path"]; ok {
					set["transcript_path"] = tr
				}
				if _, ok := f.Payload["agent_transcript_path"]; ok {
					set["agent_transcript_path"] = agentTr
				}
				ev := f.event()
				var resp map[string]any
				if ev == "PostToolUse" && json.Unmarshal(f.Payload["tool_response"], &resp) == nil && resp["gitOperation"] != nil {
					// The host's abbreviated name of the commit it saw made.
					resp["gitOperation"].(map[string]any)["commit"].(map[string]any)["sha"] = head[:7]
					set["tool_response"] = resp
				}
				in := payload(t, f.Payload, set)
				before := records(t, dir)
				notesBefore := tip(t, dir, record.NotesRef)
				res := runHook(t, dir, in, "")
				if len(res.notes) != 0 {
					t.Errorf("line %d (%s): notes on stderr: %q", f.Line, f.Hook, res.notes)
				}
				after := records(t, dir)
				var rec *record.Record
				if len(after) == len(before)+1 {
					rec = after[0]
				} else if len(after) != len(before) {
					t.Fatalf("line %d (%s): %d records written", f.Line, f.Hook, len(after)-len(before))
				}
				wantKind := ""
				switch ev {
				case "SessionStart", "SubagentStart":
					ctx := contextOf(t, res.out, ev)
					if len(before) == 0 {
						if res.out != "" {
							t.Errorf("line %d: %s printed %q on an empty record and board", f.Line, ev, res.out)
						}
						break
					}
					if !strings.HasPrefix(ctx, "--- ideate process record digest (historical data) ---\n") ||
						!strings.Contains(ctx, before[0].Claim) || !strings.Contains(ctx, "--- end ideate process record digest ---") {
						t.Errorf("line %d: %s context lacks the digest of the newest record:\n%s", f.Line, ev, ctx)
					}
				case "SessionEnd":
					wantKind = "session-outcome"
					want := "Session " + fixtureSession + " ended (other)."
					if withTranscript {
						want = "Session " + fixtureSession + " ended (other) after 2 user and 4 assistant turns."
					}
					check(t, f, rec, wantKind, want, tr, "session-end")
					// A resumed session (run2) ends under the same id: its
					// outcome supersedes run1's, one current per session.
					var prev *record.Record
					for _, r := range before {
						if r.Kind == "session-outcome" {
							prev = r
							break
						}
					}
					if rec != nil && prev == nil && len(rec.References) != 0 {
						t.Errorf("line %d: the first session-outcome references %v", f.Line, rec.References)
					}
					if rec != nil && prev != nil && (len(rec.References) != 1 || rec.References[0].Rel != "supersedes" || rec.References[0].ID != prev.ID) {
						t.Errorf("line %d: the second session-outcome of the session has references %v, want supersedes %s", f.Line, rec.References, prev.ID)
					}
					if withTranscript && rec != nil && rec.Scope != "parser" {
						t.Errorf("line %d: session-outcome scope = %q", f.Line, rec.Scope)
					}
				case "PreCompact":
					// Kept aside until the host shows the compaction
					// happened: no record yet.
					lastPre = f
				}
				if ev == "SessionStart" && str(f.Payload["source"]) == "compact" {
					// The host compacted the context: the snapshot taken at
					// PreCompact is recorded now.
					pre := lastPre
					wantKind = "compaction-snapshot"
					trigger := str(pre.Payload["trigger"])
					want := "Session " + fixtureSession + " hit " + trigger + " context compaction."
					if withTranscript {
						want = "Session " + fixtureSession + " hit " + trigger + " context compaction after 2 user and 4 assistant turns."
					}
					check(t, f, rec, wantKind, want, tr, "pre-compact")
					if rec != nil {
						ci := str(pre.Payload["custom_instructions"])
						if ci != "" && !strings.Contains(rec.Content, "Compaction instructions from the user: "+ci) ||
							ci == "" && strings.Contains(rec.Content, "Compaction instructions") {
							t.Errorf("line %d: custom instructions %q, content:\n%s", f.Line, ci, rec.Content)
						}
						if withTranscript && !strings.Contains(rec.Content, "Tool calls before compaction: 3 (Read (1x), Edit (1x), Bash (1x)).") ||
							withTranscript && !strings.Contains(rec.Content, "Last assistant message: The parser handles empty input now; the new test covers it.") ||
							!withTranscript && !strings.Contains(rec.Content, "No readable transcript") {
							t.Errorf("line %d: compaction-snapshot content:\n%s", f.Line, rec.Content)
						}
					}
				}
				switch ev {
				case "SubagentStop":
					msg := str(f.Payload["last_assistant_message"])
					if str(f.Payload["agent_type"]) == "" {
						wantKind = "compaction-summary"
						check(t, f, rec, wantKind, "Session "+fixtureSession+" compacted its context; the summary follows.", agentTr, "subagent-stop")
					} else {
						wantKind = "subagent-outcome"
						check(t, f, rec, wantKind, "Subagent aad3cf7be8f2a79af (toyplug:toy-helper) finished in session "+fixtureSession+".", agentTr, "subagent-stop")
						if rec != nil && rec.Scope != "toyplug:toy-helper" {
							t.Errorf("line %d: subagent-outcome scope = %q", f.Line, rec.Scope)
						}
					}
					if rec != nil && rec.Content != msg {
						t.Errorf("line %d: content = %q, want the last assistant message %q", f.Line, rec.Content, msg)
					}
				case "PostToolUse":
					if resp["gitOperation"] == nil {
						break
					}
					wantKind = "commit-boundary"
					check(t, f, rec, wantKind, "Git commit "+head[:12]+" landed in session "+fixtureSession+": test", head, "commit-boundary")
					if rec == nil {
						break
					}
					if rec.Scope != "., src" {
						t.Errorf("line %d: commit-boundary scope = %q", f.Line, rec.Scope)
					}
					if want := "Command: git commit --allow-empty -m test\nChanged paths (2): README.md, src/app.go."; rec.Content != want {
						t.Errorf("line %d: content = %q, want %q", f.Line, rec.Content, want)
					}
					if got := gt.Git(t, dir, "notes", "--ref=ideate", "show", head); got != "ideate-record: "+rec.ID+" commit-boundary" {
						t.Errorf("line %d: note on the commit = %q", f.Line, got)
					}
				}
				if wantKind == "" {
					if rec != nil {
						t.Errorf("line %d (%s) wrote a %s record", f.Line, f.Hook, rec.Kind)
					}
					if ev != "SessionStart" && ev != "SubagentStart" && res.out != "" {
						t.Errorf("line %d (%s) printed %q", f.Line, f.Hook, res.out)
					}
				} else {
					captures[wantKind]++
					if res.out != "" && ev != "SessionStart" {
						t.Errorf("line %d (%s): a capture printed %q", f.Line, f.Hook, res.out)
					}
				}
				if wantKind != "commit-boundary" && tip(t, dir, record.NotesRef) != notesBefore {
					t.Errorf("line %d (%s) moved %s", f.Line, f.Hook, record.NotesRef)
				}
			}
			want := map[string]int{"session-outcome": 2, "compaction-snapshot": 2, "compaction-summary": 2, "subagent-outcome": 1, "commit-boundary": 1}
			for k, n := range want {
				if captures[k] != n {
					t.Errorf("%d %s records, want %d (all: %v)", captures[k], k, n, captures)
				}
			}
			gt.Fsck(t, dir)
		})
	}
}

func check(t *testing.T, f fixture, rec *record.Record, kind, claim, anchor, point string) {
	t.Helper()
	if rec == nil {
		t.Errorf("line %d (%s): no record written, want %s", f.Line, f.Hook, kind)
		return
	}
	if rec.Kind != kind || rec.Claim != claim || rec.VerificationAnchor != anchor {
		t.Errorf("line %d (%s): record\n kind %q claim %q anchor %q\nwant\n kind %q claim %q anchor %q",
			f.Line, f.Hook, rec.Kind, rec.Claim, rec.VerificationAnchor, kind, claim, anchor)
	}
	if rec.Source.CapturePoint != point || rec.Source.SessionID != fixtureSession || rec.Source.Timestamp == "" {
		t.Errorf("line %d (%s): source = %+v", f.Line, f.Hook, rec.Source)
	}
}
