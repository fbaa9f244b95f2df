package plan

import (
	"path"
	"strconv"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
)

// Kind is the role of a planning artifact; it is the front matter `type`.
type Kind string

// Kinds of artifacts (playbook-artifacts.md §2.3, plus intake and
// standards, C1).
const (
	KindIntake     Kind = "intake"
	KindStandards  Kind = "standards"
	KindStories    Kind = "stories"
	KindSprintPlan Kind = "sprint-plan"
	KindTasks      Kind = "tasks"
	KindValidate   Kind = "validate"
	KindPlan       Kind = "plan"
	KindPlanReady  Kind = "plan-ready"
)

// KindOf infers a file's kind from its slash path: a plan.md directly in
// a sprint<N> directory is the sprint plan, any other plan.md a story's
// test plan.
func KindOf(p string) (Kind, bool) {
	switch path.Base(p) {
	case "intake.md":
		return KindIntake, true
	case "standards.md":
		return KindStandards, true
	case "stories.md":
		return KindStories, true
	case "tasks.md":
		return KindTasks, true
	case "validate.md":
		return KindValidate, true
	case "plan-ready.md":
		return KindPlanReady, true
	case "plan.md":
		if sprintDirRe().MatchString(path.Base(path.Dir(p))) {
			return KindSprintPlan, true
		}
		return KindPlan, true
	}
	return "", false
}

// Ident fills the identity keys Normalize adds when a file lacks them.
// Zero fields are not written.
type Ident struct {
	Sprint    int
	Story     string
	Stage     string // sprint plan: "1" or "2"
	FromRedAt string // plan-ready: ISO 8601, UTC, second precision
}

// Normalize returns src in the form the tool writes (C1: read optional,
// write always): YAML front matter first, `type` first and equal to kind,
// the kind's identity keys present (taken from the file, else from id),
// other keys kept in order; LF line endings and one final newline. The
// body is otherwise unchanged. Normalize is idempotent. A front matter
// `type` naming another kind, or a front matter block that is never
// closed, is a SCHEMA error.
func Normalize(kind Kind, src []byte, id Ident) ([]byte, error) {
	d := parseMarkdown("", src)
	for _, p := range d.problems {
		if p.Rule == RuleFrontUnterminated || p.Rule == RuleFrontBadLine {
			return nil, apperr.New(apperr.Schema, "line %d: %s", p.Line, p.Message)
		}
	}
	fm := FrontMatter{}
	if d.hasFront {
		fm = d.front
		for i := range fm.Fields {
			fm.Fields[i].Line = 0
		}
	}
	if t, ok := fm.Get("type"); ok && strings.TrimSpace(t) != string(kind) {
		return nil, apperr.New(apperr.Schema, "front matter type is %q, not %q", t, kind)
	}
	fm.Set("type", string(kind))
	setDefault := func(k, v string) {
		if _, ok := fm.Get(k); !ok && v != "" {
			fm.Set(k, v)
		}
	}
	sprint := ""
	if id.Sprint > 0 {
		sprint = strconv.Itoa(id.Sprint)
	}
	switch kind {
	case KindIntake, KindStandards, KindStories:
		setDefault("sprint", sprint)
	case KindSprintPlan:
		setDefault("sprint", sprint)
		setDefault("stage", id.Stage)
	case KindTasks, KindValidate:
		setDefault("story", id.Story)
	case KindPlan:
		setDefault("story", id.Story)
		setDefault("scope", "tests only")
	case KindPlanReady:
		setDefault("story", id.Story)
		setDefault("from_red_at", id.FromRedAt)
	default:
		return nil, apperr.New(apperr.Schema, "unknown artifact kind %q", kind)
	}
	var b strings.Builder
	b.WriteString(renderFrontMatter(fm))
	body := d.lines[d.body:]
	// Keep exactly one blank line between the front matter and the body.
	for len(body) > 0 && strings.TrimSpace(body[0]) == "" {
		body = body[1:]
	}
	for len(body) > 0 && strings.TrimSpace(body[len(body)-1]) == "" {
		body = body[:len(body)-1]
	}
	if len(body) > 0 {
		b.WriteByte('\n')
		for _, l := range body {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return []byte(b.String()), nil
}
