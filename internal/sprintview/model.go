package sprintview

import (
	"context"
	"sort"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/plan"
	"github.com/ideate/git-ideate/internal/record"
	"github.com/ideate/git-ideate/internal/retro"
	"github.com/ideate/git-ideate/internal/revision"
)

// Deps are the library handles the pages read. Plan, Exec and Tasks are
// needed for the sprint pages; Board and Record may be nil (their pages
// then say so). Refs fingerprints refs/ideate/* for the live stream.
type Deps struct {
	Plan     func(ctx context.Context) (*plan.Sprint, error)
	Exec     *execlog.Log
	Revision revision.Deps
	Board    *board.Store
	Record   *record.Store
	Refs     func(ctx context.Context) (string, error)
}

// The states a task is drawn in.
const (
	StateWaiting   = "waiting"
	StateInFlight  = "in-flight"
	StatePass      = "pass"
	StateFail      = "fail"
	StateEscalated = "escalated"
)

// Task is one task of the sprint as the sprint page draws it.
type Task struct {
	ID        string
	Title     string
	Story     string
	Wave      int
	DependsOn []string
	State     string
	Role      string // the role in flight, for StateInFlight
	Attempt   int    // the newest attempt seen in the log
	Verdict   string // the newest verdict, "green PASS"
	Class     string // escalation class or the newest failing reason class
	Passes    int    // GREEN PASS verdicts
	Fails     int    // FAIL verdicts of any phase
}

// Wave is a column of the sprint page.
type Wave struct {
	Number int
	Tasks  []*Task
	Ticked int // tasks with a GREEN PASS
}

// Sprint is what the sprint page shows.
type Sprint struct {
	Number int
	Goal   string
	Waves  []*Wave
	Tasks  map[string]*Task
	Final  string // the newest final verdict, "" when none
}

// roleOf names the worker a phase's entries come from.
func roleOf(phase string) string {
	switch phase {
	case "red":
		return "red-worker"
	case "scaffold":
		return "scaffolder"
	case "green":
		return "green-worker"
	case "structure":
		return "structural-reviewer"
	case "final":
		return "final-gate"
	}
	return phase
}

// LoadSprint reads the plan and the execution log and works out each
// task's state from the log, oldest entry first: a GREEN PASS makes it
// pass, a FAIL verdict fail, an escalation escalated, any other entry of a
// task in flight with that phase's role.
func LoadSprint(ctx context.Context, d Deps) (*Sprint, error) {
	sp, err := d.Plan(ctx)
	if err != nil {
		return nil, err
	}
	out := &Sprint{Number: sp.Number, Tasks: map[string]*Task{}}
	if sp.Plan != nil {
		out.Goal = strings.TrimSpace(sp.Plan.Goal.Text)
	}
	waveOf := map[string]int{} // story or story/Tn → wave
	if sp.Plan != nil {
		for _, w := range sp.Plan.Waves {
			for _, e := range w.Entries {
				if len(e.Tasks) == 0 {
					waveOf[e.Story] = w.Number
				}
				for _, n := range e.Tasks {
					waveOf[e.Story+"/T"+itoa(n)] = w.Number
				}
			}
		}
	}
	waves := map[int]*Wave{}
	for _, sd := range sp.StoryDirs {
		if sd.Tasks == nil {
			continue
		}
		for _, t := range sd.Tasks.Tasks {
			id := sd.Story + "/" + t.ID
			w, ok := waveOf[id]
			if !ok {
				w = waveOf[sd.Story]
			}
			tk := &Task{ID: id, Title: t.Title, Story: sd.Story, Wave: w, DependsOn: t.DependsOn, State: StateWaiting}
			out.Tasks[id] = tk
			if waves[w] == nil {
				waves[w] = &Wave{Number: w}
			}
			waves[w].Tasks = append(waves[w].Tasks, tk)
		}
	}
	var es []execlog.Entry
	if err := d.Exec.Each(ctx, func(e execlog.Entry) bool { es = append(es, e); return true }); err != nil {
		return nil, err
	}
	for i := len(es) - 1; i >= 0; i-- { // Each is newest first
		e := es[i]
		if e.Phase == "final" && e.Event == execlog.EventVerdict && (e.Task == "" || out.Tasks[e.Task] == nil) {
			out.Final = e.Result
		}
		tk := out.Tasks[e.Task]
		if tk == nil {
			continue
		}
		if e.Attempt > tk.Attempt {
			tk.Attempt = e.Attempt
		}
		switch {
		case e.Phase == revision.Phase:
			tk.State, tk.Class = StateEscalated, escalationClass(e)
		case e.Event == execlog.EventVerdict:
			tk.Verdict = e.Phase + " " + e.Result
			switch e.Result {
			case execlog.PASS:
				if e.Phase == "green" {
					tk.Passes++
					tk.State, tk.Class = StatePass, ""
				} else if tk.State != StatePass {
					tk.State, tk.Role = StateInFlight, roleOf(nextPhase(e.Phase))
				}
			case execlog.FAIL, execlog.UNVERIFIABLE:
				if e.Result == execlog.FAIL {
					tk.Fails++
				}
				if tk.State != StateEscalated {
					tk.State = StateFail
					if len(e.Reasons) > 0 {
						tk.Class = e.Reasons[0].Class
					}
				}
			}
		case e.Phase != "" && tk.State != StatePass && tk.State != StateEscalated:
			tk.State, tk.Role = StateInFlight, roleOf(e.Phase)
		}
	}
	for _, w := range waves {
		for _, t := range w.Tasks {
			if t.State == StatePass {
				w.Ticked++
			}
		}
		out.Waves = append(out.Waves, w)
	}
	sort.Slice(out.Waves, func(i, j int) bool { return out.Waves[i].Number < out.Waves[j].Number })
	return out, nil
}

