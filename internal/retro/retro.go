// Package retro is the retrospective's input: the failure and feedback
// trail since the last planning — failed and unverifiable verdicts by
// reason class, escalations, revision feedback, sync conflicts — grouped
// deterministically into candidate patterns with counts and evidence
// links, the recurring ones (seen at least twice) first. The archivist
// agent judges the patterns; it does not re-read the whole trail.
//
// # Grouping
//
// Every trail entry becomes one or more events, each keyed by its kind
// (fail, unverifiable, escalation, feedback, sync-conflict), phase,
// class and subject. A verdict's reason yields one event per path it
// names and per test the verdict saw fail (a test's outcome is its class
// when the verdict gave no reason); a path's trailing ":<line>" is dropped,
// so the same finding on a moved line is the same pattern. An entry never
// counts twice for one key. Patterns are ordered by count (descending),
// then by key; evidence lists the entries oldest first. The same trail
// always gives the same report.
//
// # Since
//
// "last-planning" starts after the newest planning→execution gate PASS
// (phase "plan") on the execution log; a date or time starts there; ""
// takes everything.
package retro

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/record"
	"github.com/ideate/git-ideate/internal/textfmt"
)

// Kinds of events.
const (
	KindFail         = "fail"
	KindUnverifiable = "unverifiable"
	KindEscalation   = "escalation"
	KindFeedback     = "feedback"
	KindSyncConflict = "sync-conflict"
)

// LastPlanning is the Since value that starts after the newest plan PASS.
const LastPlanning = "last-planning"

// PhasePlan is the exec-log phase of the planning→execution gate.
const PhasePlan = "plan"

// Event is one thing the trail says went wrong, with its evidence.
type Event struct {
	Evidence string // "exec:<id>" or "record:<id>"
	At       string // ISO 8601 UTC
	Kind     string
	Phase    string
	Class    string
	Subject  string // a test id or a path; "" when none
	Task     string
}

// Key is what events of one pattern share.
type Key struct {
	Kind    string `json:"kind"`
	Phase   string `json:"phase"`
	Class   string `json:"class"`
	Subject string `json:"subject"`
}

func (k Key) less(o Key) bool {
	if k.Kind != o.Kind {
		return k.Kind < o.Kind
	}
	if k.Phase != o.Phase {
		return k.Phase < o.Phase
	}
	if k.Class != o.Class {
		return k.Class < o.Class
	}
	return k.Subject < o.Subject
}

// Pattern is a group of events with one key.
type Pattern struct {
	Key
	Count    int      `json:"count"`
	Tasks    []string `json:"tasks"`    // sorted, distinct
	Evidence []string `json:"evidence"` // oldest first
	First    string   `json:"first"`
	Last     string   `json:"last"`
}

// Report is the grouped trail.
type Report struct {
	Since     string         `json:"since"`      // the instant the trail starts after ("" for all)
	SinceNote string         `json:"since_note"` // what it is
	Entries   int            `json:"entries"`    // trail entries read
	Events    int            `json:"events"`
	Counts    map[string]int `json:"counts"` // events by kind
	Recurring []Pattern      `json:"recurring"`
	OneOffs   []Pattern      `json:"one_offs"`
}

var lineSuffix = textfmt.Regexp(`:\d+(?::\d+)?$`)

func subjectOf(p string) string { return lineSuffix().ReplaceAllString(p, "") }

