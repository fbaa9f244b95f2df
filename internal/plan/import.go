package plan

import (
	"context"
	"crypto/sha256"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/gitstore"
)

// The spec formats of the board items Import writes. Their specs are
// `key: value` lines; the first (`ideate-task:` or `ideate-story:`) with
// `sprint:` is the key an import finds an item by.
const (
	TaskFormat  = "ideate/plan-task"
	StoryFormat = "ideate/plan-story"
)

// ImportInput says who imports and into which tenant.
type ImportInput struct {
	Actor  board.Actor
	Tenant string
}

// Imported is what Import did to one unit's item.
type Imported struct {
	Ref    string `json:"ref"`    // `S1-01/T2`, or the story id
	Kind   string `json:"kind"`   // task | story
	ID     string `json:"id"`     // the board item
	Action string `json:"action"` // created | updated | cancelled | unchanged
	// Changed names the fields an update changed.
	Changed []string `json:"changed,omitempty"`
}

// ImportResult is the outcome of one Import, items in plan order (cancelled
// ones last).
type ImportResult struct {
	Sprint    int        `json:"sprint"`
	Tree      string     `json:"tree"`
	Items     []Imported `json:"items"`
	Created   int        `json:"created"`
	Updated   int        `json:"updated"`
	Cancelled int        `json:"cancelled"`
	Unchanged int        `json:"unchanged"`
}

// Import makes the board hold the sprint: one parent item per story, one
// child item per task (its spec pointing at the task's section, with its
// scope, tests and symbols), dependencies as depends_on — a task waits for
// the tasks it declares, the units its wave's `Starts when` names, and the
// wave before its own — so `work ready` offers exactly the tasks whose
// wave may start.
//
// It is idempotent and keyed by the plan's references: a second import of
// the same plan writes nothing; after an edit only the items whose title,
// spec, parent or dependencies changed are updated; an item whose task or
// story left the plan is cancelled (still open or in progress) with a line
// saying why in its spec, never deleted. Done and cancelled items are not
// touched. A plan that fails its check is refused (apperr.GateFail) and
// nothing is written. Imports of one clone are serialized by a lock, so
// two racing imports leave one board.
func Import(ctx context.Context, g *gitstore.Store, b *board.Store, s *Sprint, in ImportInput) (*ImportResult, error) {
	if s == nil {
		return nil, apperr.New(apperr.Schema, "no sprint to import")
	}
	if n, _ := Counts(Check(s)); n > 0 {
		return nil, apperr.New(apperr.GateFail, "sprint %d fails its check with %d errors; run `git ideate plan check` and fix them before importing", s.Number, n)
	}
	if strings.TrimSpace(in.Actor.Human) == "" {
		return nil, apperr.New(apperr.Schema, "an import needs a human actor")
	}
	release, err := g.LockState(ctx, "plan-import.lock")
	if err != nil {
		return nil, err
	}
	defer release()

	have, err := importedItems(ctx, b, s.Number)
	if err != nil {
		return nil, err
	}
	res := &ImportResult{Sprint: s.Number, Tree: s.TreeID}
	idOf := map[string]string{} // ref → item id
	seen := map[string]bool{}
	record := func(ref, kind, id, action string, changed []string) {
		res.Items = append(res.Items, Imported{Ref: ref, Kind: kind, ID: id, Action: action, Changed: changed})
		switch action {
		case "created":
			res.Created++
		case "updated":
			res.Updated++
		case "cancelled":
			res.Cancelled++
		default:
			res.Unchanged++
		}
	}

	// Stories first: they are the tasks' parents.
	if s.Stories != nil {
		for _, st := range s.Stories.Stories {
			if seen[st.ID] {
				continue
			}
			seen[st.ID] = true
			want := desired{id: ItemID(s.Number, st.ID), title: st.ID + " — " + st.Title, spec: storySpec(s, st), format: StoryFormat}
			id, action, changed, err := ensure(ctx, b, in, have[st.ID], want)
			if err != nil {
				return nil, err
			}
			idOf[st.ID] = id
			record(st.ID, "story", id, action, changed)
		}
	}

	units := Schedule(s)
	byRef := map[string]*Unit{}
	for i := range units {
		byRef[units[i].Ref] = &units[i]
	}
	// Tasks in dependency order (the check passed: the graph is acyclic),
	// so each task's dependencies have items before it is written.
	done := map[string]bool{}
	var visit func(u *Unit) error
	visit = func(u *Unit) error {
		if done[u.Ref] {
			return nil
		}
		done[u.Ref] = true
		for _, a := range u.After {
			if d := byRef[a]; d != nil {
				if err := visit(d); err != nil {
					return err
				}
			}
		}
		if u.Task == nil { // a story without tasks: its story item stands for it
			return nil
		}
		want := desired{id: ItemID(s.Number, u.Ref), title: u.Ref + " — " + u.Task.Title, spec: taskSpec(s, u), format: TaskFormat, parent: idOf[u.Story]}
		for _, a := range u.After {
			if id := idOf[a]; id != "" {
				want.deps = append(want.deps, id)
			}
		}
		slices.Sort(want.deps)
		want.deps = slices.Compact(want.deps)
		seen[u.Ref] = true
		id, action, changed, err := ensure(ctx, b, in, have[u.Ref], want)
		if err != nil {
			return err
		}
		idOf[u.Ref] = id
		record(u.Ref, "task", id, action, changed)
		return nil
	}
	for i := range units {
		if err := visit(&units[i]); err != nil {
			return nil, err
		}
	}

	// What the plan no longer holds.
	var gone []string
	for ref := range have {
		if !seen[ref] {
			gone = append(gone, ref)
		}
	}
	slices.Sort(gone)
	for _, ref := range gone {
		it := have[ref]
		kind := "task"
		if it.SpecFormat == StoryFormat {
			kind = "story"
		}
		if it.Status != board.StatusOpen && it.Status != board.StatusInProgress {
			record(ref, kind, it.ID, "unchanged", nil)
			continue
		}
		spec := it.spec + "\nremoved: no longer in sprint " + strconv.Itoa(s.Number) + "'s plan (tree " + s.TreeID + "); cancelled by git ideate plan import"
		if _, err := b.UpdateMeta(ctx, it.ID, board.UpdateInput{ExpectedVersion: it.Version, Spec: &spec, Actor: in.Actor}); err != nil {
			return nil, err
		}
		if _, err := b.Cancel(ctx, it.ID, in.Actor); err != nil {
			return nil, err
		}
		record(ref, kind, it.ID, "cancelled", nil)
	}
	return res, nil
}