// nextPhase is the phase a task waits for after a PASS of phase p.
func nextPhase(p string) string {
	switch p {
	case "red":
		return "scaffold"
	case "scaffold":
		return "green"
	}
	return p
}

// escalationClass is the class an escalation entry carries in its event.
func escalationClass(e execlog.Entry) string {
	if e.Event == "" {
		return "escalated"
	}
	return e.Event
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// TaskPage is one task's history.
type TaskPage struct {
	Task     *Task
	Attempts []revision.AttemptFiles
	Verdicts []execlog.Entry // oldest first
}

// LoadTask reads one task's attempts and verdicts.
func LoadTask(ctx context.Context, d Deps, id string) (*TaskPage, error) {
	sp, err := LoadSprint(ctx, d)
	if err != nil {
		return nil, err
	}
	tk := sp.Tasks[id]
	if tk == nil {
		return nil, nil
	}
	page := &TaskPage{Task: tk}
	if d.Revision.Tasks != nil {
		// A task of the plan that was never started has no attempts yet.
		if page.Attempts, err = d.Revision.Show(ctx, id); err != nil && !apperr.Is(err, apperr.NotFound) {
			return nil, err
		}
	}
	es, err := d.Exec.List(ctx, execlog.Filter{Task: id})
	if err != nil {
		return nil, err
	}
	for i := len(es) - 1; i >= 0; i-- {
		page.Verdicts = append(page.Verdicts, es[i])
	}
	return page, nil
}

// Chart is the retrospective's counts, by reason class and by wave.
type Chart struct {
	Report  retro.Report
	ByClass []Bar
	ByWave  []Bar
}

// Bar is one bar of a chart; Width is its share of the widest, in percent.
type Bar struct {
	Label string
	Count int
	Width int
}

// LoadRetro groups the trail since the last planning as `retro` does, and
// counts the reason classes of FAIL verdicts and the escalations by class,
// and both by wave, over the whole log.
func LoadRetro(ctx context.Context, d Deps) (*Chart, error) {
	// The sync-conflict records are looked for among the newest 2,000, not
	// retro's 20,000: a page must stay small beside a long record.
	rep, err := retro.Load(ctx, retro.Sources{Exec: d.Exec, Record: d.Record, RecordScan: 2000}, retro.LastPlanning)
	if err != nil {
		return nil, err
	}
	c := &Chart{Report: rep}
	sp, err := LoadSprint(ctx, d)
	if err != nil {
		return nil, err
	}
	byClass, byWave := map[string]int{}, map[string]int{}
	err = d.Exec.Each(ctx, func(e execlog.Entry) bool {
		switch {
		case e.Phase == revision.Phase:
			byClass["escalated: "+escalationClass(e)]++
		case e.Event == execlog.EventVerdict && e.Result == execlog.FAIL:
			for _, r := range e.Reasons {
				byClass[r.Class]++
			}
		default:
			return true
		}
		w := e.Wave
		if tk := sp.Tasks[e.Task]; tk != nil {
			w = tk.Wave // the plan's wave, also for entries logged without one
		}
		byWave["wave "+itoa(w)]++
		return true
	})
	if err != nil {
		return nil, err
	}
	c.ByClass, c.ByWave = bars(byClass), bars(byWave)
	return c, nil
}

func bars(m map[string]int) []Bar {
	max := 0
	out := make([]Bar, 0, len(m))
	for k, v := range m {
		out = append(out, Bar{Label: k, Count: v})
		if v > max {
			max = v
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Label < out[j].Label
	})
	for i := range out {
		out[i].Width = out[i].Count * 100 / max
	}
	return out
}
