package plan

import "sort"

// Unit is one schedulable piece of a sprint: a task (`S1-01/T2`), or a
// story without a tasks.md, with the wave it runs in and what it waits for.
type Unit struct {
	Ref   string    `json:"ref"`   // `S1-01/T2`, or the story id
	Story string    `json:"story"` // its story
	Task  *Task     `json:"-"`     // nil for a story without tasks
	Dir   *StoryDir `json:"-"`
	Wave  int       `json:"wave"` // 0 when the plan puts it in no wave
	// After lists the units it waits for, sorted: its declared
	// dependencies (tasks.md `Depends on:`, the waves' `Starts when`, the
	// dependency graph block) and every unit of the wave before its own
	// (a wave starts only when the wave before it is done).
	After []string `json:"after,omitempty"`
}

// Schedule lists the sprint's units in stories.md order, each with its
// wave and what it waits for. It reads what Check reads and assumes a plan
// that passed it: on a plan with findings it gives what can be resolved.
func Schedule(s *Sprint) []Unit {
	c := &checker{s: s, stories: map[string]*Story{}, dirs: map[string][]*StoryDir{}, tasks: map[string][]*Task{}}
	c.index()
	c.waves()
	c.dependencies()
	after := map[string]map[string]bool{}
	need := func(to, from string) {
		if to == from {
			return
		}
		if after[to] == nil {
			after[to] = map[string]bool{}
		}
		after[to][from] = true
	}
	for _, e := range c.edges {
		need(e.to, e.from)
	}
	byWave := map[int][]string{}
	for u, w := range c.waveOf {
		byWave[w] = append(byWave[w], u)
	}
	var waves []int
	for w := range byWave {
		waves = append(waves, w)
	}
	sort.Ints(waves)
	for i := 1; i < len(waves); i++ {
		for _, to := range byWave[waves[i]] {
			for _, from := range byWave[waves[i-1]] {
				need(to, from)
			}
		}
	}
	var out []Unit
	for _, id := range c.order {
		d := c.dir[id]
		var tasks []*Task
		if d != nil && d.Tasks != nil {
			tasks = d.Tasks.Tasks
		}
		mk := func(ref string, t *Task) Unit {
			u := Unit{Ref: ref, Story: id, Task: t, Dir: d, Wave: c.waveOf[ref]}
			for from := range after[ref] {
				u.After = append(u.After, from)
			}
			sort.Strings(u.After)
			return u
		}
		if len(tasks) == 0 {
			out = append(out, mk(id, nil))
			continue
		}
		for _, t := range tasks {
			out = append(out, mk(taskRef(id, t.Num), t))
		}
	}
	return out
}
