package benchutil

import (
	"context"
	"fmt"
	"strings"

	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/record"
)

// CreateItems creates n open board items with spec in repo in-process and
// returns their ids.
func CreateItems(repo string, n int, spec string) []string {
	g, err := gitstore.Open(repo)
	Must(err)
	defer g.Close()
	b := board.Open(g, record.Open(g))
	var ids []string
	for i := 0; i < n; i++ {
		out, err := b.Create(context.Background(), board.CreateInput{Title: fmt.Sprintf("item %d", i), Spec: spec,
			SpecFormat: "plan/outline", CreatedBy: board.Actor{Human: "bench"}})
		Must(err)
		ids = append(ids, out.Item.ID)
	}
	return ids
}

// RecordBody is a record's content in the benchmarks: 300 bytes.
var RecordBody = strings.Repeat("The lockfile CAS held under contention; ", 8)[:300]

// FillRecords appends n records of about 300 bytes to repo in-process
// (maintenance on, as a long-lived writer has it).
func FillRecords(repo string, n int) {
	g, err := gitstore.Open(repo)
	Must(err)
	defer g.Close()
	rec := record.Open(g)
	for i := 0; i < n; i++ {
		_, err := rec.Append(context.Background(), record.AppendInput{Kind: "finding", Claim: fmt.Sprintf("fill %d", i),
			Scope: fmt.Sprintf("bench/scope-%d", i%7), Source: record.Source{CapturePoint: "bench", SessionID: "bench"}, Content: RecordBody})
		Must(err)
	}
}
