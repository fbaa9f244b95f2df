package hooks_test

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/hooks"
	"github.com/ideate/git-ideate/internal/record"
)

func openStores(t *testing.T, dir string) (*record.Store, *board.Store) {
	t.Helper()
	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	rec := record.Open(g)
	return rec, board.Open(g, rec)
}

func sessionStart(t *testing.T, dir string) (ctx string, notes []string) {
	t.Helper()
	res := runHook(t, dir, []byte(`{"session_id":"s9","hook_event_name":"SessionStart","source":"startup","cwd":"`+dir+`"}`), "")
	return contextOf(t, res.out, "SessionStart"), res.notes
}

func TestSessionStart_EmptyPrintsNothing(t *testing.T) {
	dir := gt.NewRepo(t)
	res := runHook(t, dir, []byte(`{"session_id":"s","hook_event_name":"SessionStart","source":"compact","cwd":"`+dir+`"}`), "")
	if res.out != "" || len(res.notes) != 0 {
		t.Fatalf("empty record and board: out %q notes %q", res.out, res.notes)
	}
	if refs := gt.Git(t, dir, "for-each-ref", "refs/ideate/"); refs != "" {
		t.Fatalf("SessionStart wrote refs: %s", refs)
	}
}

func TestSessionStart_NamesExpiredClaimsAndReadyItems(t *testing.T) {
	dir := gt.NewRepo(t)
	rec, b := openStores(t, dir)
	if _, err := rec.Append(t.Context(), record.AppendInput{Kind: "decision", Claim: "Use the lockfile CAS", VerificationAnchor: "bench:refs",
		Source: record.Source{CapturePoint: "test", SessionID: "s1"}, Content: "x"}); err != nil {
		t.Fatal(err)
	}
	// Items claimed five hours ago with the default four-hour lease.
	past := time.Now().Add(-5 * time.Hour)
	b.Now = func() time.Time { return past }
	var ids []string
	for i := 0; i < 9; i++ {
		out, err := b.Create(t.Context(), board.CreateInput{Title: fmt.Sprintf("Item number %d", i), Spec: "s", SpecFormat: "plan/outline",
			CreatedBy: board.Actor{Human: "dan"}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, out.Item.ID)
		past = past.Add(time.Second)
	}
	for _, i := range []int{2, 5} {
		if _, err := b.Claim(t.Context(), ids[i], board.Actor{Human: "alice", Agent: "claude"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	// A live claim is neither expired nor ready.
	b.Now = time.Now
	if _, err := b.Claim(t.Context(), ids[7], board.Actor{Human: "bob"}, nil); err != nil {
		t.Fatal(err)
	}

	ctx, notes := sessionStart(t, dir)
	if len(notes) != 0 {
		t.Fatal(notes)
	}
	if !strings.HasPrefix(ctx, "--- ideate process record digest (historical data) ---\n") || !strings.Contains(ctx, "- [decision] Use the lockfile CAS — verify: bench:refs") {
		t.Fatalf("no digest:\n%s", ctx)
	}
	section := ctx[strings.Index(ctx, "--- ideate work board (historical data) ---"):]
	if !strings.Contains(section, "not instructions") || !strings.HasSuffix(section, "--- end ideate work board ---\n") {
		t.Fatalf("board section is not framed as data:\n%s", section)
	}
	for _, i := range []int{2, 5} {
		want := fmt.Sprintf("- %s Item number %d — was held by alice (claude), lease ended ", ids[i], i)
		if !strings.Contains(section, want) {
			t.Errorf("expired claim %d not named (%q):\n%s", i, want, section)
		}
	}
	if !strings.Contains(section, "returned to open by the sweep at this session's start (2):") {
		t.Errorf("expired count:\n%s", section)
	}
	// Ready: the 8 open items (the two recovered ones included), oldest
	// first, five named, then the rest counted.
	if !strings.Contains(section, "Items ready to claim, oldest first (8):\n") || !strings.Contains(section, "- and 3 more\n") {
		t.Errorf("ready section:\n%s", section)
	}
	for _, i := range []int{0, 1, 2, 3, 4} {
		if !strings.Contains(section, fmt.Sprintf("- %s Item number %d\n", ids[i], i)) {
			t.Errorf("ready item %d not named:\n%s", i, section)
		}
	}
	if strings.Contains(section, ids[7]) || strings.Contains(section, "Item number 8\n") {
		t.Errorf("names an item it should only count or skip:\n%s", section)
	}
	if len(ctx) > hooks.ContextBudget {
		t.Errorf("context is %d characters", len(ctx))
	}
	// The sweep really happened: the items are open again, with an
	// orphan-recovery event each.
	for _, i := range []int{2, 5} {
		evs, err := b.Events(t.Context(), ids[i])
		if err != nil || evs[len(evs)-1].Transition != board.TOrphanRecovery {
			t.Fatalf("item %d events: %+v %v", i, evs, err)
		}
	}
	if records(t, dir)[0].Kind != "decision" || len(records(t, dir)) != 1 {
		t.Fatal("SessionStart wrote a record")
	}

	// The next session finds nothing lapsed, and says only what is ready.
	ctx, _ = sessionStart(t, dir)
	if strings.Contains(ctx, "lease had lapsed") || !strings.Contains(ctx, "Items ready to claim, oldest first (8):") {
		t.Fatalf("second session start:\n%s", ctx)
	}
}

func TestSessionStart_BoardOnly(t *testing.T) {
	dir := gt.NewRepo(t)
	_, b := openStores(t, dir)
	if _, err := b.Create(t.Context(), board.CreateInput{Title: "Lonely item", Spec: "s", SpecFormat: "plan/outline", CreatedBy: board.Actor{Human: "dan"}}); err != nil {
		t.Fatal(err)
	}
	n := len(records(t, dir)) // creating an item writes no record
	ctx, _ := sessionStart(t, dir)
	if n != 0 || !strings.HasPrefix(ctx, "--- ideate work board (historical data) ---\n") || !strings.Contains(ctx, "Lonely item") {
		t.Fatalf("%d records; context:\n%s", n, ctx)
	}
}

func TestSessionStart_StaysWithinBudget(t *testing.T) {
	dir := gt.NewRepo(t)
	rec, b := openStores(t, dir)
	for i := 0; i < 12; i++ {
		if _, err := rec.Append(t.Context(), record.AppendInput{Kind: "finding", Claim: strings.Repeat(fmt.Sprintf("long claim %d ", i), 40),
			VerificationAnchor: strings.Repeat("anchor/", 40), Source: record.Source{CapturePoint: "t", SessionID: "s"}, Content: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 7; i++ {
		if _, err := b.Create(t.Context(), board.CreateInput{Title: strings.Repeat("A very long title ", 10), Spec: "s", SpecFormat: "plan/outline",
			CreatedBy: board.Actor{Human: "dan"}}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, _ := sessionStart(t, dir)
	section := ctx[strings.Index(ctx, "--- ideate work board"):]
	// The digest alone is over the budget, so the board section only counts.
	if !strings.Contains(section, "(7):\n- and 7 more\n") || strings.Contains(section, "A very long title") {
		t.Fatalf("board section over budget:\n%s", section)
	}
	if len([]rune(ctx)) > hooks.MaxContext {
		t.Fatalf("context of %d characters", len([]rune(ctx)))
	}
}

// A subagent starts with what its session would see — the newest records
// whatever their scope, decisions included, and the items ready on the
// board — plus the earlier reports of its own type (the full agent_type:
// another plugin's "worker" is not it). Scoping the whole digest to the
// part after ':' left a git-ideate:worker with its predecessors' reports
// and no decision or board item.
func TestSubagentStart_Scope(t *testing.T) {
	dir := gt.NewRepo(t)
	rec, b := openStores(t, dir)
	add := func(kind, claim, scope string) {
		if _, err := rec.Append(t.Context(), record.AppendInput{Kind: kind, Claim: claim, Scope: scope,
			Source: record.Source{CapturePoint: "t", SessionID: "s"}, Content: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	add("subagent-outcome", "The worker finished the parser item", "git-ideate:worker")
	add("subagent-outcome", "Another plugin's worker reported", "other:worker")
	for i := 0; i < 12; i++ {
		add("finding", fmt.Sprintf("Unrelated finding %d", i), "gitstore")
	}
	add("decision", "Use loose objects, not packs", "gitstore")
	if _, err := b.Create(t.Context(), board.CreateInput{Title: "Write the parser tests", Spec: "s", SpecFormat: "plan",
		CreatedBy: board.Actor{Human: "h"}}); err != nil {
		t.Fatal(err)
	}
	start := func(agentType string) string {
		res := runHook(t, dir, []byte(`{"session_id":"s","hook_event_name":"SubagentStart","agent_id":"a1","agent_type":`+quote(agentType)+`,"cwd":"`+dir+`"}`), "")
		if len(res.notes) != 0 {
			t.Fatal(res.notes)
		}
		return contextOf(t, res.out, "SubagentStart")
	}
	lines := regexp.MustCompile(`(?m)^- \[`)
	ctx := start("git-ideate:worker")
	for _, want := range []string{"Use loose objects, not packs", "Unrelated finding 11",
		`Earlier reports of subagents of type "git-ideate:worker" (1, newest first):`, "The worker finished the parser item",
		"--- ideate work board", "Write the parser tests"} {
		if !strings.Contains(ctx, want) {
			t.Fatalf("worker's context lacks %q:\n%s", want, ctx)
		}
	}
	if strings.Contains(ctx, "Another plugin's worker") || len(lines.FindAllString(ctx, -1)) != hooks.PrimeRecords+1 {
		t.Fatalf("worker's digest:\n%s", ctx)
	}
	for _, at := range []string{"Explore", "", "plugin:nobody-matches"} {
		ctx = start(at)
		if strings.Contains(ctx, "Earlier reports") || len(lines.FindAllString(ctx, -1)) != hooks.PrimeRecords ||
			!strings.Contains(ctx, "Use loose objects, not packs") || !strings.Contains(ctx, "Write the parser tests") {
			t.Fatalf("agent type %q, the session's digest and board expected:\n%s", at, ctx)
		}
	}
	if len(records(t, dir)) != 15 {
		t.Fatal("SubagentStart wrote a record")
	}
}

func TestAgentScope(t *testing.T) {
	for in, want := range map[string]string{"ideate:worker": "ideate:worker", "Explore": "Explore", "": "", " x: y ": "x: y"} {
		if got := hooks.AgentScope(in); got != want {
			t.Errorf("AgentScope(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTaskCompleted_Record(t *testing.T) {
	dir := gt.NewRepo(t)
	tr := writeTranscript(t, dir)
	subject := strings.Repeat("Write the parser tests ", 10)
	desc := strings.Repeat("Cover empty input, unicode and errors. ", 12)
	in := `{"session_id":"s7","transcript_path":"` + tr + `","cwd":"` + dir + `","hook_event_name":"TaskCompleted","task_id":"3",` +
		`"task_subject":"` + subject + `","task_description":"` + desc + `","teammate_name":"alice","team_name":"core","task_title":"WRONG FIELD"}`
	res := runHook(t, dir, []byte(in), "")
	if res.out != "" || len(res.notes) != 0 {
		t.Fatalf("out %q notes %q", res.out, res.notes)
	}
	recs := records(t, dir)
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	r := recs[0]
	cutSubject := []rune(strings.TrimSpace(subject))[:hooks.MaxTaskSubject-1]
	wantClaim := "Task 3 completed in session s7: " + string(cutSubject) + "…"
	if r.Kind != "native-task-completion" || r.Claim != wantClaim || r.Source.TaskID != "3" ||
		r.Source.CapturePoint != "task-completed" || r.Source.SessionID != "s7" || r.VerificationAnchor != tr {
		t.Fatalf("record: %+v\nwant claim %q", r, wantClaim)
	}
	if strings.Contains(r.Claim+r.Content, "WRONG FIELD") || !strings.Contains(r.Content, "Teammate: alice") ||
		!strings.Contains(r.Content, "Team: core") {
		t.Fatalf("content:\n%s", r.Content)
	}
	_, d, _ := strings.Cut(r.Content, "Description: ")
	d, _, _ = strings.Cut(d, "\n")
	if n := len([]rune(d)); n != hooks.MaxTaskDesc || !strings.HasSuffix(d, "…") {
		t.Fatalf("description of %d characters: %q", n, d)
	}
	// Without a subject or id the record still stands.
	runHook(t, dir, []byte(`{"hook_event_name":"TaskCompleted","cwd":"`+dir+`"}`), "")
	if got := records(t, dir)[0].Claim; got != "Task (unknown id) completed in session (unknown session)." {
		t.Fatalf("bare claim %q", got)
	}
}

func TestSubagentStop_LongReportIsCut(t *testing.T) {
	dir := gt.NewRepo(t)
	msg := strings.Repeat("ä line of the report\n", 200)
	in := `{"session_id":"s","hook_event_name":"SubagentStop","agent_id":"a9","agent_type":"general-purpose","cwd":"` + dir +
		`","transcript_path":"/t/main.jsonl","last_assistant_message":` + quote(strings.ReplaceAll(msg, "\n", `\n`)) + `}`
	runHook(t, dir, []byte(in), "")
	r := records(t, dir)[0]
	if n := len([]rune(r.Content)); n != hooks.MaxReport || !strings.HasPrefix(r.Content, "ä line of the report\nä") {
		t.Fatalf("content of %d characters", n)
	}
	if r.VerificationAnchor != "/t/main.jsonl" {
		t.Fatalf("anchor without agent_transcript_path = %q", r.VerificationAnchor)
	}
}

// lapsedClaims creates n items claimed five hours ago (default 4 h lease).
func lapsedClaims(t *testing.T, b *board.Store, n int) []string {
	t.Helper()
	past := time.Now().Add(-5 * time.Hour)
	b.Now = func() time.Time { return past }
	defer func() { b.Now = time.Now }()
	var ids []string
	for i := 0; i < n; i++ {
		out, err := b.Create(t.Context(), board.CreateInput{Title: fmt.Sprintf("Lapsed %d", i), Spec: "s", SpecFormat: "plan/outline", CreatedBy: board.Actor{Human: "dan"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.Claim(t.Context(), out.Item.ID, board.Actor{Human: "alice"}, nil); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, out.Item.ID)
	}
	return ids
}

func TestSessionStart_SweepIsBounded(t *testing.T) {
	dir := gt.NewRepo(t)
	_, b := openStores(t, dir)
	lapsedClaims(t, b, hooks.SweepMax+3)
	ctx, _ := sessionStart(t, dir)
	if !strings.Contains(ctx, fmt.Sprintf("this session's start (%d):", hooks.SweepMax)) || !strings.Contains(ctx, "- and 15 more\n") ||
		!strings.Contains(ctx, fmt.Sprintf("returns at most %d claims", hooks.SweepMax)) ||
		!strings.Contains(ctx, fmt.Sprintf("Items ready to claim, oldest first (%d):", hooks.SweepMax)) {
		t.Fatalf("first session start:\n%s", ctx)
	}
	ctx, _ = sessionStart(t, dir)
	if !strings.Contains(ctx, "this session's start (3):") || strings.Contains(ctx, "returns at most") ||
		!strings.Contains(ctx, fmt.Sprintf("Items ready to claim, oldest first (%d):", hooks.SweepMax+3)) {
		t.Fatalf("second session start:\n%s", ctx)
	}
}

func TestSessionEnd_Sweeps(t *testing.T) {
	dir := gt.NewRepo(t)
	_, b := openStores(t, dir)
	ids := lapsedClaims(t, b, 2)
	res := runHook(t, dir, []byte(`{"session_id":"s","hook_event_name":"SessionEnd","reason":"logout","cwd":"`+dir+`"}`), "")
	if res.out != "" || len(res.notes) != 0 || records(t, dir)[0].Claim != "Session s ended (logout)." {
		t.Fatalf("out %q notes %q", res.out, res.notes)
	}
	for _, id := range ids {
		// Read the ref with git: board reads would expire the claim themselves.
		if got := gt.Git(t, dir, "log", "-1", "--format=%s", board.RefName(id)); !strings.HasPrefix(got, "orphan-recovery: ") {
			t.Fatalf("item %s after SessionEnd: %q", id, got)
		}
	}
}

func TestPrimeWithin_BoundsTheScopeSearch(t *testing.T) {
	dir := gt.NewRepo(t)
	rec, _ := openStores(t, dir)
	for i, scope := range []string{"old-match", "x", "x", "new-match", "x"} {
		if _, err := rec.Append(t.Context(), record.AppendInput{Kind: "finding", Claim: fmt.Sprintf("r%d", i), Scope: scope,
			Source: record.Source{CapturePoint: "t", SessionID: "s"}, Content: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	if d, err := rec.PrimeWithin("old-match", 10, 4); err != nil || d != "" {
		t.Fatalf("a match older than the window was found: %q %v", d, err)
	}
	if d, _ := rec.PrimeWithin("old-match", 10, 5); !strings.Contains(d, "- [finding] r0") {
		t.Fatalf("a match inside the window was missed:\n%s", d)
	}
	d, _ := rec.PrimeWithin("match", 10, 2)
	if !strings.Contains(d, "1 most recent record matching") || !strings.Contains(d, "r3") {
		t.Fatalf("window of 2:\n%s", d)
	}
	full, _ := rec.Prime("match", 10)
	if unbounded, _ := rec.PrimeWithin("match", 10, 0); unbounded != full || !strings.Contains(full, "2 most recent records") {
		t.Fatalf("PrimeWithin(…, 0) differs from Prime:\n%s\n%s", unbounded, full)
	}
}

// An auto-compaction the host abandons after PreCompact (another hook
// blocked it, the summarizer failed) is followed by neither SessionStart
// "compact" nor PostCompact. Its snapshot is not recorded: PreCompact
// keeps it aside, SessionStart "compact" records it, and a later
// PreCompact or the session's end drops an abandoned one.
func TestPreCompact_AbandonedCompactionIsNotRecorded(t *testing.T) {
	dir := gt.NewRepo(t)
	tr := writeTranscript(t, dir)
	hook := func(event, extra string) {
		t.Helper()
		in := `{"session_id":"s1","transcript_path":"` + tr + `","cwd":"` + dir + `","hook_event_name":"` + event + `"` + extra + `}`
		if res := runHook(t, dir, []byte(in), ""); len(res.notes) != 0 {
			t.Fatalf("%s: notes %q", event, res.notes)
		}
	}
	snapshots := func() []*record.Record {
		var out []*record.Record
		for _, r := range records(t, dir) {
			if r.Kind == "compaction-snapshot" {
				out = append(out, r)
			}
		}
		return out
	}
	hook("PreCompact", `,"trigger":"auto","custom_instructions":null`) // abandoned
	if n := len(snapshots()); n != 0 {
		t.Fatalf("%d snapshots right after PreCompact", n)
	}
	hook("PreCompact", `,"trigger":"manual","custom_instructions":"keep the plan"`)
	hook("SessionStart", `,"source":"compact"`)
	got := snapshots()
	if len(got) != 1 || !strings.Contains(got[0].Claim, "hit manual context compaction") ||
		!strings.Contains(got[0].Content, "keep the plan") || got[0].Source.SessionID != "s1" {
		t.Fatalf("after a compaction that happened: %+v", got)
	}
	hook("PreCompact", `,"trigger":"auto","custom_instructions":null`) // abandoned again
	hook("SessionEnd", `,"reason":"other"`)
	hook("SessionStart", `,"source":"compact"`)
	if n := len(snapshots()); n != 1 {
		t.Fatalf("%d snapshots: an abandoned compaction was recorded", n)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".git", "ideate", "compaction-*")); len(left) != 0 {
		t.Fatalf("state left behind: %v", left)
	}
}
