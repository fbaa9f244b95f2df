package main

import (
	"context"
	"fmt"
	"github.com/ideate/git-ideate/internal/corecmd"
	"strings"

	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/plan"
)

// PlanImportCmd imports the sprint's plan into the board.
type PlanImportCmd struct {
	Human  string `help:"Who imports (default: your git user.name)."`
	Agent  string `help:"Through which agent."`
	Tenant string `help:"Tenant of the items created."`
	planFlags
}

type planImportOut struct {
	MessageType string `json:"message_type"`
	*plan.ImportResult
}

// Run loads and imports the sprint and prints what changed.
func (c *PlanImportCmd) Run(ctx context.Context, env *Env) error {
	s, err := loadPlan(ctx, env, c.planFlags)
	if err != nil {
		return err
	}
	g, err := env.Git()
	if err != nil {
		return err
	}
	b, err := env.Board()
	if err != nil {
		return err
	}
	who := board.Actor{Human: c.Human, Agent: c.Agent}
	if strings.TrimSpace(who.Human) == "" {
		who.Human = g.Identity().Name
	}
	res, err := plan.Import(ctx, g, b, s, plan.ImportInput{Actor: who, Tenant: c.Tenant})
	if err != nil {
		return err
	}
	if c.JSON {
		return corecmd.WriteJSON(env.Out, planImportOut{MessageType: "plan_import", ImportResult: res}, true)
	}
	w := corecmd.NewBufWriter(env.Out)
	fmt.Fprintf(w, "sprint %d (tree %s): %d created, %d updated, %d cancelled, %d unchanged\n",
		res.Sprint, shortID(res.Tree), res.Created, res.Updated, res.Cancelled, res.Unchanged)
	for _, it := range res.Items {
		if it.Action == "unchanged" {
			continue
		}
		line := fmt.Sprintf("%-9s %-5s %-10s %s", it.Action, it.Kind, it.Ref, it.ID)
		if len(it.Changed) > 0 {
			line += " (" + strings.Join(it.Changed, ", ") + ")"
		}
		fmt.Fprintln(w, line)
	}
	return w.Flush()
}
