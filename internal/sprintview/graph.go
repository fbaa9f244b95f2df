package sprintview

import "strings"

// Graph is the dependency graph laid out for the sprint page's SVG: one
// column per wave, one box per task, one line per dependency.
type Graph struct {
	Width, Height int
	Boxes         []Box
	Lines         []Line
}

// Box is a task's box.
type Box struct {
	X, Y int
	Task *Task
}

// Line is a dependency, drawn from the box of what is waited for to the
// box of the task that waits.
type Line struct {
	X1, Y1, X2, Y2 int
	From, To       string
}

const (
	colW, boxW, rowH, boxH, pad = 230, 190, 64, 44, 20
)

// Layout places the sprint's tasks; a dependency on a story stands for
// every task of it.
func Layout(sp *Sprint) Graph {
	var g Graph
	at := map[string]Box{}
	rows := 0
	for c, w := range sp.Waves {
		for r, t := range w.Tasks {
			b := Box{X: pad + c*colW, Y: pad + r*rowH, Task: t}
			g.Boxes = append(g.Boxes, b)
			at[t.ID] = b
			if r+1 > rows {
				rows = r + 1
			}
		}
	}
	g.Width = pad*2 + len(sp.Waves)*colW
	g.Height = pad*2 + rows*rowH
	for _, b := range g.Boxes {
		for _, dep := range b.Task.DependsOn {
			for _, from := range g.Boxes {
				id := from.Task.ID
				if id != dep && from.Task.Story != dep || strings.EqualFold(id, b.Task.ID) {
					continue
				}
				g.Lines = append(g.Lines, Line{X1: from.X + boxW, Y1: from.Y + boxH/2, X2: b.X, Y2: b.Y + boxH/2, From: id, To: b.Task.ID})
			}
		}
	}
	return g
}