// FromExec turns execution-log entries into events: verdicts that are not
// PASS, escalations (phase "escalate"), feedback (phase or event
// "feedback"). Everything else is no event.
func FromExec(es []execlog.Entry) []Event {
	var out []Event
	for _, e := range es {
		ev := Event{Evidence: "exec:" + e.ID, At: e.At, Phase: e.Phase, Task: e.Task}
		switch {
		case e.Event == execlog.EventVerdict && e.Result == execlog.FAIL:
			ev.Kind = KindFail
		case e.Event == execlog.EventVerdict && e.Result == execlog.UNVERIFIABLE:
			ev.Kind = KindUnverifiable
		case e.Phase == "escalate":
			ev.Kind = KindEscalation
		case e.Phase == "feedback" || e.Event == "feedback":
			ev.Kind = KindFeedback
		default:
			continue
		}
		if ev.Kind == KindEscalation {
			// One pattern per escalation: its class, and what caused it
			// (the cause and the failed verdict's reason classes). Its
			// other fields (decision, graph, evidence) are no pattern.
			cause, classes := "", ""
			for _, r := range e.Reasons {
				switch r.Class {
				case "cause":
					cause = r.Detail
				case "reason_classes":
					classes = r.Detail
				}
			}
			ev.Class = e.Event
			ev.Subject = strings.TrimSpace("cause " + cause + " " + classes)
			if cause == "" && classes == "" {
				ev.Subject = ""
			}
			out = append(out, ev)
			continue
		}
		var failing []string
		for _, t := range e.Tests {
			if t.Outcome != "PASS" && t.Outcome != "SKIP" && t.Outcome != "" {
				failing = append(failing, t.ID)
			}
		}
		seen := map[[2]string]bool{}
		add := func(class, subject string) {
			k := [2]string{class, subject}
			if seen[k] {
				return
			}
			seen[k] = true
			x := ev
			x.Class, x.Subject = class, subject
			out = append(out, x)
		}
		reasons := e.Reasons
		if len(reasons) == 0 {
			if ev.Kind == KindEscalation || ev.Kind == KindFeedback {
				// The event word is the escalation's class when no reason says it.
				reasons = []execlog.Reason{{Class: e.Event, Paths: e.Paths}}
			}
		}
		if len(reasons) == 0 {
			for _, t := range e.Tests {
				if t.Outcome != "PASS" && t.Outcome != "SKIP" && t.Outcome != "" {
					add(t.Outcome, t.ID)
				}
			}
			if len(seen) == 0 {
				add("", "")
			}
			continue
		}
		for _, r := range reasons {
			n := len(seen)
			for _, p := range r.Paths {
				add(r.Class, subjectOf(p))
			}
			for _, t := range failing {
				add(r.Class, t)
			}
			if len(seen) == n {
				add(r.Class, "")
			}
		}
	}
	return out
}

var planIDRe = textfmt.Regexp(`\(plan PASS (\S+),`)

var conflictRe = textfmt.Regexp(`^Local (\S+) of item (\S+) was not accepted`)

// FromRecords turns sync-conflict records into events (class: the local
// transition that was dropped; subject: the board item).
func FromRecords(rs []*record.Record) []Event {
	var out []Event
	for _, r := range rs {
		if r.Kind != "sync-conflict" {
			continue
		}
		ev := Event{Evidence: "record:" + r.ID, At: textfmt.Timestamp(record.IDTime(r.ID)), Kind: KindSyncConflict, Phase: "sync", Subject: r.Scope}
		if m := conflictRe().FindStringSubmatch(r.Claim); m != nil {
			ev.Class = m[1]
			if ev.Subject == "" {
				ev.Subject = "board/" + m[2]
			}
		}
		out = append(out, ev)
	}
	return out
}

// Group folds events into patterns (see the package doc, "Grouping").
func Group(events []Event) Report {
	rep := Report{Counts: map[string]int{}}
	idx := map[Key]int{}
	var ps []Pattern
	type seenKey struct {
		k   Key
		evi string
	}
	seen := map[seenKey]bool{}
	sorted := append([]Event(nil), events...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].At != sorted[j].At {
			return sorted[i].At < sorted[j].At
		}
		return sorted[i].Evidence < sorted[j].Evidence
	})
	tasks := map[Key]map[string]bool{}
	for _, e := range sorted {
		k := Key{Kind: e.Kind, Phase: e.Phase, Class: e.Class, Subject: e.Subject}
		if seen[seenKey{k, e.Evidence}] {
			continue
		}
		seen[seenKey{k, e.Evidence}] = true
		rep.Events++
		rep.Counts[e.Kind]++
		i, ok := idx[k]
		if !ok {
			i = len(ps)
			idx[k] = i
			ps = append(ps, Pattern{Key: k, First: e.At})
			tasks[k] = map[string]bool{}
		}
		p := &ps[i]
		p.Count++
		p.Last = e.At
		p.Evidence = append(p.Evidence, e.Evidence)
		if e.Task != "" && !tasks[k][e.Task] {
			tasks[k][e.Task] = true
			p.Tasks = append(p.Tasks, e.Task)
		}
	}
	for i := range ps {
		sort.Strings(ps[i].Tasks)
	}
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].Count != ps[j].Count {
			return ps[i].Count > ps[j].Count
		}
		return ps[i].Key.less(ps[j].Key)
	})
	rep.Recurring, rep.OneOffs = []Pattern{}, []Pattern{}
	for _, p := range ps {
		if p.Count >= 2 {
			rep.Recurring = append(rep.Recurring, p)
		} else {
			rep.OneOffs = append(rep.OneOffs, p)
		}
	}
	return rep
}