// desired is what an item should hold.
type desired struct {
	id, title, spec, format, parent string
	deps                            []string
}

// existing is an item an earlier import wrote.
type existing struct {
	board.Row
	spec string
}

// ensure creates the item, or updates the fields of the existing one that
// differ from want.
func ensure(ctx context.Context, b *board.Store, in ImportInput, have *existing, want desired) (id, action string, changed []string, err error) {
	if have == nil {
		out, err := b.Create(ctx, board.CreateInput{ID: want.id, Title: want.title, Spec: want.spec, SpecFormat: want.format,
			CreatedBy: in.Actor, DependsOn: want.deps, ParentID: want.parent, TenantID: in.Tenant})
		if err != nil {
			return "", "", nil, err
		}
		return out.Item.ID, "created", nil, nil
	}
	if have.Status != board.StatusOpen && have.Status != board.StatusInProgress {
		// Done or cancelled: history, not to be rewritten by a re-import.
		return have.ID, "unchanged", nil, nil
	}
	up := board.UpdateInput{ExpectedVersion: have.Version, Actor: in.Actor}
	if have.Title != want.title {
		up.Title, changed = &want.title, append(changed, "title")
	}
	if have.spec != want.spec {
		up.Spec, changed = &want.spec, append(changed, "spec")
	}
	deps := slices.Clone(have.DependsOn)
	slices.Sort(deps)
	if !slices.Equal(deps, want.deps) {
		d := want.deps
		if d == nil {
			d = []string{}
		}
		up.DependsOn, changed = &d, append(changed, "depends_on")
	}
	parent := ""
	if have.ParentID != nil {
		parent = *have.ParentID
	}
	if parent != want.parent {
		up.ParentID, changed = &want.parent, append(changed, "parent_id")
	}
	if len(changed) == 0 {
		return have.ID, "unchanged", nil, nil
	}
	if _, err := b.UpdateMeta(ctx, have.ID, up); err != nil {
		return "", "", nil, err
	}
	return have.ID, "updated", changed, nil
}

// importedItems finds the items earlier imports of sprint wrote, by their
// key lines.
func importedItems(ctx context.Context, b *board.Store, sprint int) (map[string]*existing, error) {
	out := map[string]*existing{}
	limit := 500
	cursor := ""
	for {
		page, err := b.List(ctx, board.ListRequest{Limit: &limit, Cursor: cursor, IncludeSpec: true, Archived: true})
		if err != nil {
			return nil, err
		}
		for _, r := range page.Items {
			if r.SpecFormat != TaskFormat && r.SpecFormat != StoryFormat || r.Spec == nil {
				continue
			}
			key, n := specKey(*r.Spec)
			if key == "" || n != sprint {
				continue
			}
			live := r.Status == board.StatusOpen || r.Status == board.StatusInProgress
			if prev := out[key]; prev != nil {
				prevLive := prev.Status == board.StatusOpen || prev.Status == board.StatusInProgress
				if prevLive || !live {
					continue // a live item wins over a closed one of the same key
				}
			}
			out[key] = &existing{Row: r, spec: *r.Spec}
		}
		if page.NextCursor == nil {
			return out, nil
		}
		cursor = *page.NextCursor
	}
}

