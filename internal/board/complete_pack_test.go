package board_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ideate/git-ideate/internal/board"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/record"
)

func packFiles(t *testing.T, dir string) map[string]bool {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, ".git", "objects", "pack"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, e := range ents {
		out[e.Name()] = true
	}
	return out
}

// A completion writes two commits (the item's and its work-completion
// record's) as one pack: four new files, not six. The pack holds both
// commits, keeps no .keep once the call returned, and git reads both refs.
func TestComplete_ItemAndRecordInOnePack(t *testing.T) {
	t.Setenv("GIT_IDEATE_NO_MAINTENANCE", "1")
	b, rec, dir, _ := newBoard(t)
	it := create(t, b, "One pack")
	if _, err := b.Claim(t.Context(), it.ID, actor("dan"), nil); err != nil {
		t.Fatal(err)
	}
	before := packFiles(t, dir)
	if _, err := b.Complete(t.Context(), it.ID, 1, "done"); err != nil {
		t.Fatal(err)
	}
	var added []string
	for name := range packFiles(t, dir) {
		if !before[name] {
			added = append(added, name)
		}
	}
	var packs []string
	for _, name := range added {
		if strings.HasSuffix(name, ".keep") {
			t.Errorf("%s left behind", name)
		}
		if strings.HasSuffix(name, ".pack") {
			packs = append(packs, name)
		}
	}
	if len(packs) != 1 {
		t.Fatalf("a completion wrote %d packs (%v), want 1", len(packs), added)
	}
	idx, err := os.ReadFile(filepath.Join(dir, ".git", "objects", "pack", strings.TrimSuffix(packs[0], ".pack")+".idx"))
	if err != nil {
		t.Fatal(err)
	}
	inPack := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(gt.GitStdin(t, dir, string(idx), "show-index")), "\n") {
		if f := strings.Fields(line); len(f) >= 2 {
			inPack[f[1]] = true
		}
	}
	for _, ref := range []string{board.RefName(it.ID), record.RefName} {
		h := gt.Git(t, dir, "rev-parse", ref)
		if !inPack[h] {
			t.Errorf("%s's commit %s is not in the completion's pack", ref, h)
		}
	}
	p, err := rec.ReadPage(record.PageRequest{Filter: record.Filter{Scope: it.ID}})
	if err != nil || len(p.Rows) != 1 || p.Rows[0].Kind != "work-completion" {
		t.Fatalf("completion records: %+v %v", p, err)
	}
	gt.Fsck(t, dir)
}

// When another append moves the record ref between the item's commit and
// the record's, the staged record is appended afresh with the same id: one
// work-completion record, and the other append kept.
func TestComplete_RecordRefMovedMeanwhile(t *testing.T) {
	b, rec, dir, _ := newBoard(t)
	const n = 12
	var items []*board.Item
	for i := range n {
		it := create(t, b, "racing "+string(rune('a'+i)))
		if _, err := b.Claim(t.Context(), it.ID, actor("dan"), nil); err != nil {
			t.Fatal(err)
		}
		items = append(items, it)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	errs := make(chan error, 2*n)
	go func() {
		defer wg.Done()
		for _, it := range items {
			if _, err := b.Complete(context.Background(), it.ID, 1, "done"); err != nil {
				errs <- err
			}
		}
	}()
	go func() {
		defer wg.Done()
		for i := range 4 * n {
			if _, err := rec.Append(context.Background(), record.AppendInput{Kind: "note", Claim: "beside " + string(rune('a'+i%26)), Content: "x"}); err != nil {
				errs <- err
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	p, err := rec.ReadPage(record.PageRequest{Limit: ptr(200)})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, r := range p.Rows {
		kinds[r.Kind]++
	}
	if kinds["work-completion"] != n || kinds["note"] != 4*n {
		t.Fatalf("records: %v, want %d work-completion and %d note", kinds, n, 4*n)
	}
	gt.Fsck(t, dir)
}