// Since resolves a since argument against the log: LastPlanning, a date
// (YYYY-MM-DD), an RFC 3339 time, or "" (everything). The instant is
// zero for everything; note says what it is.
func Since(ctx context.Context, log *execlog.Log, since string) (at time.Time, note string, err error) {
	switch s := strings.TrimSpace(since); s {
	case "":
		return time.Time{}, "the whole trail", nil
	case LastPlanning:
		es, err := log.List(ctx, execlog.Filter{Phase: PhasePlan, Event: execlog.EventVerdict, Result: execlog.PASS, Limit: 1})
		if err != nil {
			return time.Time{}, "", err
		}
		if len(es) == 0 {
			return time.Time{}, "the whole trail (no plan has passed the planning gate yet)", nil
		}
		t, err := time.Parse(time.RFC3339Nano, es[0].At)
		if err != nil {
			return time.Time{}, "", apperr.New(apperr.Schema, "the plan verdict %s has no readable time", es[0].ID)
		}
		// The note names the entry; Load cuts by its id (two entries may
		// share a millisecond, never an id).
		return t, fmt.Sprintf("since the last planning (plan PASS %s, sprint %d)", es[0].ID, es[0].Sprint), nil
	default:
		if t, err := time.Parse("2006-01-02", s); err == nil {
			return t, "since " + s, nil
		}
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return t, "since " + s, nil
		}
		return time.Time{}, "", apperr.New(apperr.Schema, "--since %q is not %s, a date (YYYY-MM-DD) or an RFC 3339 time", s, LastPlanning)
	}
}

// Sources are where Load reads the trail.
type Sources struct {
	Exec   *execlog.Log
	Record *record.Store // nil: no sync conflicts
	// RecordScan bounds how many of the newest records are looked at for
	// sync conflicts when the trail has no start; 0: 20000.
	RecordScan int
}

// Load reads the trail after since (see Since) and groups it.
func Load(ctx context.Context, src Sources, since string) (Report, error) {
	at, note, err := Since(ctx, src.Exec, since)
	if err != nil {
		return Report{}, err
	}
	cut := ""
	if !at.IsZero() {
		cut = textfmt.Timestamp(at)
	}
	cutID := ""
	if m := planIDRe().FindStringSubmatch(note); m != nil {
		cutID = m[1]
	}
	var es []execlog.Entry
	// Newest first: stop at the cut.
	err = src.Exec.Each(ctx, func(e execlog.Entry) bool {
		if cutID != "" && e.ID <= cutID || cutID == "" && cut != "" && e.At <= cut {
			return false
		}
		es = append(es, e)
		return true
	})
	if err != nil {
		return Report{}, err
	}
	events := FromExec(es)
	entries := len(es)
	if src.Record != nil {
		rs, err := recentRecords(src.Record, at, src.RecordScan)
		if err != nil {
			return Report{}, err
		}
		entries += len(rs)
		events = append(events, FromRecords(rs)...)
	}
	rep := Group(events)
	rep.Entries = entries
	rep.Since, rep.SinceNote = cut, note
	return rep, nil
}

// recentRecords returns the sync-conflict records newer than at (all
// when zero, up to scan records).
func recentRecords(s *record.Store, at time.Time, scan int) ([]*record.Record, error) {
	if scan <= 0 {
		scan = 20000
	}
	sn, err := s.Snapshot()
	if err != nil {
		return nil, err
	}
	var out []*record.Record
	before, seen := "", 0
	for seen < scan {
		page, more, err := sn.Select(record.Filter{}, before, 500)
		if err != nil {
			return nil, err
		}
		for _, r := range page {
			seen++
			if !at.IsZero() && !record.IDTime(r.ID).After(at) {
				return out, nil
			}
			if r.Kind == "sync-conflict" {
				out = append(out, r)
			}
		}
		if !more || len(page) == 0 {
			break
		}
		before = page[len(page)-1].ID
	}
	return out, nil
}