// ItemID is the board id of the item that imports of sprint give the plan
// unit ref (a story id, or `S1-01/T2`): a ULID whose first six characters
// hold the sprint (its time part is not a time: "00" + the sprint in four
// base-32 digits) and whose other twenty are a hash of sprint and ref. Every
// clone derives the same id, so the same plan imported on two clones before
// they sync is one board after the sync (board.Rebase takes two identical
// creations of one id as one).
func ItemID(sprint int, ref string) string {
	const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	sum := sha256.Sum256([]byte("git-ideate plan item\x00" + strconv.Itoa(sprint) + "\x00" + ref))
	var b [26]byte
	b[0], b[1] = '0', '0'
	for i, n := 5, sprint&(1<<20-1); i >= 2; i-- {
		b[i] = crockford[n&31]
		n >>= 5
	}
	// 100 bits of the hash, five at a time.
	var acc uint64
	bits, k := 0, 0
	for i := 6; i < 26; i++ {
		if bits < 5 {
			acc = acc<<8 | uint64(sum[k])
			k++
			bits += 8
		}
		bits -= 5
		b[i] = crockford[(acc>>bits)&31]
	}
	return string(b[:])
}

// SpecKey reads the reference (`S1-01/T2`, or a story id) and the sprint
// an imported item's spec names; "" when it names none.
func SpecKey(spec string) (ref string, sprint int) { return specKey(spec) }

// specKey reads the reference and sprint an imported item's spec names.
func specKey(spec string) (ref string, sprint int) {
	for _, line := range strings.Split(spec, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch k {
		case "ideate-task", "ideate-story":
			if ref == "" {
				ref = v
			}
		case "sprint":
			sprint, _ = strconv.Atoi(v)
		}
	}
	return ref, sprint
}

func storySpec(s *Sprint, st *Story) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ideate-story: %s\nsprint: %d\n", st.ID, s.Number)
	if s.Stories != nil {
		fmt.Fprintf(&b, "section: %s:%d\n", s.Stories.Path, st.Line)
	}
	for _, d := range s.StoryDirs {
		if d.Story == st.ID {
			fmt.Fprintf(&b, "dir: %s/\n", d.Dir)
			break
		}
	}
	if len(st.OwnedFiles) > 0 {
		fmt.Fprintf(&b, "owns: %s\n", strings.Join(st.OwnedFiles, " "))
	}
	return b.String()
}

func taskSpec(s *Sprint, u *Unit) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ideate-task: %s\nsprint: %d\nstory: %s\n", u.Ref, s.Number, u.Story)
	if u.Wave > 0 {
		fmt.Fprintf(&b, "wave: %d\n", u.Wave)
	}
	if u.Dir != nil && u.Dir.Tasks != nil {
		fmt.Fprintf(&b, "section: %s:%d\n", u.Dir.Tasks.Path, u.Task.Line)
	}
	if len(u.Task.Files) > 0 {
		fmt.Fprintf(&b, "scope: %s\n", strings.Join(u.Task.Files, " "))
	}
	if len(u.Task.Symbols) > 0 {
		fmt.Fprintf(&b, "symbols: %s\n", strings.Join(u.Task.Symbols, " "))
	}
	var tests []string
	if u.Dir != nil && u.Dir.TestPlan != nil {
		for _, sec := range u.Dir.TestPlan.Sections {
			if sec.Task != u.Task.Num {
				continue
			}
			for _, d := range sec.Tests {
				t := d.ID
				if d.PassOnRed {
					t += " (pass-on-red)"
				}
				tests = append(tests, t)
			}
		}
	}
	if len(tests) > 0 {
		fmt.Fprintf(&b, "tests: %s\n", strings.Join(tests, ", "))
	} else if u.Task.GateOnly {
		b.WriteString("tests: none (gate-only)\n")
	}
	if u.Dir != nil && u.Dir.TestPlan != nil {
		fmt.Fprintf(&b, "test-plan: %s\n", u.Dir.TestPlan.Path)
	}
	if u.Dir != nil && u.Dir.Validate != nil {
		fmt.Fprintf(&b, "rubric: %s\n", path.Clean(u.Dir.Validate.Path))
	}
	return b.String()
}
